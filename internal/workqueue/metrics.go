package workqueue

import (
	"context"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/steady-go/steady/internal/guard"
)

// Metrics receives a queue's measurements, with the meaning of client-go's
// workqueue_* metrics. Adapt it to any metrics library; embed NopMetrics to
// implement only some methods.
//
// The queue calls the methods synchronously, some with its lock held: they
// must be quick, safe for concurrent use, and must not call the queue. A
// method that panics is recovered where it was called: the queue logs the
// panic once, to slog.Default with its stack, calls no method of that
// Metrics again, and works on.
// Without WithMetrics the queue takes no timestamps, except the ones a
// caller asks for (Stamp, GetStamped).
type Metrics interface {
	// Depth reports the number of ready keys, both priorities, whenever
	// it changes.
	Depth(n int)
	// Added counts an add that made work: one that queued a key, or made
	// a processing key due to rerun. Adds absorbed by deduplication, and
	// AddAfter before its delay has passed, are not counted.
	Added()
	// QueueLatency reports how long a key waited ready before Get handed
	// it out (GetStamped: see its stamps).
	QueueLatency(d time.Duration)
	// WorkDuration reports how long a key was processing, from Get to
	// Done (GetStamped to DoneStamped: the caller's stamps).
	WorkDuration(d time.Duration)
	// Unfinished reports, every UnfinishedInterval until ShutDown, how
	// long the keys processing now have been processing in total, and the
	// longest of them (client-go's unfinished_work_seconds and
	// longest_running_processor_seconds). Both are 0 when no key is
	// processing.
	Unfinished(total, longest time.Duration)
	// Retry counts a call of AddRateLimited.
	Retry()
}

// UnfinishedInterval is how often a queue with metrics calls
// Metrics.Unfinished.
const UnfinishedInterval = 500 * time.Millisecond

// NopMetrics implements Metrics by doing nothing. Embed it in a type that
// implements only the methods it needs.
type NopMetrics struct{}

// Depth does nothing.
func (NopMetrics) Depth(int) {}

// Added does nothing.
func (NopMetrics) Added() {}

// QueueLatency does nothing.
func (NopMetrics) QueueLatency(time.Duration) {}

// WorkDuration does nothing.
func (NopMetrics) WorkDuration(time.Duration) {}

// Unfinished does nothing.
func (NopMetrics) Unfinished(total, longest time.Duration) {}

// Retry does nothing.
func (NopMetrics) Retry() {}

// meter keeps the timestamps metrics need, per node number, so that only a
// queue with metrics pays for them. Timestamps are Queue.stamp readings.
type meter struct {
	hooks    *guardedMetrics
	readyAt  []int64       // per node: when it last became ready
	startAt  []int64       // per node: when Get handed it out
	slot     []int32       // per node: its index in inFlight
	inFlight []int32       // nodes processing, in no order
	stop     chan struct{} // closed by ShutDown
	stopped  chan struct{} // closed when reportUnfinished returns
}

func newMeter(h Metrics, queue string) *meter {
	return &meter{hooks: &guardedMetrics{h: h, queue: queue}, stop: make(chan struct{}), stopped: make(chan struct{})}
}

// guardedMetrics calls a user's Metrics so that a panic in one of its
// methods, most of which run with the queue's lock held, neither escapes
// into the queue's caller nor leaves the lock held. The first panic drops
// the whole set: metrics that have lost an observation are wrong anyway,
// and a hook that panicked once would likely panic on every call.
type guardedMetrics struct {
	h       Metrics
	queue   string
	dropped atomic.Bool
}

// recover, deferred by each method, catches its hook's panic.
func (g *guardedMetrics) recover(hook string) {
	v := recover()
	if v == nil || g.dropped.Swap(true) {
		return
	}
	slog.Default().LogAttrs(context.Background(), slog.LevelError, "queue: metrics hook "+hook+" panicked; no hook of this queue is called again",
		slog.String("hook", hook), slog.String("queue", g.queue), slog.String("panic", guard.Describe(v, guard.MaxText)), slog.String("stack", string(debug.Stack())))
}

func (g *guardedMetrics) Depth(n int) {
	if !g.dropped.Load() {
		defer g.recover("Depth")
		g.h.Depth(n)
	}
}

func (g *guardedMetrics) Added() {
	if !g.dropped.Load() {
		defer g.recover("Added")
		g.h.Added()
	}
}

func (g *guardedMetrics) QueueLatency(d time.Duration) {
	if !g.dropped.Load() {
		defer g.recover("QueueLatency")
		g.h.QueueLatency(d)
	}
}

func (g *guardedMetrics) WorkDuration(d time.Duration) {
	if !g.dropped.Load() {
		defer g.recover("WorkDuration")
		g.h.WorkDuration(d)
	}
}

func (g *guardedMetrics) Unfinished(total, longest time.Duration) {
	if !g.dropped.Load() {
		defer g.recover("Unfinished")
		g.h.Unfinished(total, longest)
	}
}

func (g *guardedMetrics) Retry() {
	if !g.dropped.Load() {
		defer g.recover("Retry")
		g.h.Retry()
	}
}

func (m *meter) grow(n int32) {
	for int(n) >= len(m.readyAt) {
		m.readyAt = append(m.readyAt, 0)
		m.startAt = append(m.startAt, 0)
		m.slot = append(m.slot, 0)
	}
}

// queued records that n became ready at stamp at.
func (m *meter) queued(n int32, depth int, at int64) {
	m.grow(n)
	m.readyAt[n] = at
	m.hooks.Depth(depth)
}

// started records that Get handed n out at stamp at, and returns how long
// n waited ready, for QueueLatency (which the queue reports out of its lock).
func (m *meter) started(n int32, depth int, at int64) time.Duration {
	m.hooks.Depth(depth)
	m.startAt[n] = at
	m.slot[n] = int32(len(m.inFlight))
	m.inFlight = append(m.inFlight, n)
	// Never negative, even for a caller's stamp out of order (a DoneStamped
	// stamp ahead of the clock makes a rerun's ready time later than a
	// GetStamped that reads the clock).
	return max(time.Duration(at-m.readyAt[n]), 0)
}

// finished records that n's work ended at stamp at, and returns its
// duration, for WorkDuration.
func (m *meter) finished(n int32, at int64) time.Duration {
	i := m.slot[n]
	last := m.inFlight[len(m.inFlight)-1]
	m.inFlight[i] = last
	m.slot[last] = i
	m.inFlight = m.inFlight[:len(m.inFlight)-1]
	return max(time.Duration(at-m.startAt[n]), 0)
}

func (m *meter) unfinished(now int64) (total, longest time.Duration) {
	for _, n := range m.inFlight {
		d := max(time.Duration(now-m.startAt[n]), 0)
		total += d
		longest = max(longest, d)
	}
	return total, longest
}

// reportUnfinished calls Metrics.Unfinished every UnfinishedInterval until
// ShutDown, or until a hook has panicked (see guardedMetrics).
func (q *Queue[K]) reportUnfinished() {
	defer close(q.m.stopped)
	t := q.clock.NewTimer(UnfinishedInterval)
	defer t.Stop()
	for {
		select {
		case <-q.m.stop:
			return
		case <-t.C():
		}
		q.mu.Lock()
		total, longest := q.m.unfinished(q.stamp())
		q.mu.Unlock()
		q.m.hooks.Unfinished(total, longest)
		if q.m.hooks.dropped.Load() {
			return
		}
		t.Reset(UnfinishedInterval)
	}
}
