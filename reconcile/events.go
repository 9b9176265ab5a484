package reconcile

import (
	"context"

	history "github.com/steady-go/steady/events"
	"github.com/steady-go/steady/internal/nilness"
)

// WithEvents records the Loop's events about its objects into r (run
// r.Run beside the Loop; see package events): a
// key's first failure (Warning, reason ReconcileFailed, the error), its
// move to Stalled (Warning, the Stalled reason and message), a pause and
// a resume (Normal, Paused and Resumed), each with the Loop's name as
// Source and the reconcile's ID; and what reconcilers record with Event.
// Only objects the Loop's StatusWriter knows get events (FromStore's
// does). Recording never blocks a reconcile: a full buffer drops.
func WithEvents(r *history.Recorder) Option {
	return optionFunc(func(c *config) error {
		if nilness.IsNil(r) {
			return invalid("nil event recorder")
		}
		c.events = r
		return nil
	})
}

// Event records an event about the object of the reconcile running with
// ctx, in the Loop's event history (WithEvents), with the reconcile's ID:
// typ is events.Normal or events.Warning, reason a CamelCase word, message
// for people. Repeats are aggregated into a count. It never blocks; it
// does nothing for a ctx that does not come from a Loop with events.
func Event(ctx context.Context, typ, reason, message string) {
	if r, ok := ctx.Value(recorderKey{}).(*recorder); ok && r.event != nil {
		r.event(r, typ, reason, message)
	}
}

// setEvents makes rec's Event record on the object of the key slot holds.
func (l *Loop[K]) setEvents(rec *recorder, slot *runningSlot[K]) {
	if l.cfg.events == nil || l.marks == nil {
		return
	}
	rec.event = func(r *recorder, typ, reason, message string) {
		slot.mu.Lock()
		key := slot.key
		slot.mu.Unlock()
		l.recordEvent(key, r.reconcileID(), typ, reason, message)
	}
}

// recordEvent records an event about key's object, when the Loop has
// events and knows the object.
func (l *Loop[K]) recordEvent(key K, id, typ, reason, message string) {
	if l.cfg.events == nil || l.marks == nil {
		return
	}
	m, ok := l.marks.marks(key)
	if !ok {
		return
	}
	l.cfg.events.Record(history.Event{Kind: m.kind, Name: m.name, UID: m.uid, Type: typ, Reason: reason,
		Message: message, Source: l.name, ReconcileID: id})
}
