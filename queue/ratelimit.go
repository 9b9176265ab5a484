package queue

import "github.com/steady-go/steady/backoff"

// AddRateLimited queues key at Normal priority after the delay its rate
// limiter gives (the limiter's When, which also counts the failure), with
// the rules of AddAfter. Call it when processing key failed; call Forget
// when it succeeds. The default limiter, backoff.NewDefault, waits 10ms
// after the first failure and doubles up to 2 minutes, and paces all keys
// together with a token bucket that has a ceiling.
//
// After ShutDown, AddRateLimited does nothing and records no failure.
func (q *Queue[K]) AddRateLimited(key K) {
	q.mu.Lock()
	shut := q.shutdown
	q.mu.Unlock()
	if shut {
		return
	}
	d := q.rateLimiter().When(key)
	if q.m != nil {
		q.m.hooks.Retry()
	}
	q.AddAfter(key, d)
}

// Forget resets key's failure count in the rate limiter, so its next
// AddRateLimited waits the shortest delay again. It does not remove key
// from the queue. Forgetting a key that never failed does nothing.
func (q *Queue[K]) Forget(key K) {
	if l := q.existingLimiter(); l != nil {
		l.Forget(key)
	}
}

// NumRequeues returns how many times key has been added with AddRateLimited
// since it was last forgotten, as the rate limiter counts them: 0 for a
// key that never failed.
func (q *Queue[K]) NumRequeues(key K) int {
	if l := q.existingLimiter(); l != nil {
		return l.NumRequeues(key)
	}
	return 0
}

// rateLimiter returns the queue's limiter, creating the default one on
// first use, so a queue that never retries never builds one.
func (q *Queue[K]) rateLimiter() backoff.Limiter[K] {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.limiter == nil {
		q.limiter = backoff.NewDefault[K]()
	}
	return q.limiter
}

func (q *Queue[K]) existingLimiter() backoff.Limiter[K] {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.limiter
}
