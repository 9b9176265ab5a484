package demo

import (
	"context"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"

	"github.com/steady-go/steady/examples/internal/cli"
)

func TestMain(m *testing.M) {
	os.Setenv(cache.MutationDetectorEnv, "1") // every Cache checks that nobody modifies what it serves
	goleak.VerifyTestMain(m)
}

// run is Run as the default program (examples/fleet) calls it: no Shared
// store.
func run(ctx context.Context, args []string, w io.Writer) error { return Run(ctx, args, w, Program{}) }

// The demo runs on virtual time (testing/synctest): the fleet's lag, the
// chaos schedule, resync and backoff cost no real time.

func TestConvergesDespiteEveryFault(t *testing.T) {
	for _, seed := range []string{"1", "2", "3"} {
		t.Run("seed="+seed, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var out strings.Builder
				err := run(t.Context(), []string{"-objects=20", "-seed=" + seed}, &out)
				text := out.String()
				require.NoError(t, err, text)

				require.Contains(t, text, "fleet: 20 groups")
				require.Regexp(t, `! controller crashed mid-reconcile, right after write #\d+ \(the (create of instance|delete of instance|status of) `, text)
				require.Contains(t, text, "! ops changed .spec.image of ")
				require.Contains(t, text, "! a dashboard overwrote the status of ")
				require.Contains(t, text, "! someone started 2 stray instances and stopped 2 by hand")
				require.Contains(t, text, "! faults stopped")
				require.Contains(t, text, "converged: all 20 groups match the store")
				require.Contains(t, text, "controller: crashed once mid-operation")
				require.Regexp(t, `converged 20/20 .*\n\nconverged:`, text, "the last progress line shows every group converged")
				require.Greater(t, number(t, text, `faults injected: (\d+)`), 10)
				require.Greater(t, number(t, text, `(\d+) events dropped`), 0)
			})
		})
	}
}

func TestConvergesWithoutFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		require.NoError(t, run(t.Context(), []string{"-objects=10", "-faults=off"}, &out))
		text := out.String()
		require.Contains(t, text, "no faults (seed 1)")
		require.Contains(t, text, "faults injected: 0")
		require.Contains(t, text, "controller: no crash")
		// Without faults, every instance is created once and nothing is
		// deleted.
		wanted := number(t, text, `(\d+) instances wanted`)
		require.Contains(t, text, "fleet writes ("+strconv.Itoa(wanted)+" creates, 0 deletes)")
	})
}

func TestFailsClearlyWhenNotConvergedInTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		// Every group usually matches by 500ms while the 3s of faults go
		// on; but a group a fault has just hit can still be unready at the
		// last check (about 1 run in 40: the goroutines' order is not
		// fixed), and then the report names it. Either report is right;
		// the first must come within a few runs.
		sawNone := false
		for attempt := 0; attempt < 5 && !sawNone; attempt++ {
			out.Reset()
			start := time.Now()
			err := run(t.Context(), []string{"-objects=10", "-duration=500ms", "-chaos=3s"}, &out)
			require.LessOrEqual(t, time.Since(start), 500*time.Millisecond, "the deadline is kept, not overrun by a check")
			require.ErrorContains(t, err, "not converged after 500ms: ")
			require.NotContains(t, out.String(), "converged: all")
			sawNone = strings.Contains(err.Error(), "10 of 10 groups matched at the last check; first unconverged: none at the last check, but the faults had not stopped yet")
			if !sawNone {
				require.Regexp(t, `first unconverged: [a-z]+-\d\d: \S`, err.Error())
			}
		}
		require.True(t, sawNone, "every group matched, but the 3s of faults outlast the 500ms: in none of 5 runs")

		// Too short to start the instances: the report names a group and why.
		out.Reset()
		start := time.Now()
		err := run(t.Context(), []string{"-objects=10", "-duration=30ms", "-faults=off"}, &out)
		require.LessOrEqual(t, time.Since(start), 30*time.Millisecond)
		require.Regexp(t, `not converged after 30ms: \d+ of 10 groups matched at the last check; first unconverged: [a-z]+-\d\d: \S`, err.Error())
	})
}

// The demo holds one cache of the groups, the controller's: the judge
// reads it too, and confirms its verdict against the store itself. A
// cache of its own held a second decoded copy of every group.
func TestJudgeReadsTheControllersCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		backend := memstore.New()
		p := Program{Data: func(string) (kv.Backend, string, func(), error) {
			return backend, "memory", func() {}, nil
		}}
		var out strings.Builder
		require.NoError(t, Run(t.Context(), []string{"-objects=10", "-faults=off", "-data=unused"}, &out, p), out.String())
		require.Contains(t, out.String(), "controller: no crash")
		require.Equal(t, int64(1), backend.Stats().Watches, "watches of the groups: one cache, one watch")
	})
}

// The convergence check must not trust a status: a group whose status
// claims Ready while the fleet disagrees, or whose status miscounts, is not
// converged.
func TestCheckTrustsObservationNotStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		groups, err := store.New[GroupSpec, GroupStatus](memstore.New(), "Group")
		require.NoError(t, err)
		g := &Group{Meta: store.Meta{Name: "web-00"}, Spec: GroupSpec{Replicas: 2, Image: "web:v1"}}
		_, err = groups.As("deployer").Create(ctx, g)
		require.NoError(t, err)
		ready := func(running int) {
			obj, err := groups.Get(ctx, "web-00")
			require.NoError(t, err)
			obj.Status.Running = running
			_, err = conditions.Set(&obj.Conditions, store.Condition{Type: conditions.Ready, Status: store.ConditionTrue,
				ObservedGeneration: obj.Meta.Generation}, time.Now())
			require.NoError(t, err)
			_, err = groups.As("someone").UpdateStatus(ctx, obj)
			require.NoError(t, err)
		}
		f := newFleet(1, 0)
		require.NoError(t, f.Create(ctx, Instance{Name: "web-00-0", Group: "web-00", Image: "web:v1"}))
		f.step(time.Now().Add(time.Hour)) // web-00-0 is running

		ready(2)
		c, err := checkStore(ctx, groups, f)
		require.NoError(t, err)
		require.Equal(t, 0, c.converged)
		require.Contains(t, c.firstBad, `web-00: .[name="web-00-1"]: removed`, "the missing instance is named")

		require.NoError(t, f.Create(ctx, Instance{Name: "web-00-1", Group: "web-00", Image: "web:v1"}))
		f.step(time.Now().Add(time.Hour))
		ready(99)
		c, err = checkStore(ctx, groups, f)
		require.NoError(t, err)
		require.Equal(t, "web-00: status says 99 running, the fleet runs 2", c.firstBad)

		ready(2)
		c, err = checkStore(ctx, groups, f)
		require.NoError(t, err)
		require.Equal(t, convergence{converged: 1, total: 1}, c)
	})
}

// -h prints the usage and exits 0; a bad command line exits 2 with a
// message naming the flag.
func TestCommandLine(t *testing.T) {
	var out strings.Builder
	require.Equal(t, 0, cli.ExitCode(run(context.Background(), []string{"-h"}, &out)))
	require.Contains(t, out.String(), "-objects")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-objects=0"}, "-objects 0"}, {[]string{"-objects=-3"}, "-objects -3"},
		{[]string{"-objects=1000001"}, "-objects 1000001"},
		{[]string{"-faults=maybe"}, "-faults"}, {[]string{"-faults=0.9"}, "-faults"},
		{[]string{"-faults=NaN"}, "-faults"}, {[]string{"-faults=-0.1"}, "-faults"},
		{[]string{"-duration=0s"}, "-duration"}, {[]string{"-chaos=-1s"}, "-chaos"},
		{[]string{"-seed=-1"}, "-seed"}, {[]string{"extra"}, "unexpected"}, {[]string{"-nope"}, "-nope"},
	} {
		err := run(context.Background(), tc.args, &out)
		require.Equal(t, 2, cli.ExitCode(err), "args %q: %v", tc.args, err)
		require.ErrorContains(t, err, tc.want)
	}
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{nil, 30 * time.Second}, {[]string{"-objects=100000"}, time.Minute},
		{[]string{"-objects=100000", "-duration=5s"}, 5 * time.Second},
	} {
		o, err := parseFlags(tc.args, &out, Program{})
		require.NoError(t, err)
		require.Equal(t, tc.want, o.duration, "args %q: the default -duration grows with -objects", tc.args)
	}
}

func number(t *testing.T, text, pattern string) int {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(text)
	require.NotNil(t, m, "no %s in\n%s", pattern, text)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}
