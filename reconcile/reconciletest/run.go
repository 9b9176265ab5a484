package reconciletest

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// RegisterFlags defines the flags Run reads on fs (flag.CommandLine in a
// test binary): -seed, which replays one schedule (the seed a failure
// prints), and -schedules, how many schedules Run runs when
// Config.Schedules is 0 (default 460). Call it once per test binary, from
// an init function of a test file:
//
//	func init() { reconciletest.RegisterFlags(flag.CommandLine) }
//
// Importing the package defines no flags, so a program with flags of these
// names can import it.
func RegisterFlags(fs *flag.FlagSet) {
	fs.Var(&seedValue{}, "seed", "reconciletest: replay this one schedule seed (a failure prints it)")
	fs.Var(&schedulesValue{n: DefaultSchedules}, "schedules", "reconciletest: how many seeded schedules Run runs when Config.Schedules is 0")
	fs.Var(&faultsValue{}, "faults", "reconciletest: inject only these faults of the Config's (comma-separated: "+strings.Join(knobNames(), ",")+"; none for none), as a shrunk failure's replay command says")
}

func knobNames() []string {
	var out []string
	for _, k := range faultKnobs {
		out = append(out, k.name)
	}
	return out
}

// faultsValue is the -faults flag: the faults to keep.
type faultsValue struct {
	set  bool
	keep []string
}

func (f *faultsValue) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strings.Join(f.keep, ",")
}

func (f *faultsValue) Set(v string) error {
	f.set, f.keep = true, nil
	if v == "none" || v == "" {
		return nil
	}
	for _, name := range strings.Split(v, ",") {
		if !slices.Contains(knobNames(), name) {
			return fmt.Errorf("unknown fault %q: want some of %s, or none", name, strings.Join(knobNames(), ","))
		}
		f.keep = append(f.keep, name)
	}
	return nil
}

// faultsFlag returns the -faults flag's faults to keep, if it is set.
func faultsFlag() ([]string, bool) {
	if fl := flag.Lookup("faults"); fl != nil {
		if f, ok := fl.Value.(*faultsValue); ok && f.set {
			return f.keep, true
		}
	}
	return nil, false
}

// DefaultSchedules is how many schedules Run runs without Config.Schedules
// or the -schedules flag: enough to catch, with probability 99%, a bug that
// one schedule in a hundred exposes (1 − 0.99^460 = 0.990). The package
// documentation lists what each bug class needs.
const DefaultSchedules = 460

type seedValue struct {
	set bool
	v   uint64
}

func (s *seedValue) String() string {
	if s == nil || !s.set {
		return ""
	}
	return strconv.FormatUint(s.v, 10)
}

func (s *seedValue) Set(v string) error {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return fmt.Errorf("not a seed: %w", err)
	}
	s.set, s.v = true, n
	return nil
}

type schedulesValue struct{ n int }

func (s *schedulesValue) String() string {
	if s == nil {
		return ""
	}
	return strconv.Itoa(s.n)
}

func (s *schedulesValue) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return fmt.Errorf("want a positive number of schedules, got %q", v)
	}
	s.n = n
	return nil
}

// Run runs cfg's reconciler through seeded schedules of faults, each in
// its own testing/synctest bubble (virtual time, so a schedule of minutes
// runs in milliseconds), as parallel subtests named "seed=N" (over 1000
// schedules, as one parallel subtest per CPU that runs its share). It runs
// Config.Schedules schedules (0: the -schedules flag, default 460) from seed
// Config.Seed on, or only the -seed flag's schedule when it is set (see
// RegisterFlags).
//
// A schedule fails its subtest when it shows a harm (see Simulate and
// Harm); the message names the harm and the seed. The first failure of a
// Run is shrunk: played again with each fault turned off in turn, keeping
// off those the harm shows without, and the message gives the shortest
// schedule found. Every message gives the command that replays its
// schedule (-seed, and -faults for the faults it keeps) and the trace
// around the failing step. Under the -faults flag, only the faults it
// names are injected (and nothing is shrunk). A Config that cannot run
// fails t at once.
func Run[S, T any](t *testing.T, cfg Config[S, T]) {
	t.Helper()
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	seeds, err := seedsOf(cfg.Seed, cfg.Schedules)
	if err != nil {
		t.Fatal(err)
	}
	keep, masked := faultsFlag()
	if masked {
		cfg.Faults = keepFaults(cfg.Faults, keep)
	}
	parent := t.Name()
	var firstFailure atomic.Bool
	one := func(t *testing.T, seed uint64) {
		rep := simulateChecked(t, cfg, seed)
		if !rep.Failed() {
			return
		}
		// Shrinking costs a schedule per fault: only the first failure of
		// a Run is shrunk, so a reconciler that fails every schedule does
		// not cost fourteen times the budget.
		short, faults := rep, faultNames(cfg.Faults)
		shrunk := !masked && firstFailure.CompareAndSwap(false, true)
		if shrunk {
			short, faults = shrink(t, cfg, seed, rep)
		}
		t.Error(failure(parent, seed, rep, short, faults, shrunk))
	}
	if len(seeds) <= maxSubtests {
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				one(t, seed)
			})
		}
		return
	}
	// Many schedules: one parallel subtest per CPU, each running its share
	// of the seeds, rather than a parked subtest per seed.
	n := runtime.GOMAXPROCS(0)
	for i := range n {
		t.Run(fmt.Sprintf("batch=%d", i), func(t *testing.T) {
			t.Parallel()
			for j := i; j < len(seeds); j += n {
				one(t, seeds[j])
			}
		})
	}
}

// maxSubtests is the most schedules Run runs as a subtest each.
const maxSubtests = 1000

// seedsOf returns the seeds Run runs: the -seed flag's alone, else n (or
// the -schedules flag's count, or DefaultSchedules) from first on. Only
// flags defined by RegisterFlags count.
func seedsOf(first uint64, n int) ([]uint64, error) {
	if f := flag.Lookup("seed"); f != nil {
		if s, ok := f.Value.(*seedValue); ok && s.set {
			return []uint64{s.v}, nil
		}
	}
	if n == 0 {
		n = DefaultSchedules
		if f := flag.Lookup("schedules"); f != nil {
			if s, ok := f.Value.(*schedulesValue); ok {
				n = s.n
			}
		}
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = first + uint64(i)
	}
	return out, nil
}

// Simulate runs one schedule, seed, of cfg inside a testing/synctest bubble
// and returns its report. It does not fail t when a check fails: the
// report's Violations say what failed. (It fails t for a Config that cannot
// run, and synctest fails t if goroutines are left blocked when the
// schedule ends: a leak.) Run is Simulate over many seeds.
//
// A schedule:
//  1. creates Config.Objects objects, then starts incarnation 0 of the
//     controller: Setup's reconciler in a Loop over the primary cache;
//  2. injects Config.Faults for Faults.Duration of virtual time, deciding
//     each step, from the seed, what happens next, while the test deletes
//     and recreates objects (Faults.Deletes);
//  3. stops the faults, and checks at the convergence bound (Report.Bound)
//     that every object has converged (Config.Converged) or, if it cannot
//     (Config.Unreconcilable), is Stalled with a reason, and that every
//     object the test deleted is gone;
//  4. runs 1.5 resync periods more and checks that nothing was written to
//     a converged object and that it is still converged; that no object got
//     more writes than its bound, and none more reconciles or any failed
//     one; that no deleted object was reconciled; and, throughout, that no
//     stale write was accepted, no reconciler write undid another manager's
//     field, no cached object was modified, and the Loop stopped in time;
//  5. unless Config.SkipHistory, nothing is injected, or the controller
//     wrote no children, plays the same seed without faults or competing
//     writes and compares what the controller did to each child
//     (Report.Reference).
//
// The same seed gives the same trace (Report.Trace), interleaving included,
// as long as the reconciler itself is deterministic: it takes randomness
// only from Process.Rand, and does its work in its goroutine.
func Simulate[S, T any](t *testing.T, cfg Config[S, T], seed uint64) *Report {
	t.Helper()
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	return simulateChecked(t, cfg, seed)
}

func simulateChecked[S, T any](t *testing.T, cfg Config[S, T], seed uint64) *Report {
	var rep *Report
	synctest.Test(t, func(t *testing.T) {
		rep = simulate(context.Background(), cfg, seed)
	})
	return rep
}
