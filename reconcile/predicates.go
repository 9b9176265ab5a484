package reconcile

import (
	"log/slog"

	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/store"
)

// WithPredicate makes a cache source (FromStore, FromOwned, FromCacheMapped)
// drop the watch events p returns false for before its change judge sees
// them; package reconcile/predicate has the usual ones (GenerationChanged,
// LabelsChanged, AnnotationsChanged) and And, Or and Not. Given more than
// once, every p must pass.
//
// A predicate filters hints only: the source still records every object, so
// resync and each new term list every key, and the changes the cache found
// by listing (first listing, relists, the periodic relist's drift repairs)
// are hints whatever p says. A dropped event is not judged either, so it
// feeds no oscillation detection. A p that panics is reported like a
// reconcile panic and counts as passing its event. A nil p (an And, Or or Not of a
// nil predicate is nil too) makes New and AddSource refuse the source
// (ErrInvalidOption).
func WithPredicate[S, T any](p func(old, new *store.Object[S, T]) bool) CacheSourceOption[S, T] {
	return func(s *cacheSource[S, T]) {
		if p == nil {
			s.pred.nilGiven = true
			return
		}
		s.pred.all = append(s.pred.all, p)
	}
}

// predicates are a cache source's WithPredicate funcs.
type predicates[S, T any] struct {
	all      []func(old, new *store.Object[S, T]) bool
	nilGiven bool
}

// passes reports whether the change is a hint as far as the predicates go:
// a listed change always is (see WithPredicate), and a predicate that
// panics passes it.
func (s *cacheSource[S, T]) passes(ref *sinkRef, old, new *store.Object[S, T]) bool {
	if len(s.pred.all) == 0 || s.c.Listing() {
		return true
	}
	for i, p := range s.pred.all {
		ok, panicked := callPredicate(p, old, new)
		if panicked != nil {
			obj := new
			if obj == nil {
				obj = old
			}
			reportPanic(ref.loop, "predicate", panicked, slog.Int("predicate", i), slog.String("object", obj.Meta.Name))
			continue
		}
		if !ok {
			return false
		}
	}
	return true
}

func callPredicate[S, T any](p func(old, new *store.Object[S, T]) bool, old, new *store.Object[S, T]) (ok bool, panicked *guard.Panic) {
	defer guard.Catch(&panicked)
	return p(old, new), nil
}
