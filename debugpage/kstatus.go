package debugpage

import (
	"fmt"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

// The kstatus statuses (sigs.k8s.io/cli-utils/pkg/kstatus) Kstatus returns.
const (
	KstatusCurrent     = "Current"
	KstatusInProgress  = "InProgress"
	KstatusFailed      = "Failed"
	KstatusTerminating = "Terminating"
)

// Kstatus computes an object's status the way kstatus computes a
// Kubernetes resource's, from its generation, whether its deletion was
// requested, and its conditions, read as a resource whose
// metadata.generation is the generation, whose metadata.deletionTimestamp
// is set when deleting, whose status.conditions are the conditions, and
// whose status.observedGeneration is the highest ObservedGeneration among
// them (absent when none has one). In kstatus' order:
//
//   - Terminating while deleting;
//   - InProgress while that observed generation is not the generation;
//   - InProgress while Reconciling=True; Failed while Stalled=True (the
//     Loop's report);
//   - Current while Ready=True, InProgress while Ready is False or
//     Unknown; Current without a Ready condition.
//
// A test-only module (reconcile/kstatuscheck) runs kstatus itself on
// objects a Loop wrote, and checks that the two agree. message says why.
func Kstatus(generation int64, deleting bool, conds []store.Condition) (status, message string) {
	if deleting {
		return KstatusTerminating, "deletion requested"
	}
	var observed int64
	for _, c := range conds {
		observed = max(observed, c.ObservedGeneration)
	}
	if observed != 0 && generation != 0 && observed != generation {
		return KstatusInProgress, fmt.Sprintf("generation is %d, but latest observed generation is %d", generation, observed)
	}
	if c, ok := conditions.Get(conds, "Reconciling"); ok && c.Status == store.ConditionTrue {
		return KstatusInProgress, c.Message
	}
	if c, ok := conditions.Get(conds, conditions.Stalled); ok && c.Status == store.ConditionTrue {
		return KstatusFailed, c.Message
	}
	if c, ok := conditions.Get(conds, conditions.Ready); ok {
		if c.Status == store.ConditionTrue {
			return KstatusCurrent, "Resource is Ready"
		}
		return KstatusInProgress, c.Message
	}
	return KstatusCurrent, "Resource is current"
}
