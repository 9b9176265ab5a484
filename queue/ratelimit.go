package queue

import (
	"math"
	"time"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/internal/fastdelay"
)

// Unless NewRateLimited is given a limiter, the queue counts each key's
// failures in the key's own entry of its table: AddRateLimited and Forget
// then cost one lock, one hash and one probe, with no map or lock of a
// separate limiter. For a policy with Factor 2 (the default's) the delay
// comes from fastdelay.Doubling, which gives Policy.Delay's durations
// exactly, and the jitter from the queue's own generator, advanced under
// the queue's lock. An entry stays in the table while its count is above
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
// waits the longer of backoff.DefaultPolicy's Delay(n) and an overall
// backoff.Bucket with the default BucketConfig, as backoff.NewDefault would
// give: 10ms after the first failure, doubling up to 2 minutes, with all
// keys together paced under a ceiling.
//
// After ShutDown, AddRateLimited does nothing and records no failure.
func (q *Queue[K]) AddRateLimited(key K) {
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
	n, created := q.keys.insert(key, h)
	nd := q.keys.at(n)
	f := nd.failures
	if f < math.MaxUint32 {
		nd.failures = f + 1
	}
	d := q.own.delay(int(f))
	if q.defaultBackoff {
		if q.bucket == nil {
			q.bucket = newDefaultBucket[K]()
		}
		if q.bucket != nil {
			d = max(d, q.bucket.When(key))
		}
	}
	if q.m != nil {
		q.m.hooks.Retry()
	}
	switch {
	case d <= 0:
		q.addNode(n, created)
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
	if n, slot := q.keys.lookup(key, h); n != none {
		nd := q.keys.at(n)
		nd.failures = 0
		if nd.state == 0 {
			q.keys.removeAt(slot)
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
	if n, _ := q.keys.lookup(key, h); n != none {
		return int(q.keys.at(n).failures)
	}
	return 0
}

// ownBackoff is the policy behind the queue's own failure counts, ready to
// compute its delays under the queue's lock. It is not generic, so delay is
// compiled once, in this package, with fastdelay's code inlined into it.
type ownBackoff struct {
	policy backoff.Policy
	fast   fastdelay.Doubling // policy's delays, when fastOK
	fastOK bool               // policy.Factor is 2
	jitter fastdelay.Source   // the random source when policy.Rand is nil
}

func (b *ownBackoff) init(p backoff.Policy) {
	b.policy = p
	b.jitter = fastdelay.New()
	b.fast, b.fastOK = fastdelay.NewDoubling(p.Base, p.Factor, p.Cap, p.Jitter)
	if !b.fastOK && p.Rand == nil {
		b.policy.Rand = b.jitter.Float64 // called only under the queue's lock
	}
}

// delay returns policy.Delay(attempt), with the jitter drawn from the
// queue's own generator when the policy has no Rand. The queue's lock is
// held.
func (b *ownBackoff) delay(attempt int) time.Duration {
	if !b.fastOK {
		return b.policy.Delay(attempt)
	}
	u := 0.0
	if b.fast.Draws(attempt) {
		if b.policy.Rand != nil {
			u = b.policy.Rand()
		} else {
			u = b.jitter.Float64()
		}
	}
	return b.fast.Delay(attempt, u)
}

// newDefaultBucket returns the overall limiter of backoff.NewDefault. The
// zero BucketConfig always validates; were it ever refused, the queue would
// back off per key only.
func newDefaultBucket[K comparable]() *backoff.Bucket[K] {
	if b, err := backoff.NewBucket[K](backoff.BucketConfig{}); err == nil {
		return b
	}
	return nil
}
