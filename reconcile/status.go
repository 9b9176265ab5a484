package reconcile

import (
	"context"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// StatusWriter is how the Loop reads and writes the Stalled condition of the
// object behind a key. The Loop owns only Stalled: WriteCondition must leave
// every other condition, and the status, as they are.
type StatusWriter[K comparable] interface {
	// Conditions returns the object's current conditions and generation,
	// typically from a cache (it is called after reconciles that may clear
	// Stalled, so it must be cheap). ok is false when the object is gone.
	// The returned slice is read-only.
	Conditions(key K) (conds []store.Condition, generation int64, ok bool)
	// WriteCondition writes c on the object as manager (the Loop's own
	// manager, see Loop.LoopManager). ctx carries the leadership fence. A
	// missing object is not an error.
	WriteCondition(ctx context.Context, key K, manager string, c store.Condition) error
}

// StoreStatus returns the StatusWriter for objects of a typed store: it
// reads conditions from the cache, and writes the Stalled condition with
// ApplyStatus as the Loop's own manager, applying that one condition and no
// status fields. Conditions are owned by type, so the write never touches
// the user's Ready or status, and re-applying an unchanged Stalled writes
// nothing. The Loop owns Stalled, so the apply is forced: a reconciler that
// wrote Stalled itself loses it to the Loop.
func StoreStatus[S, T any](c *cache.Cache[S, T], st *store.Store[S, T]) StatusWriter[string] {
	return storeStatus[S, T]{c: c, st: st}
}

type storeStatus[S, T any] struct {
	c  *cache.Cache[S, T]
	st *store.Store[S, T]
}

func (s storeStatus[S, T]) Conditions(name string) ([]store.Condition, int64, bool) {
	obj, ok := s.c.Get(name)
	if !ok {
		return nil, 0, false
	}
	return obj.Conditions, obj.Meta.Generation, true
}

func (s storeStatus[S, T]) WriteCondition(ctx context.Context, name, manager string, c store.Condition) error {
	_, err := s.st.As(manager).ApplyStatus(ctx, name, nil, []store.Condition{c}, store.Force())
	return store.IgnoreNotFound(err)
}
