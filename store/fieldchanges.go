package store

import (
	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/ownership"
)

// managedOf returns obj's field ownership (Meta.Managed) decoded, for each
// side of the object: the spec side (.metadata... and .spec... paths) and the
// status side (.status... and .conditions[type="..."] paths). Entries that do
// not decode against obj are left out (see Meta.Managed). obj should be as
// read from the store: ownership is encoded relative to the stored fields.
func (s *Store[S, T]) managedOf(obj *Object[S, T]) (spec, status ownership.Managed, err error) {
	raw, err := rawFromObject(obj)
	if err != nil {
		return nil, nil, err
	}
	specT, err := specTree(raw)
	if err != nil {
		return nil, nil, err
	}
	statusT, err := statusTree(raw)
	if err != nil {
		return nil, nil, err
	}
	return s.schemas.decodeManaged(&raw.Meta, specSide, specT), s.schemas.decodeManaged(&raw.Meta, statusSide, statusT), nil
}

// FieldChanges reports the fields that differ between two states of an
// object, in the path space of Meta.Managed (.metadata.labels.app,
// .spec.replicas, .conditions[type="Ready"].status, ...), split by whether
// manager owns them, as ownership.Attribute decides from the object's
// ownership before and after the change. A change of DeletionRequested is
// reported as .metadata.deletionRequested, owned by nobody. Bookkeeping
// (Generation, LastWrite, Managed, Revision) is not a change.
//
// If an object's ownership cannot be read, every change counts as foreign,
// which errs towards acting on the change.
func (s *Store[S, T]) FieldChanges(old, new *Object[S, T], manager string) (owned, foreign []diff.Path) {
	specChanges := diff.Diff(specView[S]{metaViewOf(&old.Meta), old.Spec}, specView[S]{metaViewOf(&new.Meta), new.Spec},
		diff.ListSets(finalizersPath), diff.EquateEmpty()).Paths()
	statusChanges := diff.Diff(statusView[T]{old.Status, nonNil(old.Conditions)}, statusView[T]{new.Status, nonNil(new.Conditions)},
		diff.ListKeys(conditionsPath, "type"), diff.EquateEmpty()).Paths()
	if old.Meta.DeletionRequested != new.Meta.DeletionRequested {
		foreign = append(foreign, deletionRequestedPath)
	}
	if len(specChanges)+len(statusChanges) == 0 {
		return owned, foreign
	}
	oldSpec, oldStatus, errOld := s.managedOf(old)
	newSpec, newStatus, errNew := s.managedOf(new)
	if errOld != nil || errNew != nil {
		return owned, append(append(foreign, specChanges...), statusChanges...)
	}
	specOwned, specForeign := ownership.Attribute(manager, specChanges, oldSpec, newSpec)
	statusOwned, statusForeign := ownership.Attribute(manager, statusChanges, oldStatus, newStatus)
	return append(specOwned, statusOwned...), append(append(foreign, specForeign...), statusForeign...)
}

var (
	finalizersPath        = diff.MustParsePath(".metadata.finalizers")
	conditionsPath        = diff.MustParsePath(".conditions")
	deletionRequestedPath = diff.MustParsePath(".metadata.deletionRequested")
)

// The views FieldChanges diffs: typed, so that the Spec and Status struct
// tags key their lists, and named as in the ownership trees.
type (
	specView[S any] struct {
		Metadata metaView `json:"metadata"`
		Spec     S        `json:"spec"`
	}
	metaView struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		Owners      []OwnerRef        `json:"owners"`
		Finalizers  []string          `json:"finalizers"`
	}
	statusView[T any] struct {
		Status     T           `json:"status"`
		Conditions []Condition `json:"conditions"`
	}
)

// metaViewOf and nonNil make absent collections empty, so that a first label
// or condition is reported as that item rather than as a whole new map or list.
func metaViewOf(m *Meta) metaView {
	v := metaView{Labels: m.Labels, Annotations: m.Annotations, Owners: nonNil(m.Owners), Finalizers: nonNil(m.Finalizers)}
	if v.Labels == nil {
		v.Labels = map[string]string{}
	}
	if v.Annotations == nil {
		v.Annotations = map[string]string{}
	}
	return v
}

func nonNil[E any](s []E) []E {
	if s == nil {
		return []E{}
	}
	return s
}

// rawFromObject encodes the Spec and Status of a typed object as stored.
func rawFromObject[S, T any](obj *Object[S, T]) (*rawObject, error) {
	spec, err := encodeJSON("spec", obj.Spec)
	if err != nil {
		return nil, err
	}
	status, err := encodeJSON("status", obj.Status)
	if err != nil {
		return nil, err
	}
	return &rawObject{Meta: obj.Meta, Spec: spec, Status: status, Conditions: obj.Conditions}, nil
}
