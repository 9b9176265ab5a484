package reconcile

import (
	"strings"
	"time"

	"github.com/steady-go/steady/store"
)

// stalledUpdate computes the Stalled condition that loop sets after a
// reconcile of an object at generation gen, and reports whether it must be
// written. The message of a Stalled the Loop sets starts with its name
// (stalledPrefix), which is how a Loop knows a Stalled is its own.
//
//   - stalledSet sets Stalled=True with reason and the prefixed message.
//   - stalledClear sets Stalled=False (ReasonRecovered) only when Stalled is
//     present, not already False, and set by this loop: an object that was
//     never stalled gets no write, and a Loop never clears another Loop's
//     Stalled.
//   - stalledKeep changes nothing.
//
// conds is not modified.
func stalledUpdate(conds []store.Condition, loop string, change stalledChange, reason, message string, gen int64, now time.Time) ([]store.Condition, bool) {
	var c store.Condition
	switch change {
	case stalledSet:
		c = store.Condition{Type: Stalled, Status: store.ConditionTrue, Reason: reason, Message: stalledPrefix(loop) + message, ObservedGeneration: gen}
	case stalledClear:
		old, ok := GetCondition(conds, Stalled)
		if !ok || !stalledBy(old, loop) {
			return conds, false
		}
		c = store.Condition{Type: Stalled, Status: store.ConditionFalse, Reason: ReasonRecovered, Message: stalledPrefix(loop) + "recovered", ObservedGeneration: gen}
	default:
		return conds, false
	}
	changed, err := SetCondition(&conds, c, now)
	return conds, changed && err == nil
}

// stalledPrefix starts the message of every Stalled condition loop writes.
func stalledPrefix(loop string) string { return loop + ": " }

// stalledBy reports whether c is a Stalled condition, not False, that loop set.
func stalledBy(c store.Condition, loop string) bool {
	return c.Type == Stalled && c.Status != store.ConditionFalse && strings.HasPrefix(c.Message, stalledPrefix(loop))
}
