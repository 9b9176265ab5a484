package queue

import (
	"time"

	"github.com/steady-go/steady/internal/workqueue"
)

// KeyState is what the queue knows about one key at one moment. The zero
// KeyState means the queue holds nothing for the key.
type KeyState struct {
	// Queued is true while the key is ready and waiting for Get, at
	// Priority.
	Queued bool
	// Priority is the level the key waits at when Queued, or will be
	// queued at when Dirty. It is Normal otherwise.
	Priority Priority
	// Processing is true from Get until Done.
	Processing bool
	// Dirty is true when the key was added while processing, so it will be
	// queued again, at Priority, when Done is called.
	Dirty bool
	// Delayed is true while the key waits for ReadyAt, after AddAfter or
	// AddRateLimited. A key may be Delayed and Processing at once.
	Delayed bool
	// ReadyAt is when a Delayed key becomes ready; zero otherwise.
	ReadyAt time.Time
}

// Idle reports whether the queue holds nothing for the key.
func (s KeyState) Idle() bool { return s == KeyState{} }

// keyState is the core's KeyState as this package's.
func keyState(s workqueue.KeyState) KeyState {
	return KeyState{Queued: s.Queued, Priority: Priority(s.Priority), Processing: s.Processing, Dirty: s.Dirty,
		Delayed: s.Delayed, ReadyAt: s.ReadyAt}
}

// Counts is how many keys a queue holds in each state at one moment. A key
// may count in more than one field: a key processing and also delayed, or
// processing and dirty, counts in both.
type Counts struct {
	// Ready is the number of keys waiting for Get at Normal priority, Low
	// at Low priority; Ready+Low is Len.
	Ready, Low int
	// Processing is the number of keys handed out by Get and not yet Done.
	Processing int
	// Dirty is the number of processing keys that will be queued again at
	// Done.
	Dirty int
	// Delayed is the number of keys waiting for a ready time (AddAfter,
	// AddRateLimited).
	Delayed int
}

// Metrics receives a queue's measurements, with the meaning of client-go's
// workqueue_* metrics. Adapt it to any metrics library; embed NopMetrics to
// implement only some methods.
//
// The queue calls the methods synchronously, some with its lock held: they
// must be quick, safe for concurrent use, and must not call the queue. A
// method that panics is recovered where it was called, so that neither the
// panic nor a held lock reaches the queue's caller: the queue logs it once
// (slog.Default, with its stack), calls no method of that Metrics again,
// and works on. Without WithMetrics the queue takes no timestamps.
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
	// processing. It is called from the queue's own goroutine.
	Unfinished(total, longest time.Duration)
	// Retry counts a call of AddRateLimited.
	Retry()
}

// UnfinishedInterval is how often a queue with metrics calls
// Metrics.Unfinished.
const UnfinishedInterval = workqueue.UnfinishedInterval

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
