package reconciletest_test

import (
	"slices"
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

// A failed schedule's message shows the failing step first (here the
// reconciler's write that undid the competitor's note), then the replay
// command; its trace holds every write with its outcome and what the
// competing writer and the test did.
func TestFailureReportShowsTheFailingStepFirst(t *testing.T) {
	cfg := zooConfig(clobber, false)
	var failed *reconciletest.Report
	for seed := range uint64(reconciletest.DefaultSchedules) {
		if rep := reconciletest.Simulate(t, cfg, seed); rep.Failed() && strings.Contains(rep.Violations[0], "lost update") {
			failed = rep
			break
		}
	}
	require.NotNil(t, failed, "the clobbering reconciler must be caught")
	msg := failed.Explain("go test -run '^TestX$' -seed=N")
	lines := strings.Split(msg, "\n")
	require.Contains(t, lines[0], "schedule failed at step")
	require.Contains(t, lines[0], failed.Trace[failed.FailingStep])
	require.Contains(t, failed.Trace[failed.FailingStep], "put Set/", "the failing step is the clobbering write")
	require.Contains(t, lines[1], "violation: lost update")
	replay := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "replay: go test") })
	require.Positive(t, replay, "the replay command follows the failing step:\n%s", msg)
	trace := strings.Join(failed.Trace, "\n")
	require.Contains(t, trace, "competitor: put Set/", "the competing writer's writes are in the trace")
	require.Regexp(t, `put Pod/\S+ \(as controller, \w+\) by process \d+ → revision \d+`, trace, "each write of the controller with its outcome")
}
