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
// Source and the reconcile's ID; and what reconcilers record with events.Emit.
// Only objects the Loop's ConditionWriter knows get events (FromStore's
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

// withEvents returns the worker's ctx with an emitter (events.Emit) that
// records on the object of the key slot holds, when the Loop has events.
func (l *Loop[K]) withEvents(ctx context.Context, rec *recorder, slot *runningSlot[K]) context.Context {
	if l.cfg.events == nil || l.marks == nil {
		return ctx
	}
	return history.NewContext(ctx, func(typ, reason, message string) {
		slot.mu.Lock()
		key := slot.key
		slot.mu.Unlock()
		l.recordEvent(key, rec.reconcileID(), typ, reason, message)
	})
}

// recordEvent records an event about key's object, when the Loop has
// events and knows the object.
func (l *Loop[K]) recordEvent(key K, id, typ, reason, message string) {
	if l.cfg.events == nil || l.marks == nil {
		return
	}
	kind, name, uid, ok := l.marks.about(key)
	if !ok {
		return
	}
	l.cfg.events.Record(history.Event{Kind: kind, Name: name, UID: uid, Type: typ, Reason: reason,
		Message: message, Source: l.name, ReconcileID: id})
}
