package reconciletest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// faultKnob is one fault of Faults, by the name the -faults flag gives it.
type faultKnob struct {
	name string
	on   func(Faults) bool
	off  func(*Faults)
}

var faultKnobs = []faultKnob{
	{"drop", func(f Faults) bool { return f.DropEvents > 0 }, func(f *Faults) { f.DropEvents = 0 }},
	{"duplicate", func(f Faults) bool { return f.DuplicateEvents > 0 }, func(f *Faults) { f.DuplicateEvents = 0 }},
	{"delay", func(f Faults) bool { return f.DelayEvents > 0 }, func(f *Faults) { f.DelayEvents = 0 }},
	{"expire", func(f Faults) bool { return f.ExpireWatches > 0 }, func(f *Faults) { f.ExpireWatches = 0 }},
	{"stale", func(f Faults) bool { return f.StaleReads > 0 }, func(f *Faults) { f.StaleReads = 0 }},
	{"conflict", func(f Faults) bool { return f.ConflictWrites > 0 }, func(f *Faults) { f.ConflictWrites = 0 }},
	{"unavailable", func(f Faults) bool { return f.UnavailableWrites > 0 }, func(f *Faults) { f.UnavailableWrites = 0 }},
	{"timeout", func(f Faults) bool { return f.TimeoutWrites > 0 }, func(f *Faults) { f.TimeoutWrites = 0 }},
	{"crash", func(f Faults) bool { return f.Crashes > 0 }, func(f *Faults) { f.Crashes, f.TimeTravel = 0, 0 }},
	{"timetravel", func(f Faults) bool { return f.Crashes > 0 && f.TimeTravel > 0 }, func(f *Faults) { f.TimeTravel = 0 }},
	{"leadership", func(f Faults) bool { return f.LeadershipLosses > 0 }, func(f *Faults) { f.LeadershipLosses = 0 }},
	{"compete", func(f Faults) bool { return f.CompetingWrites > 0 }, func(f *Faults) { f.CompetingWrites = 0 }},
	{"deletes", func(f Faults) bool { return f.Deletes > 0 }, func(f *Faults) { f.Deletes = 0 }},
}

// faultNames lists the faults f injects, by knob name.
func faultNames(f Faults) []string {
	var out []string
	for _, k := range faultKnobs {
		if k.on(f) {
			out = append(out, k.name)
		}
	}
	return out
}

// keepFaults turns off every fault of f not named in keep.
func keepFaults(f Faults, keep []string) Faults {
	for _, k := range faultKnobs {
		if !slices.Contains(keep, k.name) {
			k.off(&f)
		}
	}
	return f
}

// shrink looks for a shorter schedule of seed that shows the same harm as
// rep (its first violation's): it turns the faults of cfg off one at a
// time, keeping off each one whose schedule still shows the harm, so that
// no single fault it keeps can be turned off too. It returns the report of
// the last schedule that showed the harm (rep if none did), the one with
// the fewest faults, and the faults it injects: the -faults flag that
// replays that very schedule. Each try is one more schedule (with its
// reference run).
func shrink[S, T any](t *testing.T, cfg Config[S, T], seed uint64, rep *Report) (*Report, []string) {
	best, faults := rep, faultNames(cfg.Faults)
	if len(rep.Harms) == 0 {
		return best, faults
	}
	harm := rep.Harms[0]
	for _, k := range faultKnobs {
		if !k.on(cfg.Faults) {
			continue
		}
		try := cfg
		k.off(&try.Faults)
		r := simulateChecked(t, try, seed)
		if !slices.Contains(r.Harms, harm) {
			continue
		}
		cfg = try
		best, faults = r, faultNames(cfg.Faults)
	}
	return best, faults
}

// failure is Run's message for a failed schedule: the harm, the shortest
// schedule shrink found with the command that replays it, then the
// explanation of that schedule (its violations, the trace around the
// failing step).
func failure(test string, seed uint64, rep, short *Report, faults []string, shrunk bool) string {
	var b strings.Builder
	replay := fmt.Sprintf("go test -run '^%s$' -seed=%d", test, seed)
	fmt.Fprintf(&b, "reconciletest: harm: %s, in schedule %d (%d steps)\n", rep.Harms[0], seed, len(rep.Trace))
	replay += " -faults=" + strings.Join(faults, ",")
	if len(faults) == 0 {
		replay += "none"
	}
	if shrunk {
		fmt.Fprintf(&b, "shortest schedule found: the same seed with faults [%s] only (%d steps, failing at step %d; the whole schedule fails at step %d); its explanation follows\n",
			strings.Join(faults, " "), len(short.Trace), short.FailingStep+1, rep.FailingStep+1)
	}
	b.WriteString(short.Explain(replay))
	return b.String()
}
