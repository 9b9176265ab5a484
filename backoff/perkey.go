package backoff

import (
	"math"
	"sync"
	"time"

	"github.com/steady-go/steady/internal/fastdelay"
)

// PerKey is a Limiter that counts consecutive failures per key and delays
// each key by its Policy: the n-th consecutive failure of a key (counting
// from 0) waits Policy.Delay(n). Keys do not affect each other; pair PerKey
// with a Bucket through Max to also bound the overall retry rate.
//
// PerKey keeps one entry per key that has failed and not been forgotten, so
// callers must Forget keys that succeed or disappear. When, Forget and
// NumRequeues allocate nothing for a key PerKey already holds. A new or
// forgotten key costs a map insertion, which allocates only when the map
// must grow; keys that fail and are forgotten in turn reuse its room. A
// PerKey is safe for concurrent use. The zero value is not usable; create
// one with NewPerKey.
type PerKey[K comparable] struct {
	mu       sync.Mutex
	failures map[K]int        // consecutive failures since the last Forget; absent means 0
	delays   fastdelay.Delays // its jitter source is advanced under mu
	policy   Policy
}

// NewPerKey returns a PerKey limiter that follows p. It returns an error
// wrapping ErrInvalidConfig if p.Validate reports one.
//
// The limiter calls p.Rand outside its lock, so p.Rand must be safe for
// concurrent use if the limiter is. When p.Rand is nil, the limiter draws
// jitter from its own small generator, seeded from math/rand/v2 and advanced
// under the lock it already holds, which is cheaper than the shared source
// and just as uniform for spreading delays.
func NewPerKey[K comparable](p Policy) (*PerKey[K], error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return newPerKey[K](p), nil
}

func newPerKey[K comparable](p Policy) *PerKey[K] {
	return &PerKey[K]{
		failures: make(map[K]int),
		delays:   fastdelay.NewDelays(p.Base, p.Factor, p.Cap, p.Jitter, p.Rand),
		policy:   p,
	}
}

// Policy returns the policy l was created with.
func (l *PerKey[K]) Policy() Policy { return l.policy }

// When records one failure for key and returns the policy's delay for
// attempt n, where n is the number of failures recorded for key before this
// one: Policy.Delay(n), with the jitter drawn as NewPerKey describes.
func (l *PerKey[K]) When(key K) time.Duration {
	l.mu.Lock()
	n := l.failures[key]
	if n < math.MaxInt {
		l.failures[key] = n + 1
	}
	u := draw(&l.delays, n)
	l.mu.Unlock()
	return l.delays.Delay(n, u)
}

// draw is d.Draw(n). The shape-instantiated When does not inline
// fastdelay's Draw when it calls it itself, but does inline this
// non-generic function with Draw inlined into it, which keeps the random
// draw under l.mu free of a call.
func draw(d *fastdelay.Delays, n int) float64 { return d.Draw(n) }

// Forget drops key's failure count, so its next failure waits Policy.Base
// again and NumRequeues reports 0.
func (l *PerKey[K]) Forget(key K) {
	l.mu.Lock()
	delete(l.failures, key)
	l.mu.Unlock()
}

// NumRequeues returns how many failures When has recorded for key since it
// was last forgotten.
func (l *PerKey[K]) NumRequeues(key K) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failures[key]
}

// Len returns the number of keys with at least one recorded failure.
func (l *PerKey[K]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.failures)
}
