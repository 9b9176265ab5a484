package reconcile

import (
	"time"

	"github.com/steady-go/steady/store"
)

// stalledUpdate computes the Stalled condition after a reconcile of an
// object at generation gen, and reports whether it must be written.
//
//   - stalledSet sets Stalled=True with reason and message.
//   - stalledClear sets Stalled=False (ReasonRecovered) only when Stalled is
//     present and not already False: an object that was never stalled gets
//     no write.
//   - stalledKeep changes nothing.
//
// conds is not modified.
func stalledUpdate(conds []store.Condition, change stalledChange, reason, message string, gen int64, now time.Time) ([]store.Condition, bool) {
	var c store.Condition
	switch change {
	case stalledSet:
		c = store.Condition{Type: Stalled, Status: store.ConditionTrue, Reason: reason, Message: message, ObservedGeneration: gen}
	case stalledClear:
		old, ok := GetCondition(conds, Stalled)
		if !ok || old.Status == store.ConditionFalse {
			return conds, false
		}
		c = store.Condition{Type: Stalled, Status: store.ConditionFalse, Reason: ReasonRecovered, ObservedGeneration: gen}
	default:
		return conds, false
	}
	changed, err := SetCondition(&conds, c, now)
	return conds, changed && err == nil
}
