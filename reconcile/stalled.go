package reconcile

import (
	"time"

	"github.com/steady-go/steady/store"
)

// stalledUpdate computes the Stalled condition that loop sets after a
// reconcile of an object at generation gen, and reports whether it must be
// written. owned reports whether the Loop's own manager owns the object's
// Stalled condition (StatusWriter.OwnsCondition), which is how a Loop knows
// a Stalled is its own.
//
//   - stalledSet sets Stalled=True with reason, and the message after the
//     Loop's name (for people: ownership, not the text, says whose it is).
//     A Stalled=True that already has this reason is kept as it is,
//     whatever its message: a condition changes when its status or reason
//     does, so an error whose text varies, or two Loops reporting the same
//     oscillation, never rewrite it. For a new generation gen it is
//     rewritten (to record gen) only from regen on: the caller passes the
//     time of its last write of it plus the backoff cap (zero when it
//     knows of none), so a spec that moves at every write, as in a fight
//     or under an autoscaler, costs one write per cap, not one per
//     generation.
//   - stalledClear sets Stalled=False (ReasonRecovered) only when Stalled is
//     present, not already False, and owned by this Loop: an object that
//     was never stalled gets no write, and a Loop never clears another
//     Loop's Stalled.
//   - stalledKeep changes nothing.
//
// conds is not modified.
func stalledUpdate(conds []store.Condition, loop string, owned bool, change stalledChange, reason, message string, gen int64, now, regen time.Time) ([]store.Condition, bool) {
	var c store.Condition
	switch change {
	case stalledSet:
		if old, ok := GetCondition(conds, Stalled); ok && old.Status == store.ConditionTrue &&
			old.Reason == reason && (old.ObservedGeneration == gen || now.Before(regen)) {
			return conds, false
		}
		c = store.Condition{Type: Stalled, Status: store.ConditionTrue, Reason: reason, Message: loop + ": " + message, ObservedGeneration: gen}
	case stalledClear:
		if !owned || !stalledNotFalse(conds) {
			return conds, false
		}
		c = store.Condition{Type: Stalled, Status: store.ConditionFalse, Reason: ReasonRecovered, Message: loop + ": recovered", ObservedGeneration: gen}
	default:
		return conds, false
	}
	changed, err := SetCondition(&conds, c, now)
	return conds, changed && err == nil
}

// stalledNotFalse reports whether conds hold a Stalled condition that is not
// False.
func stalledNotFalse(conds []store.Condition) bool {
	c, ok := GetCondition(conds, Stalled)
	return ok && c.Status != store.ConditionFalse
}
