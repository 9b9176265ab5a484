package store

import (
	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/ownership"
)

// sideManaged returns obj's field ownership (Meta.Managed) on one side of
// the object, decoded: the spec side (.metadata... and .spec... paths) or
// the status side (.status... and .conditions[type="..."] paths). Entries
// that do not decode against obj are left out (see Meta.Managed). obj should
// be as read from the store: ownership is encoded relative to the stored
// fields.
func (s *Store[S, T]) sideManaged(obj *Object[S, T], side string) (ownership.Managed, error) {
	var enc []byte
	var err error
	if side == statusSide {
		enc, err = encodeJSON("status", obj.Status)
	} else {
		enc, err = encodeJSON("spec", obj.Spec)
	}
	if err != nil {
		return nil, err
	}
	raw := &rawObject{Meta: obj.Meta, Conditions: obj.Conditions}
	if side == statusSide {
		raw.Status = enc
	} else {
		raw.Spec = enc
	}
	tree, err := sideTree(raw, side)
	if err != nil {
		return nil, err
	}
	return s.schemas.decodeManaged(&raw.Meta, side, tree), nil
}

// FieldChanges reports the fields that differ between two states of an
// object, in the path space of Meta.Managed (.metadata.labels.app,
// .spec.replicas, .conditions[type="Ready"].status, ...), split by whether
// manager owns them, as ownership.Attribute decides from the object's
// ownership before and after the change. A change of DeletionRequested is
// reported as .metadata.deletionRequested, owned by nobody. Bookkeeping
// (Generation, LastWrite, Managed, Revision) is not a change.
//
// If the ownership of a side of the object cannot be read, every change on
// that side counts as foreign, which errs towards acting on the change.
//
// Cost: the differences are found on the typed values; the ownership of a
// side (spec or status) is decoded only when that side changed and manager
// has an entry on it before or after the change. Without one, manager owns
// none of the side's fields and its changes are foreign without a decode
// (the usual case for a controller judging a user's spec write).
func (s *Store[S, T]) FieldChanges(old, new *Object[S, T], manager string) (owned, foreign []diff.Path) {
	specChanges := diff.Diff(specView[S]{metaViewOf(&old.Meta), old.Spec}, specView[S]{metaViewOf(&new.Meta), new.Spec},
		specDiffOptions...).Paths()
	statusChanges := diff.Diff(statusView[T]{old.Status, nonNil(old.Conditions)}, statusView[T]{new.Status, nonNil(new.Conditions)},
		statusDiffOptions...).Paths()
	if old.Meta.DeletionRequested != new.Meta.DeletionRequested {
		foreign = append(foreign, deletionRequestedPath)
	}
	for _, side := range [2]struct {
		name    string
		changed []diff.Path
	}{{specSide, specChanges}, {statusSide, statusChanges}} {
		if len(side.changed) == 0 {
			continue
		}
		if !hasEntry(&old.Meta, side.name, manager) && !hasEntry(&new.Meta, side.name, manager) {
			foreign = append(foreign, side.changed...) // Attribute needs an entry of manager's to own a path
			continue
		}
		before, errOld := s.sideManaged(old, side.name)
		after, errNew := s.sideManaged(new, side.name)
		if errOld != nil || errNew != nil {
			foreign = append(foreign, side.changed...)
			continue
		}
		o, f := ownership.Attribute(manager, side.changed, before, after)
		owned, foreign = append(owned, o...), append(foreign, f...)
	}
	return owned, foreign
}

// hasEntry reports whether meta records fields of manager on side.
func hasEntry(meta *Meta, side, manager string) bool {
	for _, e := range meta.Managed {
		if e.Subresource == side && e.Manager == manager {
			return true
		}
	}
	return false
}

var (
	finalizersPath        = diff.MustParsePath(".metadata.finalizers")
	conditionsPath        = diff.MustParsePath(".conditions")
	deletionRequestedPath = diff.MustParsePath(".metadata.deletionRequested")

	// The options of FieldChanges' two diffs, built once.
	specDiffOptions   = []diff.Option{diff.ListSets(finalizersPath), diff.EquateEmpty()}
	statusDiffOptions = []diff.Option{diff.ListKeys(conditionsPath, "type"), diff.EquateEmpty()}
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
		v.Labels = noStrings
	}
	if v.Annotations == nil {
		v.Annotations = noStrings
	}
	return v
}

// noStrings is the empty map metaViewOf shows for an absent one. It is
// shared and only read (diff.Diff does not modify what it compares).
var noStrings = map[string]string{}

func nonNil[E any](s []E) []E {
	if s == nil {
		return []E{}
	}
	return s
}
