package workqueue

import (
	"math"

	"github.com/steady-go/steady/backoff"
)

// Unless NewRateLimited is given a limiter, the queue counts each key's
// failures in the key's own entry of its table: AddRateLimited and Forget
// then cost one lock, one hash and one probe, with no map or lock of a
// separate limiter. The delay comes from fastdelay.Delays, as
// backoff.PerKey's does, which gives Policy.Delay's durations exactly, with
// the jitter from the queue's own generator, advanced under the queue's
// lock. An entry stays in the table while its count is above
// zero, even when the key is neither ready, processing nor delayed; Forget
// removes it then.

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
func (q *Queue[K]) AddRateLimited(key K) {
	if key != key { // see refused; before the limiter, which would keep a count for it
		q.refused(key)
		return
	}
	if q.limiter != nil {
		q.mu.Lock()
		shut := q.shutdown
		q.mu.Unlock()
		if shut {
			return
		}
		d := q.limiter.When(key)
		if q.m != nil {
			q.m.hooks.Retry()
		}
		q.AddAfter(key, d)
		return
	}
	h := q.keys.hash(key)
	q.mu.Lock()
	if q.shutdown {
		q.mu.Unlock()
		return
	}
	n, nd, created := q.keys.insert(key, h)
	f := nd.failures
	if f < math.MaxUint32 {
		nd.failures = f + 1
	}
	d := q.own.Delay(int(f), q.own.Draw(int(f)))
	if q.defaultBackoff {
		if q.bucket == nil {
			q.bucket = backoff.NewDefaultBucket[K]()
		}
		d = max(d, q.bucket.When(key))
	}
	if q.m != nil {
		q.m.hooks.Retry()
	}
	switch {
	case d <= 0:
		q.addNode(n, nd, created)
	case nd.state&delayed != 0 && q.delay.heap[nd.prev].at-int64(d) <= q.delay.seen:
		// Already due no later than now+d, as the last clock reading
		// shows without a new one: AddAfter would leave it.
	default:
		q.delayNode(n, created, q.after(d))
	}
	q.mu.Unlock()
}

// Forget resets key's failure count, so its next AddRateLimited waits the
// shortest delay again. It does not remove key from the queue. Forgetting a
// key that never failed does nothing.
func (q *Queue[K]) Forget(key K) {
	if q.limiter != nil {
		q.limiter.Forget(key)
		return
	}
	h := q.keys.hash(key)
	q.mu.Lock()
	if _, nd, slot := q.keys.lookup(key, h); nd != nil {
		nd.failures = 0
		if nd.state == 0 {
			q.keys.removeAt(slot, nd)
		}
	}
	q.mu.Unlock()
}

// NumRequeues returns how many times key has been added with AddRateLimited
// since it was last forgotten, as the limiter given to NewRateLimited or the
// queue itself counts them: 0 for a key that never failed.
func (q *Queue[K]) NumRequeues(key K) int {
	if q.limiter != nil {
		return q.limiter.NumRequeues(key)
	}
	h := q.keys.hash(key)
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, nd, _ := q.keys.lookup(key, h); nd != nil {
		return int(nd.failures)
	}
	return 0
}
