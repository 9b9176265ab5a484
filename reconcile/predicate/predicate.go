// Package predicate filters the events a reconcile cache source turns into
// hints, as controller-runtime's predicate package does: GenerationChanged,
// LabelsChanged, AnnotationsChanged, any func of the user's, and their
// combinations with And, Or and Not. Give one to a source with
// reconcile.WithPredicate.
//
// # What a predicate filters, and what it never does
//
// A predicate sees the watch's events, as a cache handler does: (nil, obj)
// for an addition, (old, new) for a modification, (old, nil) for a deletion.
// When it returns false the event is no hint, and the source's change judge
// (own writes, oscillation) never sees it. It filters hints, never state:
//
//   - the source still records the object (its name is listed at every
//     resync and new term, and FromStore's source still tracks its Ready
//     and Stalled conditions), so resync and new terms reconcile every key
//     whatever the predicates say;
//   - changes the cache found by listing (its first listing, a relist after
//     the watch ended, the periodic relist's drift repairs; see
//     cache.Cache.Listing) pass without being asked: a repair is the only
//     report of a change the watch lost.
//
// So a predicate makes a Loop lazier, never wrong: what it drops, the next
// resync or relist repairs.
//
// # Misuse
//
// A predicate that panics is reported like a reconcile panic and its event
// is a hint (a hint costs one comparison; a lost change costs a resync
// period). And, Or and Not given a nil predicate return nil, and
// reconcile.New and Loop.AddSource refuse a source given
// reconcile.WithPredicate(nil) with an error (reconcile.ErrInvalidOption)
// that says so: a nil filter is a bug to hear about, not a filter to guess.
package predicate

import (
	"maps"
	"slices"

	"github.com/steady-go/steady/store"
)

// Predicate reports whether a change is a hint: (nil, obj) for an addition,
// (old, new) for a modification, (old, nil) for a deletion. The objects are
// the cache's, shared and read-only. It runs on the cache's handler
// goroutine, once per event, so it must be quick.
type Predicate[S, T any] func(old, new *store.Object[S, T]) bool

// GenerationChanged passes additions, deletions, and modifications that
// moved Meta.Generation, that is that changed the spec (controller-runtime's
// GenerationChangedPredicate). It drops changes to status, conditions and
// metadata alone: combine it with Or(LabelsChanged(), ...) to keep some.
func GenerationChanged[S, T any]() Predicate[S, T] {
	return func(old, new *store.Object[S, T]) bool {
		return old == nil || new == nil || old.Meta.Generation != new.Meta.Generation
	}
}

// LabelsChanged passes additions, deletions, and modifications that changed
// Meta.Labels (controller-runtime's LabelChangedPredicate).
func LabelsChanged[S, T any]() Predicate[S, T] {
	return func(old, new *store.Object[S, T]) bool {
		return old == nil || new == nil || !maps.Equal(old.Meta.Labels, new.Meta.Labels)
	}
}

// AnnotationsChanged passes additions, deletions, and modifications that
// changed Meta.Annotations (controller-runtime's AnnotationChangedPredicate).
func AnnotationsChanged[S, T any]() Predicate[S, T] {
	return func(old, new *store.Object[S, T]) bool {
		return old == nil || new == nil || !maps.Equal(old.Meta.Annotations, new.Meta.Annotations)
	}
}

// Object passes the events whose object f accepts: the new object, or the
// old one for a deletion (controller-runtime's NewPredicateFuncs). A nil f
// returns nil.
func Object[S, T any](f func(obj *store.Object[S, T]) bool) Predicate[S, T] {
	if f == nil {
		return nil
	}
	return func(old, new *store.Object[S, T]) bool {
		if new == nil {
			return f(old)
		}
		return f(new)
	}
}

// And passes an event when every p does, asking them in order and stopping
// at the first that does not; And() passes everything. A nil p makes it
// return nil. It keeps a copy of ps, so the caller may reuse the slice.
func And[S, T any](ps ...Predicate[S, T]) Predicate[S, T] {
	if hasNil(ps) {
		return nil
	}
	ps = slices.Clone(ps) // a later write to the caller's slice must not change (or nil out) the filter
	return func(old, new *store.Object[S, T]) bool {
		for _, p := range ps {
			if !p(old, new) {
				return false
			}
		}
		return true
	}
}

// Or passes an event when any p does, asking them in order and stopping at
// the first that does; Or() passes nothing. A nil p makes it return nil. It
// keeps a copy of ps, so the caller may reuse the slice.
func Or[S, T any](ps ...Predicate[S, T]) Predicate[S, T] {
	if hasNil(ps) {
		return nil
	}
	ps = slices.Clone(ps) // as in And
	return func(old, new *store.Object[S, T]) bool {
		for _, p := range ps {
			if p(old, new) {
				return true
			}
		}
		return false
	}
}

// Not passes the events p drops. A nil p makes it return nil.
func Not[S, T any](p Predicate[S, T]) Predicate[S, T] {
	if p == nil {
		return nil
	}
	return func(old, new *store.Object[S, T]) bool { return !p(old, new) }
}

func hasNil[S, T any](ps []Predicate[S, T]) bool {
	for _, p := range ps {
		if p == nil {
			return true
		}
	}
	return false
}
