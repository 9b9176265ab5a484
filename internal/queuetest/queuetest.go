// Package queuetest holds the test doubles that the tests of package queue
// and of internal/workqueue share: a Metrics that records every measurement
// a queue reports, and a clock that counts its reads.
package queuetest

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/steady-go/steady/clock"
)

// Recorded is what a Recorder has kept.
type Recorded struct {
	Depths              []int
	Added, Retries      int
	Latencies, Works    []time.Duration
	Unfinished, Longest time.Duration
	// Reports counts the calls of Unfinished.
	Reports int
}

// Recorder keeps every measurement a queue reports; it is safe for
// concurrent use. The zero value is ready.
type Recorder struct {
	mu sync.Mutex
	r  Recorded
}

func (r *Recorder) Depth(n int) { r.mu.Lock(); r.r.Depths = append(r.r.Depths, n); r.mu.Unlock() }
func (r *Recorder) Added()      { r.mu.Lock(); r.r.Added++; r.mu.Unlock() }
func (r *Recorder) Retry()      { r.mu.Lock(); r.r.Retries++; r.mu.Unlock() }
func (r *Recorder) QueueLatency(d time.Duration) {
	r.mu.Lock()
	r.r.Latencies = append(r.r.Latencies, d)
	r.mu.Unlock()
}
func (r *Recorder) WorkDuration(d time.Duration) {
	r.mu.Lock()
	r.r.Works = append(r.r.Works, d)
	r.mu.Unlock()
}
func (r *Recorder) Unfinished(total, longest time.Duration) {
	r.mu.Lock()
	r.r.Unfinished, r.r.Longest = total, longest
	r.r.Reports++
	r.mu.Unlock()
}

// Snapshot returns a copy of what r has kept so far.
func (r *Recorder) Snapshot() Recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.r
	out.Depths = append([]int(nil), r.r.Depths...)
	out.Latencies = append([]time.Duration(nil), r.r.Latencies...)
	out.Works = append([]time.Duration(nil), r.r.Works...)
	return out
}

// CountingClock is the real clock, counting calls of Now in Nows.
type CountingClock struct {
	clock.Real
	Nows atomic.Int64
}

// Now implements clock.Clock.
func (c *CountingClock) Now() time.Time { c.Nows.Add(1); return c.Real.Now() }
