package queue

import (
	"context"
	"iter"
	"time"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/internal/workqueue"
)

// The queue itself is internal/workqueue; this package is its public face.
// The core also has the stamped Get and Done (GetStamped, DoneStamped,
// Stamp) through which a Loop shares its clock reads with the queue's
// metrics: plumbing for the Loop, not API.

// Priority is the level at which a key waits to be handed out.
type Priority uint8

const (
	// Normal is the priority of Add, AddAfter and AddRateLimited.
	Normal Priority = iota
	// Low is the priority of AddLow, meant for periodic resync.
	Low
)

// String returns "normal" or "low".
func (p Priority) String() string {
	if p == Low {
		return "low"
	}
	return "normal"
}

// Queue is a keyed, deduplicating work queue: keys are added when something
// may need doing for them, and workers take them with Get and hand them back
// with Done.
//
//   - A key is queued at most once, however often it is added before a
//     worker takes it.
//   - A key taken by Get is never handed to a second worker before Done.
//     Adds while it is processing are remembered as one rerun, queued at
//     Done.
//   - Ready keys wait at Normal or Low priority. Normal keys go first, but
//     when both levels wait, at least one Get in 16 takes a Low key. A normal
//     add of a key waiting low moves it up; a low add never moves a key down
//     and never makes a delayed key ready sooner.
//   - AddAfter delays a key. A delayed key keeps its earliest ready time, and
//     a normal Add makes it ready at once (it then runs once, not twice).
//   - AddRateLimited delays a key by a backoff that grows with its failures,
//     and Forget resets its failure count.
//
// After ShutDown the queue accepts no more keys, and Get hands out the keys
// already queued until none is left, then returns false.
//
// K must be a type whose values equal themselves. A key that does not (a
// NaN float or complex, or a struct, array or interface holding one) could
// never be found again: Done could not end its processing, and every add
// would hold another copy. So every add (Add, AddAfter, AddLow,
// AddRateLimited) refuses such a key: it is dropped, and the queue's first
// refusal is logged at Error to slog.Default. For a string key the check
// compiles to nothing. A key of an interface type K whose dynamic value
// cannot be compared at all (a slice, map or func, or a struct or array
// holding one) is not refused: every method given it panics, as a map
// index with it does (client-go's workqueue panics the same way).
//
// The zero Queue is not usable; call New. A Queue is safe for concurrent
// use. It starts no goroutine, except one that reports unfinished work every
// half second when WithMetrics is given; ShutDown ends it.
type Queue[K comparable] struct {
	q workqueue.Queue[K]
}

// New returns an empty queue configured by opts. With no options it uses
// the real clock, no metrics, and for AddRateLimited its own per-key
// failure counts with the delays of backoff.NewDefault (see
// AddRateLimited).
func New[K comparable](opts ...Option) *Queue[K] {
	return NewRateLimited[K](nil, opts...)
}

// NewRateLimited is New with l as the limiter behind AddRateLimited, Forget
// and NumRequeues instead of the queue's own failure counts; l then takes
// precedence over WithBackoff. A nil l (or a typed nil, such as a nil
// *backoff.PerKey) means New.
func NewRateLimited[K comparable](l backoff.Limiter[K], opts ...Option) *Queue[K] {
	q := new(Queue[K])
	if len(opts) == 0 {
		q.q.Init(l)
		return q
	}
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	q.q.Init(l, o.w...)
	return q
}

// Add queues key at Normal priority, ready now.
//
//   - If key is already queued at Normal priority, Add does nothing.
//   - If key is queued Low, it moves to the back of the Normal list.
//   - If key is delayed, it stops waiting and is queued now, once.
//   - If key is processing, it is queued again when Done is called.
//
// After ShutDown, Add does nothing.
func (q *Queue[K]) Add(key K) { q.q.Add(key) }

// AddAfter queues key at Normal priority once d has passed. If d ≤ 0 it is
// Add. Otherwise:
//
//   - If key is already delayed, it keeps the earlier of its ready time and
//     now+d.
//   - If key is already queued, or due to rerun after processing, AddAfter
//     does nothing: it is ready sooner than now+d.
//   - If key is processing, it waits out d; if it is still processing then,
//     it is queued again when Done is called.
//
// AddAfter never allocates for a key the queue already holds and, once the
// queue has held as many keys before, for a new one. After ShutDown it does
// nothing.
func (q *Queue[K]) AddAfter(key K, d time.Duration) { q.q.AddAfter(key, d) }

// AddLow queues key at Low priority, ready now, for work that can wait
// behind every normal add, such as a periodic resync. AddLow only ever adds
// work that was not there: if key is queued (at either priority), delayed
// or backed off, or already due to rerun after processing, AddLow does
// nothing, so a resync can neither erase a backoff nor hurry a delay. If key
// is processing with no rerun due, it is queued Low when Done is called.
//
// After ShutDown, AddLow does nothing.
func (q *Queue[K]) AddLow(key K) { q.q.AddLow(key) }

// AddRateLimited queues key at Normal priority after a delay that grows
// with key's failures, with the rules of AddAfter. Call it when processing
// key failed; call Forget when it succeeds.
//
// The delay comes from the limiter given to NewRateLimited (its When, which
// also counts the failure), or else from the queue's own count of key's
// failures since the last Forget: with WithBackoff(p) the n-th failure
// (from 0) waits p.Delay(n), with the jitter drawn, when p.Rand is nil,
// from the queue's own generator (seeded from math/rand/v2, as
// backoff.PerKey's is) rather than math/rand/v2's shared one; by default it
// waits the longer of backoff.DefaultPolicy's Delay(n) and the When of
// one backoff.NewDefaultBucket for all keys, as backoff.NewDefault would
// give: 10ms after the first failure, doubling up to 2 minutes, with all
// keys together paced under a ceiling.
//
// After ShutDown, AddRateLimited does nothing and records no failure.
func (q *Queue[K]) AddRateLimited(key K) { q.q.AddRateLimited(key) }

// Delayed returns the number of keys waiting for a ready time (AddAfter,
// AddRateLimited); a key whose time has come is ready and counts in Len
// instead. Unlike Counts it does not walk the keys: it costs what Len
// costs. Metrics adapters read it (or Counts) for the delayed-keys gauge;
// Metrics.Depth, like client-go's workqueue_depth, counts ready keys only.
func (q *Queue[K]) Delayed() int { return q.q.Delayed() }

// Done tells the queue that the caller has finished processing key. If key
// was added while it was processing, it is queued again now, at the highest
// priority it was added with. Done of a key that is not processing (never
// handed out, or already done) does nothing.
//
// Done works after ShutDown too: reruns recorded before ShutDown are queued,
// and ShutDownWithDrain returns once every handed-out key is done.
func (q *Queue[K]) Done(key K) { q.q.Done(key) }

// Forget resets key's failure count, so its next AddRateLimited waits the
// shortest delay again. It does not remove key from the queue. Forgetting a
// key that never failed does nothing.
func (q *Queue[K]) Forget(key K) { q.q.Forget(key) }

// Get hands out the next ready key, blocking until there is one. The caller
// owns the key until it calls Done, and must call Done exactly once for it.
//
// Get returns false, without a key, when ctx is done (checked first, so a
// cancelled worker takes no more keys), or once the queue is shut down and
// no key is ready.
func (q *Queue[K]) Get(ctx context.Context) (key K, ok bool) { return q.q.Get(ctx) }

// Len returns the number of keys ready to be handed out, at both
// priorities. It does not count keys processing, nor delayed keys (AddAfter,
// AddRateLimited), which Delayed counts: a queue holding a million delayed
// keys has Len 0 and Delayed 1,000,000. Like any length of a concurrent
// queue, it may be stale by the time it is read.
func (q *Queue[K]) Len() int { return q.q.Len() }

// Name returns the name given with WithName, or "".
func (q *Queue[K]) Name() string { return q.q.Name() }

// NumRequeues returns how many times key has been added with AddRateLimited
// since it was last forgotten, as the limiter given to NewRateLimited or the
// queue itself counts them: 0 for a key that never failed.
func (q *Queue[K]) NumRequeues(key K) int { return q.q.NumRequeues(key) }

// ShutDown stops the queue for good. Later adds of every kind are ignored,
// and delayed keys are dropped. Keys already ready stay: Get keeps handing
// them out until none is left, then returns false, and blocked Gets wake up
// to do so. Keys processing may still be handed back with Done, which
// queues any rerun recorded before ShutDown. ShutDown does not wait for
// keys (ShutDownWithDrain does), only for the queue's metrics goroutine to
// end; calling it again does nothing.
func (q *Queue[K]) ShutDown() { q.q.ShutDown() }

// ShutDownWithDrain is ShutDown, and then waits until no key is in flight:
// every key handed out by Get has been handed back with Done. It returns
// nil then, or, if ctx is done first, an error that says how many keys were
// still processing and wraps ctx's cause. Keys still ready when it returns
// stay for Get; a caller that wants them processed too keeps its workers
// calling Get until it returns false.
func (q *Queue[K]) ShutDownWithDrain(ctx context.Context) error { return q.q.ShutDownWithDrain(ctx) }

// State returns what the queue holds for key right now. A delayed key whose
// time has come is reported Queued. State is for inspection and tests: like
// Len, it may be stale by the time it is read.
func (q *Queue[K]) State(key K) KeyState { return keyState(q.q.State(key)) }

// Counts returns how many keys the queue holds in each state. It walks
// every key, under the queue's lock, and allocates nothing: it is for
// inspection pages and metric scrapes, not for a hot path. Keys whose delay
// has passed are counted as Ready. Like Len, the result may be stale by the
// time it is read.
func (q *Queue[K]) Counts() Counts { return Counts(q.q.Counts()) }

// All returns every key the queue holds something for (queued, processing
// or delayed) with its state, as State would report it, in no particular
// order. The states are copied under the queue's lock before the first is
// yielded, so the loop body may call the queue; they are the queue at one
// moment, and may be stale by the time they are read. It is for inspection
// pages, not for a hot path: it costs one KeyState per key held.
func (q *Queue[K]) All() iter.Seq2[K, KeyState] {
	return func(yield func(K, KeyState) bool) {
		for k, s := range q.q.All() {
			if !yield(k, keyState(s)) {
				return
			}
		}
	}
}
