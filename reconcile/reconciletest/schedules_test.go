package reconciletest_test

import (
	"flag"
	"testing"

	"github.com/steady-go/steady/reconcile/reconciletest"
)

// TestSchedules runs the correct reconciler through -schedules seeded
// schedules (default 460) of every fault: each must converge within the
// bound, write nothing once converged, stall what cannot be reconciled, and
// never have a write accepted from a stale term.
//
// Under the race detector it runs 100 unless -schedules is given: the
// race detector slows a schedule about sixfold, and scripts/test.sh runs
// this test again without it, with -schedules=300 (scripts/flaky.sh: 1000).
func TestSchedules(t *testing.T) {
	cfg := config(noBug, reconciletest.AllFaults())
	if raceEnabled && !flagGiven("schedules") {
		cfg.Schedules = 100
	}
	reconciletest.Run(t, cfg)
}

// flagGiven reports whether the flag called name was set on the command
// line.
func flagGiven(name string) bool {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// sweepSeeds is the number of seeds a seed sweep runs: n, or a quarter of
// it (at least 2) under the race detector, which needs the code paths, not
// every seed, and slows these runs 20 to 100 times (TestStaleTermWrites...
// took 2.3s without it, minutes with it). With a quarter of the seeds a
// sweep checks every run but not that each fault struck in some run (a
// fault may strike in seeds 13 and 38 only): scripts/test.sh runs the
// sweeps again without the race detector, in full (sweepsWithoutRace).
func sweepSeeds(n uint64) uint64 {
	if raceEnabled {
		return max(2, n/4)
	}
	return n
}
