package reconciletest_test

import (
	"fmt"
	"reflect"
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

// Simulate is a function of the configuration and the seed: a replay
// gives the same Report, trace, violations and reference run included,
// for zoo reconcilers that take the Loop's paths a correct one never
// takes (a first pass that writes and requeues, so that the Loop sets
// Reconciling and waits for its cache to show it; a finalizer) and for a
// fixed twin. A catching seed that fails another way on replay cannot be
// debugged. The second-store case (rebuildPod) is left out: with one cache
// over a space, a read-your-writes requeue wakes in the step of the event
// whose hint races it (see the package documentation's limits).
func TestReplayOfZooSeeds(t *testing.T) {
	if raceEnabled {
		t.Skip("exact replay is not promised under the race detector")
	}
	picked := []bug{statusFirst, randomNames, finalizerFirst, twoStepCreate, clobber, noBug}
	for _, b := range picked {
		i := slices.IndexFunc(zoo, func(zc zooCase) bool { return zc.bug == b })
		if i < 0 {
			i = 0 // noBug: the first case's twin
		}
		zc := zoo[i]
		cfg, name := zc.config(b == noBug), zc.name
		if b == noBug {
			name = "the twin of " + name
		}
		for seed := range uint64(6) {
			a := reconciletest.Simulate(t, cfg, seed)
			again := reconciletest.Simulate(t, cfg, seed)
			if !reflect.DeepEqual(a, again) {
				t.Errorf("%s, seed %d: the replay differs from the first run: %s", name, seed, replayDiff(a, again))
			}
		}
	}
}

// replayDiff says where two reports of one seed first differ.
func replayDiff(a, b *reconciletest.Report) string {
	for i := range min(len(a.Trace), len(b.Trace)) {
		if a.Trace[i] != b.Trace[i] {
			return fmt.Sprintf("trace step %d: %q, then %q", i, a.Trace[i], b.Trace[i])
		}
	}
	if len(a.Trace) != len(b.Trace) {
		return fmt.Sprintf("traces of %d and %d steps", len(a.Trace), len(b.Trace))
	}
	if a.Reference != nil && b.Reference != nil && !reflect.DeepEqual(a.Reference, b.Reference) {
		return "reference run: " + replayDiff(a.Reference, b.Reference)
	}
	return fmt.Sprintf("violations %q, then %q", a.Violations, b.Violations)
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
