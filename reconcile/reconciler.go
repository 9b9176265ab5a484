package reconcile

import (
	"context"
	"time"
)

// Reconciler makes one object match its description. Reconcile is given the
// key of an object, reads the desired and the observed state, acts to reduce
// the difference, and reports the outcome. The Loop never calls Reconcile
// concurrently for the same key.
//
// The returned Result and error decide what happens next; the full table is
// in the package documentation. In short: nil means done until the next hint;
// an error is retried with capped backoff and reported as Stalled after
// repeated failures; Terminal, Blocked and RetryAfter refine that.
//
// Reconcile must return when ctx ends. Its ctx carries the per-reconcile
// timeout, the leadership fence, and cause ErrShutdown when the Loop stops.
//
// A Reconcile that panics fails with a *PanicError (see the package
// documentation). One that calls runtime.Goexit (as t.FailNow, t.Fatal
// and t.SkipNow do, called from a reconciler in a test) ends its worker's
// goroutine, which no recover can stop: the Loop logs it at Error with
// the stack, treats the reconcile as one that panicked (a *PanicError,
// counted, retried with backoff), and starts a worker in its place, so
// the Loop keeps its workers and stops cleanly.
type Reconciler[K comparable] interface {
	Reconcile(ctx context.Context, key K) (Result, error)
}

// Func adapts a function to a Reconciler.
type Func[K comparable] func(ctx context.Context, key K) (Result, error)

// Reconcile calls f(ctx, key).
func (f Func[K]) Reconcile(ctx context.Context, key K) (Result, error) { return f(ctx, key) }

// Result tells the Loop when to run a key again after a reconcile that
// returned no error. The zero Result means "done: run again on the next hint
// or resync".
//
//	result                          failures   next run                                 Stalled
//	Result{}                        reset      next hint or resync                      cleared
//	RequeueAfterWrite, after write  reset      once the cache holds the write (≤ 2s)    unchanged
//	RequeueAfterWrite, no write     unchanged  per-key backoff: the n-th in a row       unchanged
//	                                           waits as the n-th failure would
//	RequeueAfter d                  reset      after d                                  cleared
//
// A pass "wrote" when a typed store write made with its ctx succeeded (or it
// called RecordWrite). A RequeueAfterWrite that wrote nothing has no write
// to wait for, so it is paced like controller-runtime's rate-limited
// requeue: it is not a failure and never makes the object Stalled, and any
// other result starts the backoff over. With an error, the error's row of
// the package documentation applies.
//
// If both are set, RequeueAfter wins: the key runs after RequeueAfter and
// RequeueAfterWrite is ignored (by then the cache holds the write anyway).
// A negative RequeueAfter is treated as zero.
type Result struct {
	// RequeueAfterWrite asks for another pass as soon as the cache
	// reflects the last write this reconcile made (read-your-writes), so
	// the next pass compares against the object as written, not a stale
	// copy; after a pass that wrote nothing, another pass after per-key
	// backoff. It never counts as a failure; after a pass that wrote it
	// resets the failure count (the write is progress), after one that
	// wrote nothing it leaves the count as it is.
	RequeueAfterWrite bool
	// RequeueAfter asks for another pass after this delay. It resets the
	// failure count. With an error it is a lower bound on the retry delay.
	RequeueAfter time.Duration

	// Requeue is RequeueAfterWrite under controller-runtime's name, where
	// it meant "again at once, rate limited". A Loop treats it exactly as
	// RequeueAfterWrite (so a pass that wrote nothing backs off, never
	// spins) and logs at Warn, once, the first time a reconcile returns it.
	//
	// Deprecated: use RequeueAfterWrite, or RequeueAfter for a timed rerun.
	Requeue bool
}

// afterWrite reports whether r asks for a pass after its write
// (RequeueAfterWrite, or the deprecated Requeue).
func (r Result) afterWrite() bool { return r.RequeueAfterWrite || r.Requeue }

// isZero reports whether r asks for nothing (a negative RequeueAfter counts
// as zero).
func (r Result) isZero() bool { return !r.afterWrite() && r.RequeueAfter <= 0 }
