package reconciletest

// Harm names what a failing schedule did that a user cares about. Every
// violation names one, from this closed list; the package documentation
// tables which harm catches which class of bug.
//
// What a fault makes the controller do that is no harm is a note
// (Report.Notes), never a failure: transient work from a stale view that
// the controller itself repairs, such as a child created for an owner
// already deleted, then deleted again.
type Harm string

const (
	// HarmEndState: the end state differs from the fault-free run's: a
	// child is left at the end that the reference run does not leave (a
	// leaked child), is missing that it leaves, or ends with another
	// spec; or a child is left at the end whose owner is gone for good, in
	// any run (a leaked child, whatever the reference run leaves). (A
	// primary object whose spec or status is not what Config.Converged
	// asks is HarmNotConverged.)
	HarmEndState Harm = "end state differs"
	// HarmLiveAction: an action on live state that no fault-free run
	// takes: deleting or overwriting a child whose owner is live and
	// unchanged (no competing write touched it, its UID is the current
	// one, its deletion not requested), more often than the reference run
	// does; or a write accepted from a deposed leader.
	HarmLiveAction Harm = "action on live state"
	// HarmLostUpdate: a reconciler write set a field of a primary object
	// back to what it was before another manager changed it.
	HarmLostUpdate Harm = "lost update"
	// HarmStorm: a write storm or condition churn past the Loop's budget:
	// more writes than Report.WriteBound, writes to a converged object,
	// reconciles of a converged or deleted object past
	// Report.ReconcileBound, or failed reconciles once converged.
	HarmStorm Harm = "write storm"
	// HarmNotConverged: not converging within the bound (Report.Bound): an
	// object not converged, an unreconcilable one not Stalled (or Stalled
	// without a reason), a converged one still Stalled, a deleted one
	// still there.
	HarmNotConverged Harm = "not converged"
	// HarmContract is no harm of the controller's but a run the harness
	// cannot judge: the reconciler or its Config broke the harness's
	// contract (a cached object modified, a Setup, cache or Loop error, a
	// Loop that did not stop). A fault-free reference run that fails too
	// fails with the harm it shows.
	HarmContract Harm = "broken contract"
)
