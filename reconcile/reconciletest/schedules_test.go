package reconciletest_test

import (
	"testing"

	"github.com/steady-go/steady/reconcile/reconciletest"
)

// TestSchedules runs the correct reconciler through -schedules seeded
// schedules (default 200) of every fault: each must converge within the
// bound, write nothing once converged, stall what cannot be reconciled, and
// never have a write accepted from a stale term.
func TestSchedules(t *testing.T) {
	reconciletest.Run(t, config(noBug, reconciletest.AllFaults()))
}
