package reconcile

import (
	"context"

	"github.com/steady-go/steady/store"
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
	// WriteCondition writes c on the object as the Loop's own manager. ctx
	// carries the leadership fence. A missing object is not an error.
	WriteCondition(ctx context.Context, key K, c store.Condition) error
}
