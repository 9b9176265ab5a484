package backoff

import (
	"time"

	"github.com/steady-go/steady/internal/nilness"
)

// Limiter decides how long a failed key waits before it is retried. The
// queue calls When on every rate-limited add and Forget when the key
// succeeds. Implementations in this package are safe for concurrent use.
type Limiter[K comparable] interface {
	// When records one failure for key and returns how long to wait before
	// retrying it. The result is never negative.
	When(key K) time.Duration
	// Forget resets key, as if it had never failed. Forgetting a key that
	// was never seen does nothing.
	Forget(key K)
	// NumRequeues returns the number of failures recorded for key since it
	// was last forgotten: 0 for a key never seen, and always 0 for limiters
	// that do not track keys.
	NumRequeues(key K) int
}

// Max returns a Limiter whose When calls every limiter in ls, in order, and
// returns the longest delay, so each limiter records every failure. Forget
// forgets key in every limiter, and NumRequeues returns the largest count
// any of them reports. Nil entries (typed nils, such as a nil *PerKey,
// included) are skipped; with no limiters When returns 0. The result is
// safe for concurrent use if every limiter is.
// Max copies ls, so later changes to the slice do not affect it.
func Max[K comparable](ls ...Limiter[K]) Limiter[K] {
	m := make(maxOf[K], 0, len(ls))
	for _, l := range ls {
		if !nilness.IsNil(l) { // a typed nil too: its methods would panic
			m = append(m, l)
		}
	}
	return m
}

type maxOf[K comparable] []Limiter[K]

func (m maxOf[K]) When(key K) time.Duration {
	var d time.Duration
	for _, l := range m {
		d = max(d, l.When(key))
	}
	return d
}

func (m maxOf[K]) Forget(key K) {
	for _, l := range m {
		l.Forget(key)
	}
}

func (m maxOf[K]) NumRequeues(key K) int {
	n := 0
	for _, l := range m {
		n = max(n, l.NumRequeues(key))
	}
	return n
}

// NewDefault returns the limiter steady uses when none is given: a PerKey
// limiter with DefaultPolicy combined by Max with a Bucket with the default
// BucketConfig (10 retries per second overall, burst 100, ceiling
// DefaultCeiling). A single failing key backs off from 10ms to 2 minutes;
// a storm of failures is paced at 10 per second, but no key waits much more
// than DefaultCeiling because of other keys' failures. Each call returns a
// new, independent limiter.
func NewDefault[K comparable]() Limiter[K] {
	return Max[K](newPerKey[K](DefaultPolicy()), NewDefaultBucket[K]())
}

// NewDefaultBucket returns the overall half of NewDefault's limiter, a new
// Bucket with the default BucketConfig; its per-key half follows
// DefaultPolicy. It is for a limiter that keeps its per-key failure counts
// itself, as the queue's own backoff does, and must back off as NewDefault
// would: the delay of a failure is the longer of the two halves'.
func NewDefaultBucket[K comparable]() *Bucket[K] {
	return newBucket[K](BucketConfig{}.withDefaults())
}
