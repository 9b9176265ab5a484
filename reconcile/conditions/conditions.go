package conditions

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

// Reasons the Loop writes on the Stalled condition. A reconcile.Blocked
// error's reason is the reconciler's own (ReasonBlocked when it gives none).
const (
	// ReasonFailing: the reconcile failed several times in a row.
	ReasonFailing = "ReconcileFailing"
	// ReasonBlocked is reconcile.Blocked's default reason.
	ReasonBlocked = "Blocked"
	// ReasonTerminal: the reconcile returned a reconcile.Terminal error.
	ReasonTerminal = "TerminalError"
	// ReasonOscillating: the manager keeps writing the object without
	// progress, or fights another manager over a field; the message names
	// the paths.
	ReasonOscillating = "Oscillating"
	// ReasonRecovered is the reason of a Stalled condition set back to False.
	ReasonRecovered = "Recovered"
)

// Paused is the condition type the Loop writes on an object annotated
// steady.dev/paused="true" (see package reconcile): True (reason
// "PausedByAnnotation") while paused, False (reason "Resumed") once the
// annotation is gone.
const Paused = "Paused"

// Reconciling is the condition type the Loop writes, as kstatus defines it,
// on the objects it reads through reconcile.StoreConditions
// (reconcile.FromStore's source). With Stalled (the Loop's), Ready (the
// reconciler's) and the ObservedGeneration the conditions carry, it lets
// kstatus read an object as InProgress, Current or Failed (see package
// debugpage, Kstatus, which reads an object's observedGeneration as the
// highest ObservedGeneration of its conditions):
//
//   - A generation not yet reconciled is InProgress: kstatus reads an
//     observedGeneration behind the generation as Reconciling (reason
//     LatestGenerationNotObserved). The reconciler's Ready carries the
//     generation it was computed from, and so moves it on.
//   - An object no condition has observed yet (a new one) has no such
//     generation to lag, and kstatus reads it Current: while it waits in
//     the queue, and while its first reconcile runs, since the Loop writes
//     nothing before it (the reconciler can write Ready=False first if it
//     wants it InProgress sooner). If that first reconcile does not
//     succeed (an error, or RequeueAfterWrite), the Loop sets
//     Reconciling=True (reason "Progressing") after it, so that the object
//     reads InProgress, not Current, while it is retried, and waits (at
//     most the read-your-writes timeout) until its cache shows the write,
//     so the retry reads the object as stored. Whether the object was new
//     is judged as it was before the reconcile (a reconciler that wrote an
//     observed Ready=False and failed still gets Reconciling=True), except
//     when more than 1,024 objects of its cache turned new or stopped
//     being new while the reconcile ran (a burst of creations): it is then
//     judged as it is after, and one the reconcile observed gets none.
//     A first reconcile that succeeds costs no Reconciling write: the object reads as the
//     reconciler left it (its Ready, at the generation it read). One that
//     sets Stalled=True writes no Reconciling: the object reads Failed.
//   - A reconcile that succeeds (nil, or RequeueAfter with no error) sets
//     the Loop's Reconciling=True to False (reason "Reconciled"); a failure
//     or a RequeueAfterWrite keeps it True.
//   - Setting Stalled=True sets the Loop's Reconciling=True to False
//     (reason "Stalled") in the same write, since kstatus reads Reconciling
//     before Stalled.
//
// The Loop's Reconciling carries no ObservedGeneration: it observes no
// spec, and a Reconciling=False of an earlier generation must not hold the
// observed generation back. The cost is at most two writes in an
// object's life (none when its first reconcile succeeds), and none per
// reconcile or per generation: a burst of spec changes, or resyncs and
// hints of an unchanged object, make the Loop write no Reconciling.
// (Writing True before every new object's first reconcile, as the Loop
// once did, cost two writes per object, about 40% of the CPU of the fleet
// example at 20,000 groups. Setting it for every new generation would cost two writes
// per spec change: 1,000 spec changes in a second made the Loop write
// 306 to 1,994 times on one object, where its bound is 5.) These writes
// are status-only, by the Loop's own manager, and a change to Reconciling
// alone is never a hint for any Loop. So a reconciler must return the
// ErrConflict of a whole-object Update, not swallow it in the hope that
// the change which beat it brings another hint: another Loop's
// Reconciling write changes the revision and brings none.
//
// A reconciler that writes Reconciling itself keeps it: the Loop writes
// the condition only on objects that have none, and changes only its own.
// Under observe-only (reconcile.WithObserveOnly) the Loop writes no Reconciling, nor
// do Loops whose ConditionWriter is not StoreConditions.
const Reconciling = "Reconciling"

// ErrInvalid is wrapped by Set's error for a condition with an empty Type
// or a Status other than True, False or Unknown.
var ErrInvalid = errors.New("conditions: invalid condition")

// Set puts c into *conds, keyed by c.Type, and reports whether
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
// Set never writes into the slice it was given (values from the
// cache are read-only): when something changes, *conds is replaced by a new
// slice. A nil conds, an empty Type or an unknown Status gives an error
// wrapping ErrInvalid and changes nothing.
func Set(conds *[]store.Condition, c store.Condition, now time.Time) (changed bool, err error) {
	switch {
	case conds == nil:
		return false, fmt.Errorf("%w: nil condition list", ErrInvalid)
	case c.Type == "":
		return false, fmt.Errorf("%w: empty type", ErrInvalid)
	case c.Status != store.ConditionTrue && c.Status != store.ConditionFalse && c.Status != store.ConditionUnknown:
		return false, fmt.Errorf("%w: type %s: status %q is not True, False or Unknown", ErrInvalid, c.Type, c.Status)
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

// Get returns the condition of type t, and whether there is one.
func Get(conds []store.Condition, t string) (store.Condition, bool) {
	i := slices.IndexFunc(conds, func(x store.Condition) bool { return x.Type == t })
	if i < 0 {
		return store.Condition{}, false
	}
	return conds[i], true
}

// IsTrue reports whether the condition of type t is present with Status True.
func IsTrue(conds []store.Condition, t string) bool {
	c, ok := Get(conds, t)
	return ok && c.Status == store.ConditionTrue
}

// Remove deletes the condition of type t and reports whether it was
// there. Like Set it replaces *conds instead of writing into it; a
// nil conds changes nothing.
func Remove(conds *[]store.Condition, t string) bool {
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
