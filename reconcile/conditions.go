package reconcile

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/steady-go/steady/store"
)

// Condition types. The Loop owns Stalled; Ready belongs to the user's
// reconciler.
const (
	// Stalled is True while the Loop cannot make progress on an object. The
	// Loop sets and clears it; reconcilers should not.
	Stalled = "Stalled"
	// Ready is True when the object matches its description at
	// ObservedGeneration. The user's reconciler sets it; the Loop reads it to
	// measure time to converge.
	Ready = "Ready"
)

// Reasons the Loop writes on the Stalled condition.
const (
	// ReasonFailing: the reconcile failed several times in a row.
	ReasonFailing = "ReconcileFailing"
	// ReasonBlocked is Blocked's default reason.
	ReasonBlocked = "Blocked"
	// ReasonTerminal: the reconcile returned a Terminal error.
	ReasonTerminal = "TerminalError"
	// ReasonOscillating: the manager keeps writing the object without
	// progress, or fights another manager over a field; the message names
	// the paths.
	ReasonOscillating = "Oscillating"
	// ReasonRecovered is the reason of a Stalled condition set back to False.
	ReasonRecovered = "Recovered"
)

// ErrInvalidCondition is wrapped by SetCondition's error for a condition with
// an empty Type or a Status other than True, False or Unknown.
var ErrInvalidCondition = errors.New("reconcile: invalid condition")

// SetCondition puts c into *conds, keyed by c.Type, and reports whether
// anything changed. It is the way to write conditions without causing
// writes that change nothing:
//
//   - If a condition of that type exists with the same Status, Reason,
//     Message and ObservedGeneration, nothing changes and changed is false,
//     so the caller can skip the write.
//   - LastTransitionTime moves (to now, or to c.LastTransitionTime if that is
//     set) only when the Status flips or the condition is new; otherwise the
//     existing time is kept.
//   - ObservedGeneration is recorded as given.
//
// SetCondition never writes into the slice it was given (values from the
// cache are read-only): when something changes, *conds is replaced by a new
// slice. A nil conds, an empty Type or an unknown Status gives an error
// wrapping ErrInvalidCondition and changes nothing.
func SetCondition(conds *[]store.Condition, c store.Condition, now time.Time) (changed bool, err error) {
	switch {
	case conds == nil:
		return false, fmt.Errorf("%w: nil condition list", ErrInvalidCondition)
	case c.Type == "":
		return false, fmt.Errorf("%w: empty type", ErrInvalidCondition)
	case c.Status != store.ConditionTrue && c.Status != store.ConditionFalse && c.Status != store.ConditionUnknown:
		return false, fmt.Errorf("%w: type %s: status %q is not True, False or Unknown", ErrInvalidCondition, c.Type, c.Status)
	}
	i := slices.IndexFunc(*conds, func(x store.Condition) bool { return x.Type == c.Type })
	if i < 0 {
		if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = now
		}
		out := make([]store.Condition, len(*conds), len(*conds)+1)
		copy(out, *conds)
		*conds = append(out, c)
		return true, nil
	}
	old := (*conds)[i]
	if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message &&
		old.ObservedGeneration == c.ObservedGeneration {
		return false, nil
	}
	switch {
	case old.Status == c.Status:
		c.LastTransitionTime = old.LastTransitionTime
	case c.LastTransitionTime.IsZero():
		c.LastTransitionTime = now
	}
	out := slices.Clone(*conds)
	out[i] = c
	*conds = out
	return true, nil
}

// GetCondition returns the condition of type t, and whether there is one.
func GetCondition(conds []store.Condition, t string) (store.Condition, bool) {
	i := slices.IndexFunc(conds, func(x store.Condition) bool { return x.Type == t })
	if i < 0 {
		return store.Condition{}, false
	}
	return conds[i], true
}

// IsTrue reports whether the condition of type t is present with Status True.
func IsTrue(conds []store.Condition, t string) bool {
	c, ok := GetCondition(conds, t)
	return ok && c.Status == store.ConditionTrue
}

// RemoveCondition deletes the condition of type t and reports whether it was
// there. Like SetCondition it replaces *conds instead of writing into it; a
// nil conds changes nothing.
func RemoveCondition(conds *[]store.Condition, t string) bool {
	if conds == nil {
		return false
	}
	i := slices.IndexFunc(*conds, func(x store.Condition) bool { return x.Type == t })
	if i < 0 {
		return false
	}
	*conds = slices.Delete(slices.Clone(*conds), i, i+1)
	return true
}
