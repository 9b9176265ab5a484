package queue

import (
	"time"

	"github.com/steady-go/steady/clock"
)

// Metrics receives a queue's measurements, with the meaning of client-go's
// workqueue_* metrics. Adapt it to any metrics library; embed NopMetrics to
// implement only some methods.
//
// The queue calls the methods synchronously, some with its lock held: they
// must be quick, safe for concurrent use, and must not call the queue.
// Without WithMetrics the queue takes no timestamps at all.
type Metrics interface {
	// Depth reports the number of ready keys, both priorities, whenever
	// it changes.
	Depth(n int)
	// Added counts an add that made work: one that queued a key, or made
	// a processing key due to rerun. Adds absorbed by deduplication, and
	// AddAfter before its delay has passed, are not counted.
	Added()
	// QueueLatency reports how long a key waited ready before Get handed
	// it out.
	QueueLatency(d time.Duration)
	// WorkDuration reports how long a key was processing, from Get to
	// Done.
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
// queue with metrics pays for them.
type meter struct {
	hooks    Metrics
	clock    clock.Clock
	real     bool // clock is clock.Real: read it with time.Since
	epoch    time.Time
	readyAt  []int64       // per node: when it last became ready
	startAt  []int64       // per node: when Get handed it out
	slot     []int32       // per node: its index in inFlight
	inFlight []int32       // nodes processing, in no order
	stop     chan struct{} // closed by ShutDown
	stopped  chan struct{} // closed when reportUnfinished returns
}

func newMeter(h Metrics, c clock.Clock, epoch time.Time) *meter {
	_, real := c.(clock.Real)
	return &meter{hooks: h, clock: c, real: real, epoch: epoch, stop: make(chan struct{}), stopped: make(chan struct{})}
}

// now is Queue.now: with the real clock, time.Since reads only the
// monotonic clock, half the cost of time.Now (the meter reads it at every
// add, Get and Done).
func (m *meter) now() int64 {
	if m.real {
		return int64(time.Since(m.epoch))
	}
	return int64(m.clock.Now().Sub(m.epoch))
}

func (m *meter) grow(n int32) {
	for int(n) >= len(m.readyAt) {
		m.readyAt = append(m.readyAt, 0)
		m.startAt = append(m.startAt, 0)
		m.slot = append(m.slot, 0)
	}
}

func (m *meter) queued(n int32, depth int) {
	m.grow(n)
	m.readyAt[n] = m.now()
	m.hooks.Depth(depth)
}

func (m *meter) started(n int32, depth int) {
	now := m.now()
	m.hooks.Depth(depth)
	m.hooks.QueueLatency(time.Duration(now - m.readyAt[n]))
	m.startAt[n] = now
	m.slot[n] = int32(len(m.inFlight))
	m.inFlight = append(m.inFlight, n)
}

func (m *meter) finished(n int32) {
	m.hooks.WorkDuration(time.Duration(m.now() - m.startAt[n]))
	i := m.slot[n]
	last := m.inFlight[len(m.inFlight)-1]
	m.inFlight[i] = last
	m.slot[last] = i
	m.inFlight = m.inFlight[:len(m.inFlight)-1]
}

func (m *meter) unfinished() (total, longest time.Duration) {
	now := m.now()
	for _, n := range m.inFlight {
		d := time.Duration(now - m.startAt[n])
		total += d
		longest = max(longest, d)
	}
	return total, longest
}

// reportUnfinished calls Metrics.Unfinished every UnfinishedInterval until
// ShutDown.
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
		total, longest := q.m.unfinished()
		q.mu.Unlock()
		q.m.hooks.Unfinished(total, longest)
		t.Reset(UnfinishedInterval)
	}
}
