package reconcile

import (
	"time"

	"github.com/steady-go/steady/queue"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
)

// KeyInfo is what Inspect reports about one key.
type KeyInfo struct {
	// Leading reports whether the Loop is working a term now.
	Leading bool
	// Running reports whether a worker is reconciling the key now.
	Running bool
	// Failures is the number of consecutive failed attempts.
	Failures int
	// LastError is the error of the last reconcile, nil after a success;
	// after a panic, a *PanicError that holds the stack.
	LastError error
	// LastResult is the metric label of the last reconcile that left state
	// behind ("error", "requeue_after", ..., see Metrics.ReconcileDone), ""
	// when the Loop holds none for the key.
	LastResult string
	// NextRetry is when the key is scheduled to run after a failure or a
	// RequeueAfter; zero when nothing is scheduled (it runs on the next hint).
	NextRetry time.Time
	// Stalled reports whether the Loop last decided the key is stalled, with
	// the reason and message it used: the whole message, which the
	// condition stores cut to one line of at most 256 bytes.
	Stalled        bool
	StalledReason  string
	StalledMessage string
	// Oscillation is the last oscillation detected, while it holds.
	Oscillation *oscillation.Report
	// HeldUntil is when an oscillation hold ends (hints wait until then).
	HeldUntil time.Time
	// Conditions are the object's conditions, read through the
	// StatusWriter; nil without one.
	Conditions []store.Condition
	// Generation is the object's generation, read through the StatusWriter.
	Generation int64
	// Queue is what the current term's queue holds for the key: queued (at
	// which priority), processing, dirty, delayed until when. Zero when the
	// Loop does not lead.
	Queue queue.KeyState
	// QueueLen is the number of keys queued in the current term.
	QueueLen int
}

// Inspect reports what the Loop knows about key: whether it is running,
// its failures, last error, next retry, Stalled decision and conditions. A
// key the Loop holds no state for (never failed, or healthy) reports zero
// values apart from Leading, Running, Conditions and QueueLen.
func (l *Loop[K]) Inspect(key K) KeyInfo {
	var info KeyInfo
	if t := l.cur.Load(); t != nil {
		info.Leading = true
		info.QueueLen = t.q.Len()
		info.Queue = publicKeyState(t.q.State(key))
		for i := range t.running {
			s := &t.running[i]
			s.mu.Lock()
			if s.busy && s.key == key {
				info.Running = true
			}
			s.mu.Unlock()
		}
	}
	l.mu.Lock()
	if s := l.keys[key]; s != nil {
		info.Failures, info.LastError, info.LastResult, info.NextRetry = s.failures, s.lastErr, s.lastResult, s.nextRetry
		if s.stalled != nil {
			info.Stalled, info.StalledReason, info.StalledMessage = true, s.stalled.reason, s.stalled.message
		}
		if s.oscillated != nil {
			o := *s.oscillated
			info.Oscillation = &o
		}
		info.HeldUntil = s.holdUntil
	}
	l.mu.Unlock()
	if l.sw != nil {
		if conds, gen, ok := l.sw.Conditions(key); ok {
			info.Conditions, info.Generation = conds, gen
		}
	}
	return info
}
