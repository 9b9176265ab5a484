package reconciletest_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/reconciletest"
)

// A correct controller that acts on a stale view and repairs it (a cache
// sent back in time shows a set already deleted; the controller creates
// pods for it, then deletes them once it sees the set gone) passes: the
// repair is a note, not a failure.
func TestStaleViewRepairIsANote(t *testing.T) {
	cfg := uidNamedConfig()
	for seed := range uint64(200) {
		rep := reconciletest.Simulate(t, cfg, seed)
		require.False(t, rep.Failed(), "%s", rep)
		for _, n := range rep.Notes {
			if strings.Contains(n, "stale view") {
				return
			}
		}
	}
	t.Fatal("no schedule of 200 made the controller create pods for a deleted set: time travel misses its aim")
}

// A child left at the end whose owner is gone for good is a lost cleanup,
// even when the owner is one the history check otherwise leaves out: one a
// competing write touched (the competitor may rightly change its
// children), or one the test could not recreate in one run (a finalizer
// still held it, so the two runs' ends differ). These seeds of the
// finalizer-first bug leak a pod of a deleted set3 that is each.
func TestALeakedChildOfAnOwnerLeftOutIsCaught(t *testing.T) {
	for _, tc := range []struct {
		seed    uint64
		premise string
		leaked  string
	}{
		{5, "fault competing-write: set3", "Pod/set3-2"},
		{322, "test cannot recreate set3", "Pod/set3-2"},
	} {
		rep := reconciletest.Simulate(t, zooConfig(finalizerFirst, true), tc.seed)
		require.True(t, slices.ContainsFunc(rep.Trace, func(l string) bool { return strings.Contains(l, tc.premise) }),
			"seed %d: the premise: %s", tc.seed, tc.premise)
		require.Contains(t, rep.Violations, "end state differs: leaked child: "+tc.leaked+" (a child of set3) is left at the end, "+
			"its owner gone: nothing deleted it (a finalizer that deletes the children before it is removed, or a garbage collector, gc.New, run with Env.Go)",
			"seed %d", tc.seed)
	}
}

// Every violation names a harm from the closed list. Under the race
// detector, a quarter of the zoo (raceZoo) through a quarter of the seeds;
// scripts/test.sh runs it in full without it (sweepsWithoutRace).
func TestEveryViolationNamesAHarm(t *testing.T) {
	harms := []reconciletest.Harm{reconciletest.HarmEndState, reconciletest.HarmLiveAction, reconciletest.HarmLostUpdate,
		reconciletest.HarmStorm, reconciletest.HarmNotConverged, reconciletest.HarmContract}
	cases, failed := zoo, 0
	if raceEnabled {
		cases = raceZoo()
	}
	for _, zc := range cases {
		cfg := zc.config(false)
		for seed := range sweepSeeds(8) {
			rep := reconciletest.Simulate(t, cfg, seed)
			require.Len(t, rep.Harms, len(rep.Violations))
			for i, h := range rep.Harms {
				require.Contains(t, harms, h)
				require.True(t, strings.HasPrefix(rep.Violations[i], string(h)+": "), rep.Violations[i])
			}
			if rep.Failed() {
				failed++
			}
		}
	}
	require.NotZero(t, failed, "no schedule of the zoo failed: nothing named a harm")
}

// A failing schedule's message, as Run prints it, names the harm, the
// shortest schedule found (the seed with fewer faults), and the command
// that replays it; the command replays a schedule that fails with the same
// harm. Run fails its test, so it runs in a child process.
func TestFailureNamesHarmShortestScheduleAndReplay(t *testing.T) {
	if os.Getenv("RECONCILETEST_SHRINK") != "" {
		seed, _ := strconv.ParseUint(os.Getenv("RECONCILETEST_SHRINK"), 10, 64)
		cfg := zooConfig(clobber, false)
		cfg.Seed, cfg.Schedules = seed, 1
		reconciletest.Run(t, cfg)
		return
	}
	if testing.Short() {
		t.Skip("runs child test processes")
	}
	cfg := zooConfig(clobber, false)
	// A schedule whose first harm is a lost update that survives turning
	// some faults off, which the message must show (not every one does).
	// TestZoo checks that the bug is caught.
	const seed = uint64(494)
	rep := reconciletest.Simulate(t, cfg, seed)
	require.True(t, rep.Failed() && rep.Harms[0] == reconciletest.HarmLostUpdate, "seed %d loses an update: %s", seed, rep)
	child := func(args ...string) string {
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestFailureNamesHarmShortestScheduleAndReplay$", "-test.count=1"}, args...)...)
		cmd.Env = append(os.Environ(), "RECONCILETEST_SHRINK="+strconv.FormatUint(seed, 10))
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "the schedule must fail:\n%s", out)
		return string(out)
	}
	out := child()
	require.Contains(t, out, "reconciletest: harm: lost update, in schedule")
	require.Contains(t, out, "shortest schedule found: the same seed with faults [")
	m := regexp.MustCompile(`replay: go test -run '\^TestFailureNamesHarmShortestScheduleAndReplay\$' -seed=(\d+) -faults=(\S+)`).FindStringSubmatch(out)
	require.NotNil(t, m, "the replay command, with the shrunk faults:\n%s", out)
	require.NotContains(t, m[2], "drop,duplicate,delay,expire,stale,conflict,unavailable,timeout,crash,timetravel,leadership,compete,deletes", "shrinking turned some fault off")
	require.Contains(t, out, "the steps around the failing one (marked >)")
	again := child("-seed="+m[1], "-faults="+m[2])
	require.Contains(t, again, "violation: lost update: ", "the replay fails with the same harm:\n%s", again)
	if raceEnabled {
		return // the race detector may move a replay's steps (see the package doc's limits)
	}
	// The replay command replays the schedule the message explains: the
	// same steps, failing at the same one.
	shown := regexp.MustCompile(`shortest schedule found: the same seed with faults \[[^]]*\] only \((\d+) steps, failing at step (\d+);`).FindStringSubmatch(out)
	require.NotNil(t, shown, out)
	replayed := regexp.MustCompile(`reconciletest: schedule failed at step (\d+) of (\d+):`).FindStringSubmatch(again)
	require.NotNil(t, replayed, again)
	require.Equal(t, []string{shown[1], shown[2]}, []string{replayed[2], replayed[1]},
		"the shortest schedule explained (steps, failing step) is not the one its replay command plays:\n%s\n\nreplay:\n%s", out, again)
	around := func(s string) string {
		i := strings.Index(s, "the steps around the failing one (marked >):")
		require.GreaterOrEqual(t, i, 0, s)
		j := regexp.MustCompile(`\n\s*seed \d+: `).FindStringIndex(s[i:])
		require.NotNil(t, j, s)
		return s[i : i+j[0]]
	}
	require.Equal(t, around(out), around(again), "the replay shows other steps than the explanation")
}
