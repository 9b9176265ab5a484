package reconciletest_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/reconciletest"
)

// A seed replays its schedule exactly: the same faults at the same virtual
// instants, and the same interleaving of reconciles, writes and event
// deliveries. Different seeds give different schedules.
//
// Exact replay is promised for one worker. It is not checked under the race
// detector, which slows goroutines enough to expose, in about 1 schedule in
// 300, an ordering inside one scheduling step that the harness cannot hold
// at a gate (see the package documentation).
func TestSeedReplaysTheSchedule(t *testing.T) {
	if raceEnabled {
		t.Skip("exact replay is not promised under the race detector")
	}
	for _, workers := range []int{1} {
		cfg := config(noBug, reconciletest.AllFaults())
		cfg.Workers = workers
		seen := map[uint64]uint64{}
		for seed := range uint64(20) {
			a := reconciletest.Simulate(t, cfg, seed)
			b := reconciletest.Simulate(t, cfg, seed)
			require.Equal(t, a.Trace, b.Trace, "workers=%d seed=%d: a replay must reproduce the trace", workers, seed)
			require.Equal(t, a.TraceHash, b.TraceHash)
			require.Equal(t, a.Faults, b.Faults)
			require.NotEmpty(t, a.Trace)
			if other, dup := seen[a.TraceHash]; dup {
				t.Fatalf("workers=%d: seeds %d and %d gave the same schedule", workers, other, seed)
			}
			seen[a.TraceHash] = seed
		}
	}
}

// The harness is only worth something if it fails reconcilers with the
// bugs Sieve found in production controllers. Each deliberately buggy
// reconciler passes a fault-free run (the bug hides), and some seed of the
// fault class that exposes it fails with a violation that says what went
// wrong; that seed fails again on replay.
func TestCatchesBuggyReconcilers(t *testing.T) {
	tests := []struct {
		name   string
		bug    bug
		faults reconciletest.Faults
		want   string // in a violation
	}{{
		name:   "trusts memory instead of re-observing (unobserved state)",
		bug:    trustMemory,
		faults: reconciletest.Faults{CompetingWrites: 0.05},
		want:   "has not converged",
	}, {
		name:   "random child names tracked in status (crash mid-operation)",
		bug:    randomNames,
		faults: reconciletest.Faults{Crashes: 1, CrashAfter: 4},
		want:   "desired and observed differ",
	}, {
		name:   "random child names tracked in status (committed but timed out)",
		bug:    randomNames,
		faults: reconciletest.Faults{TimeoutWrites: 0.2},
		want:   "desired and observed differ",
	}, {
		name:   "swallows errors: never Stalled",
		bug:    swallow,
		faults: reconciletest.Faults{UnavailableWrites: 0.1},
		want:   "cannot be reconciled but is not Stalled",
	}, {
		name:   "writes with a detached ctx (stale term)",
		bug:    detachCtx,
		faults: reconciletest.Faults{LeadershipLosses: 1, Deletes: 2},
		want:   "carried no leadership fence",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clean := config(tt.bug, reconciletest.Faults{})
			clean.Object = reconcilableSet
			rep := reconciletest.Simulate(t, clean, 1)
			require.False(t, rep.Failed(), "without faults the bug must hide:\n%s", rep)

			cfg := config(tt.bug, tt.faults)
			if tt.bug == swallow {
				cfg.Compete = nil
			} else {
				cfg.Object = reconcilableSet
			}
			for seed := range uint64(20) {
				rep := reconciletest.Simulate(t, config(noBug, tt.faults), seed)
				require.False(t, rep.Failed(), "the correct reconciler must pass the same faults:\n%s", rep)
			}
			var failed *reconciletest.Report
			for seed := range uint64(50) {
				if rep := reconciletest.Simulate(t, cfg, seed); rep.Failed() {
					failed = rep
					break
				}
			}
			require.NotNil(t, failed, "no seed exposed the bug")
			require.Contains(t, strings.Join(failed.Violations, "\n"), tt.want, "%s", failed)
			again := reconciletest.Simulate(t, cfg, failed.Seed)
			if raceEnabled {
				require.True(t, again.Failed(), "the failing seed must fail again on replay")
			} else {
				require.Equal(t, failed.Violations, again.Violations, "the failing seed must fail the same way on replay")
			}
			t.Logf("caught by seed %d: %s", failed.Seed, failed.Violations[0])
		})
	}
}
