package reconcile

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

// stalledUpdate computes the Stalled condition that loop sets after a
// reconcile of an object at generation gen, and reports whether it must be
// written. owned reports whether the Loop's own manager owns the object's
// Stalled condition (ConditionWriter.OwnsCondition), which is how a Loop knows
// a Stalled is its own.
//
//   - stalledSet sets Stalled=True with reason, and the message after the
//     Loop's name (for people: ownership, not the text, says whose it is),
//     bounded by conditionMessage.
//     A Stalled=True that already has this reason is kept as it is,
//     whatever its message: a condition changes when its status or reason
//     does, so an error whose text varies, or two Loops reporting the same
//     oscillation, never rewrite it. For a new generation gen it is
//     rewritten (to record gen) only from regen on: the caller passes the
//     time of its last write of it plus the backoff cap (zero when it
//     knows of none), so a spec that moves at every write, as in a fight
//     or under an autoscaler, costs one write per cap, not one per
//     generation.
//   - stalledClear sets Stalled=False (conditions.ReasonRecovered) only when Stalled is
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
		if old, ok := conditions.Get(conds, conditions.Stalled); ok && old.Status == store.ConditionTrue &&
			old.Reason == reason && (old.ObservedGeneration == gen || now.Before(regen)) {
			return conds, false
		}
		c = store.Condition{Type: conditions.Stalled, Status: store.ConditionTrue, Reason: reason, Message: conditionMessage(loop + ": " + message), ObservedGeneration: gen}
	case stalledClear:
		if !owned || !stalledNotFalse(conds) {
			return conds, false
		}
		c = store.Condition{Type: conditions.Stalled, Status: store.ConditionFalse, Reason: conditions.ReasonRecovered, Message: conditionMessage(loop + ": recovered"), ObservedGeneration: gen}
	default:
		return conds, false
	}
	changed, err := conditions.Set(&conds, c, now)
	return conds, changed && err == nil
}

// stalledNotFalse reports whether conds hold a Stalled condition that is not
// False.
func stalledNotFalse(conds []store.Condition) bool {
	c, ok := conditions.Get(conds, conditions.Stalled)
	return ok && c.Status != store.ConditionFalse
}

// maxMessage bounds every condition message the Loop stores: the store
// keeps it on the object, where anyone who can read the object reads it,
// and a message that does not fit the store's value size would keep the
// condition from being written at all.
const maxMessage = 256

// cutMarker ends a message conditionMessage had to cut.
const cutMarker = "..."

// conditionMessage returns s as the Loop stores it in a condition: one line
// of valid UTF-8 of at most maxMessage bytes. Runs of white space and
// control characters (newlines included) become one space, invalid bytes
// become U+FFFD, and a longer text is cut on a rune boundary and ends with
// cutMarker. It reads no more of s than it keeps: the cost of a 1 MiB error
// is that of its first line. A short plain line is returned as it is.
func conditionMessage(s string) string {
	if plainLine(s) {
		return s
	}
	b := make([]byte, 0, min(len(s), maxMessage+utf8.UTFMax+1))
	space := false
	for _, r := range s { // an invalid byte is utf8.RuneError: U+FFFD
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = len(b) > 0
			continue
		}
		if space {
			b, space = append(b, ' '), false
		}
		b = utf8.AppendRune(b, r)
		if len(b) > maxMessage {
			break
		}
	}
	if len(b) <= maxMessage {
		return string(b)
	}
	cut := maxMessage - len(cutMarker)
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strings.TrimRight(string(b[:cut]), " ") + cutMarker
}

// plainLine reports whether s is printable ASCII of at most maxMessage
// bytes with single spaces between words: what conditionMessage keeps.
func plainLine(s string) bool {
	if len(s) > maxMessage || len(s) > 0 && (s[0] == ' ' || s[len(s)-1] == ' ') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c > '~' || c == ' ' && s[i-1] == ' ' {
			return false
		}
	}
	return true
}
