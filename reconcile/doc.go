// Package reconcile drives level-triggered reconciliation: a Reconciler is
// given the key of an object, compares desired with observed state, acts, and
// returns a Result and an error; the Loop decides from those what happens
// next, reports objects that cannot make progress with a Stalled condition,
// and keeps its own bookkeeping out of the way of the user's.
//
// # The result table
//
// After every reconcile the Loop applies exactly one row:
//
//	return                failures   next run                                Stalled
//	nil                   reset      next hint or resync                     cleared
//	Result{Requeue}       unchanged  once the cache holds the last write     unchanged
//	Result{RequeueAfter}  reset      after RequeueAfter                      cleared
//	err                   +1         after max(backoff, RequeueAfter)        set after N failures (default 5)
//	Blocked(reason, err)  +1         after max(backoff, RequeueAfter)        set now, with reason
//	RetryAfter(err, d)    +1         after max(d, backoff, RequeueAfter)     as for err
//	Terminal(err)         reset      after RequeueAfter, else next hint      set (ReasonTerminal)
//
// Interactions, stated once:
//   - RequeueAfter wins over Requeue when both are set.
//   - A Result returned together with an error follows the error's row and
//     logs one warning per key (Terminal with RequeueAfter excepted: that
//     combination is part of the table).
//   - Wrappers nest: Terminal wins over anything inside it; Blocked and
//     RetryAfter combine (Stalled now, and the later of the two delays).
//   - Stalled follows the failure count: a row that resets the count without
//     an error clears it; "cleared" writes Stalled=False only on an object
//     that has a Stalled=True condition, so a healthy object gets no write.
//   - A reconcile that ends because the Loop is stopping (ctx cause
//     ErrShutdown) is not counted at all.
//
// # Conditions
//
// SetCondition, GetCondition, IsTrue and RemoveCondition work on the
// framework-level []store.Condition of any object. SetCondition moves
// LastTransitionTime only when the status flips, records ObservedGeneration,
// and reports changed=false for an equal condition so no write happens. The
// Loop owns only the Stalled condition; Ready belongs to the user.
//
// # Own writes and oscillation
//
// Both are judged by field ownership. A watch event whose LastWrite.Manager is
// the Loop's manager and whose every changed path that manager owns is not a
// hint, so a status write cannot defeat backoff; changes by other actors
// merged into the same event still trigger. A Detector watches the writes to
// one object: a Fight is a path this manager re-sets 3 times within a minute
// after another manager changed it; NoProgress is 10 writes within a minute
// with no change to any field this manager does not own. Either is reported
// as Stalled with reason ReasonOscillating, naming the paths.
//
// # Metrics
//
// Metrics is an interface with the semantics of controller-runtime's
// controller_runtime_* metrics, plus time to converge and the number of
// unconverged objects. NopMetrics is the default; MemMetrics records in
// memory for tests.
package reconcile
