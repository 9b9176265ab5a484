package store

import (
	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/ownership"
)

// Ownership returns obj's field ownership (Meta.Managed) decoded, for each
// side of the object: the spec side (.metadata... and .spec... paths) and the
// status side (.status... and .conditions[type="..."] paths). Entries that do
// not decode against obj are left out (see Meta.Managed). obj should be as
// read from the store: ownership is encoded relative to the stored fields.
func (s *Store[S, T]) Ownership(obj *Object[S, T]) (spec, status ownership.Managed, err error) {
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
// object, as diff.Path strings in the path space of Meta.Managed
// (.metadata.labels.app, .spec.replicas, .conditions[type="Ready"].status,
// ...), split by whether manager owns them: a changed field is owned when
// manager's entries in new own it or a field above it, a removed (or
// zeroed) one when nobody owns it in new and manager did in old, and an added
// or removed subtree when manager owns fields under it and no other manager
// does. A change of DeletionRequested is
// reported as .metadata.deletionRequested, owned by nobody. Bookkeeping
// (Generation, LastWrite, Managed, Revision) is not a change.
//
// Its signature is that of reconcile.ChangeFunc: pass st.FieldChanges to
// reconcile.WithChanges to judge own writes and oscillation field by field.
// If an object's ownership cannot be read, every change counts as foreign,
// which errs towards reconciling.
func (s *Store[S, T]) FieldChanges(old, new *Object[S, T], manager string) (owned, foreign []string) {
	var changes []diff.Change
	specChanges := diff.Diff(specView[S]{metaViewOf(&old.Meta), old.Spec}, specView[S]{metaViewOf(&new.Meta), new.Spec},
		diff.ListSets(diff.MustParsePath(".metadata.finalizers")), diff.EquateEmpty())
	statusChanges := diff.Diff(statusView[T]{old.Status, nonNil(old.Conditions)}, statusView[T]{new.Status, nonNil(new.Conditions)},
		diff.ListKeys(diff.MustParsePath(".conditions"), "type"), diff.EquateEmpty())
	changes = append(append(changes, specChanges...), statusChanges...)
	if old.Meta.DeletionRequested != new.Meta.DeletionRequested {
		foreign = append(foreign, ".metadata.deletionRequested")
	}
	if len(changes) == 0 {
		return owned, foreign
	}
	oldSpec, oldStatus, errOld := s.Ownership(old)
	newSpec, newStatus, errNew := s.Ownership(new)
	for i, c := range changes {
		mine := false
		if errOld == nil && errNew == nil {
			before, after := oldSpec, newSpec
			if i >= len(specChanges) {
				before, after = oldStatus, newStatus
			}
			mine = ownsChange(manager, c, before, after)
		}
		if mine {
			owned = append(owned, c.Path.String())
		} else {
			foreign = append(foreign, c.Path.String())
		}
	}
	return owned, foreign
}

// ownsChange reports whether manager owns the field of a change: in after,
// or, when nobody owns it after the change (it was removed, or reset to a
// zero value that typed Specs cannot tell from absent), in before.
func ownsChange(manager string, c diff.Change, before, after ownership.Managed) bool {
	mine, anyone := owns(manager, c.Path, after)
	if anyone {
		return mine
	}
	mine, _ = owns(manager, c.Path, before)
	return mine
}

// owns reports whether manager owns p in m (p or a field above it, or fields
// below it that no other manager shares), and whether anyone does.
func owns(manager string, p diff.Path, m ownership.Managed) (mine, anyone bool) {
	below, othersBelow := false, false
	for _, e := range m {
		if ownsPathOrAbove(e.Set, p) {
			if e.Manager == manager {
				return true, true
			}
			anyone = true
		}
		if ownsBelow(e.Set, p) {
			anyone = true
			if e.Manager == manager {
				below = true
			} else {
				othersBelow = true
			}
		}
	}
	return below && !othersBelow && !anyoneAbove(manager, p, m), anyone
}

// anyoneAbove reports whether a manager other than manager owns p or a field
// above it.
func anyoneAbove(manager string, p diff.Path, m ownership.Managed) bool {
	for _, e := range m {
		if e.Manager != manager && ownsPathOrAbove(e.Set, p) {
			return true
		}
	}
	return false
}

func ownsPathOrAbove(s *ownership.Set, p diff.Path) bool {
	for i := len(p); i > 0; i-- {
		if s.Has(p[:i]) {
			return true
		}
	}
	return false
}

func ownsBelow(s *ownership.Set, p diff.Path) bool {
	for _, q := range s.Paths() {
		if len(q) > len(p) && q.HasPrefix(p) {
			return true
		}
	}
	return false
}

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
