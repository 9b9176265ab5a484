package ssacheck

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/steady-go/steady/ownership"
)

// A fault plants one wrong answer into steady's side of a step, of the
// kind one filter (rule) would hide if it were broader than its stated
// reason. It copies what it changes and reports whether it planted.
type fault struct {
	name  string // the fault; the subtest's name
	rule  string // the rule it probes: the one whose stated reason lies next to the fault
	what  string
	plant func(c *cmp) bool
}

// Two faults were planted against rules that are gone, map-members and
// type-change (steady now owns and conflicts as structured-merge-diff does
// there); they stay, to show that nothing else excuses them, and name no
// rule.
var faults = []fault{
	{"update-drops-atomic-or-empty-map", "update-containers", "an Update entry does not own the atomic map or empty map it wrote",
		func(c *cmp) bool {
			return c.op == "update" && dropOwned(c, key(c.manager, ownership.OpUpdate), isSelOrEmptyMap)
		}},
	{"apply-drops-atomic-or-empty-value", "", "an Apply entry does not own the atomic map, empty map or atomic list it applied",
		func(c *cmp) bool {
			return c.applied != nil && c.got.conflicts == nil && dropOwned(c, key(c.manager, ownership.OpApply), func(v any, p string) bool {
				_, isList := v.([]any)
				return isSelOrEmptyMap(v, p) || isList && typeAt(p) == "args"
			})
		}},
	{"prune-keeps-unowned-empty-map", "prune-null", "steady leaves an empty map nobody owns where structured-merge-diff's prune left null",
		func(c *cmp) bool {
			for _, k := range slices.Sorted(maps.Keys(c.want.object)) {
				_, inGot := c.got.object[k]
				if b, ok := c.wantBefore[k]; c.want.object[k] == nil && !inGot && ok && b != nil {
					c.got.object = maps.Clone(c.got.object)
					c.got.object[k] = map[string]any{}
					return true
				}
			}
			return false
		}},
	{"prune-fails-for-applier", "owned-kept", "steady does not prune a field the applier stopped applying, and the applier keeps owning it",
		func(c *cmp) bool {
			if c.applied == nil || c.got.conflicts != nil {
				return false
			}
			k := key(c.manager, ownership.OpApply)
			for _, p := range c.gotPrev[k] {
				name := p[1:]
				b, inBefore := c.gotBefore[name]
				_, inGot := c.got.object[name]
				_, inWant := c.want.object[name]
				_, inCfg := c.applied[name]
				if typeAt(p) != "obj" || !inBefore || inGot || inWant || inCfg || kindOf(b) != 1 {
					continue // only a top-level scalar both engines pruned
				}
				c.got.object = maps.Clone(c.got.object)
				c.got.object[name] = b
				c.got.owned = cloneOwned(c.got.owned)
				c.got.owned[k] = append(c.got.owned[k], p)
				slices.Sort(c.got.owned[k])
				return true
			}
			return false
		}},
	{"refuses-type-change-nobody-owns", "", "steady refuses a change of kind (not from null) that nobody below owns",
		func(c *cmp) bool {
			if c.applied == nil || c.got.conflicts != nil || c.want.conflicts != nil {
				return false
			}
			for _, name := range slices.Sorted(maps.Keys(c.applied)) {
				b, ok := c.gotBefore[name]
				_, toMap := c.applied[name].(map[string]any)
				if ok && b != nil && kindOf(b) != 2 && toMap {
					// A refusal writes nothing.
					c.got = outcome{conflicts: []string{"alpha/Update ." + name}, object: c.gotBefore, owned: c.gotPrev}
					return true
				}
			}
			return false
		}},
	{"reorders-atomic-list", "list-order", "steady reverses an atomic list (only keyed lists and sets may differ in order)",
		func(c *cmp) bool {
			for _, k := range slices.Sorted(maps.Keys(c.got.object)) {
				l, ok := c.got.object[k].([]any)
				if typeAt("."+k) != "args" || !ok || len(l) < 2 || js(l[0]) == js(l[len(l)-1]) {
					continue
				}
				c.got.object = maps.Clone(c.got.object)
				c.got.object[k] = reversed(l)
				return true
			}
			return false
		}},
	{"keeps-emptied-list-not-applied", "applied-empty-list-kept", "steady keeps [] for a list its prune emptied that the config does not apply",
		func(c *cmp) bool {
			if c.applied == nil || c.got.conflicts != nil {
				return false
			}
			for _, k := range slices.Sorted(maps.Keys(c.gotBefore)) {
				l, ok := c.gotBefore[k].([]any)
				_, inGot := c.got.object[k]
				_, inWant := c.want.object[k]
				_, inCfg := c.applied[k]
				if typ := typeAt("." + k); !ok || len(l) == 0 || inGot || inWant || inCfg || typ != "items" && typ != "pairs" && typ != "tags" {
					continue
				}
				c.got.object = maps.Clone(c.got.object)
				c.got.object[k] = []any{}
				return true
			}
			return false
		}},
	{"refuses-null-to-scalar", "null-to-map", "steady refuses to apply a scalar over a stored null (only a map there conflicts with the null's owner)",
		func(c *cmp) bool {
			if c.applied == nil || c.got.conflicts != nil || c.want.conflicts != nil {
				return false
			}
			for _, k := range slices.Sorted(maps.Keys(c.applied)) {
				b, ok := c.gotBefore[k]
				if ok && b == nil && kindOf(c.applied[k]) == 1 {
					c.got = outcome{conflicts: []string{"beta/Update ." + k}, object: c.gotBefore, owned: c.gotPrev}
					return true
				}
			}
			return false
		}},
	{"update-drops-scalar-over-null", "update-null-map", "an Update entry does not own a scalar it wrote over null (only null <-> a map of fields is excused)",
		func(c *cmp) bool {
			if c.op != "update" {
				return false
			}
			k := key(c.manager, ownership.OpUpdate)
			return dropOwned(c, k, func(v any, p string) bool {
				b, ok := lookup(c.gotBefore, p)
				return ok && b == nil && kindOf(v) == 1
			})
		}},
	{"writes-applied-null", "applied-null", "steady writes a null the config applies where there was nothing",
		func(c *cmp) bool {
			if c.applied == nil || c.got.conflicts != nil {
				return false
			}
			for _, k := range slices.Sorted(maps.Keys(c.applied)) {
				_, inBefore := c.gotBefore[k]
				if _, inGot := c.got.object[k]; c.applied[k] == nil && !inBefore && !inGot {
					c.got.object = maps.Clone(c.got.object)
					c.got.object[k] = nil
					return true
				}
			}
			return false
		}},
	{"writes-over-another-managers-update", "own-update-entry", "steady writes where the reference conflicts with another manager's Update entry (only the applier's own may not conflict)",
		func(c *cmp) bool {
			if c.got.conflicts == nil || c.want.conflicts == nil || c.op != "apply" {
				return false
			}
			for _, w := range c.want.conflicts {
				if e, _, _ := strings.Cut(w, " "); !strings.HasSuffix(e, "/Update") || strings.HasPrefix(e, c.manager+"/") {
					return false
				}
			}
			c.got = outcome{noop: true, object: c.gotBefore, owned: c.gotPrev}
			return true
		}},
}

// reversed returns a reversed copy of l.
func reversed(l []any) []any {
	out := slices.Clone(l)
	slices.Reverse(out)
	return out
}

// dropOwned removes from entry k of steady's owned paths the first path
// whose value (in steady's object) f accepts.
func dropOwned(c *cmp, k string, f func(v any, p string) bool) bool {
	for i, p := range c.got.owned[k] {
		v, ok := lookup(c.got.object, p)
		if !ok || !f(v, p) {
			continue
		}
		c.got.owned = cloneOwned(c.got.owned)
		c.got.owned[k] = slices.Delete(c.got.owned[k], i, i+1)
		if len(c.got.owned[k]) == 0 {
			delete(c.got.owned, k)
		}
		return true
	}
	return false
}

func isSelOrEmptyMap(v any, p string) bool {
	m, ok := v.(map[string]any)
	return ok && (len(m) == 0 || typeAt(p) == "sel")
}

// TestFiltersCatchPlantedFaults plants, per rule, a fault that the rule
// would hide if it matched more than its stated reason, and requires that
// every step it was planted in is reported as unexplained. It runs synced,
// where every step starts from one state and only the named rules can
// excuse a difference. (In chained runs rule carried also excuses what
// lies where the states already differ, and so can hide a fault planted
// there: with -v the test logs how many.) One run per seed serves every
// fault: each is planted in a copy of the step.
func TestFiltersCatchPlantedFaults(t *testing.T) {
	plants := make([]func(*cmp) bool, len(faults))
	for i, f := range faults {
		plants[i] = f.plant
	}
	var synced []report
	for _, seed := range fixedSeeds {
		synced = append(synced, run(t, seed, 1000, false, plants...))
	}
	var chained report
	if testing.Verbose() {
		chained = run(t, fixedSeeds[0], 1000, true, plants...)
	}
	for i, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			var sum planting
			for _, r := range synced {
				sum.planted += r.faults[i].planted
				sum.caught += r.faults[i].caught
				sum.passed = append(sum.passed, r.faults[i].passed...)
			}
			if testing.Verbose() {
				t.Logf("chained, seed %d: planted in %d steps, reported %d", fixedSeeds[0], chained.faults[i].planted, chained.faults[i].caught)
			}
			rule := f.rule
			if rule == "" {
				rule = "no rule"
			}
			t.Logf("%s (probes %s): %s: planted in %d steps, reported %d", f.name, rule, f.what, sum.planted, sum.caught)
			requireCaught(t, sum)
		})
	}
}

// requireCaught fails unless a fault was planted, and reported in every
// step it was planted in.
func requireCaught(t *testing.T, p planting) {
	t.Helper()
	if p.caught != p.planted {
		for _, e := range p.passed {
			t.Log(e)
		}
	}
	if p.planted == 0 {
		t.Fatalf("the fault was never planted; the test proves nothing")
	}
	if p.caught != p.planted {
		t.Errorf("%d of %d steps with a planted fault passed as explained", p.planted-p.caught, p.planted)
	}
}

// TestCarriedCatchesPlantedFaults plants, in chained runs, a fault where
// the states did not differ before the step: steady loses a top-level
// scalar that both objects held with the same value and the same owners
// before the step, and that both still hold. Rule carried excuses only
// what lies where the states (objects or owners) already differed, so
// every such step must be reported as unexplained.
func TestCarriedCatchesPlantedFaults(t *testing.T) {
	plant := func(c *cmp) bool {
		if c.got.conflicts != nil || c.want.conflicts != nil {
			return false
		}
		for _, name := range slices.Sorted(maps.Keys(c.got.object)) {
			p := "." + name
			g, w := c.got.object[name], c.want.object[name]
			gb, gok := c.gotBefore[name]
			wb, wok := c.wantBefore[name]
			if kindOf(g) != 1 || js(g) != js(w) || !gok || !wok || js(gb) != js(wb) || !sameOwners(c.gotPrev, c.wantPrev, p) {
				continue
			}
			c.got.object = maps.Clone(c.got.object)
			delete(c.got.object, name)
			return true
		}
		return false
	}
	var sum planting
	for _, seed := range fixedSeeds {
		r := run(t, seed, 1000, true, plant)
		sum.planted += r.faults[0].planted
		sum.caught += r.faults[0].caught
		sum.passed = append(sum.passed, r.faults[0].passed...)
	}
	t.Logf("carried: planted in %d chained steps, reported %d", sum.planted, sum.caught)
	requireCaught(t, sum)
}

// sameOwners reports whether the same entries own p (or paths below it)
// in a and b.
func sameOwners(a, b map[string][]string, p string) bool {
	for _, m := range []map[string][]string{a, b} {
		for k := range m {
			in := func(paths []string) []string {
				return slices.DeleteFunc(slices.Clone(paths), func(q string) bool { return !atOrBelow(q, p) })
			}
			if !slices.Equal(in(a[k]), in(b[k])) {
				return false
			}
		}
	}
	return true
}

// TestUpdateNullMapUncoversOnlyHeldMaps pins rule update-null-map where an
// update writes null over a map nested in another (seed 88, step 891, in
// its smallest form): the reference's entry that listed both maps keeps
// the outer one, which its null leaf hid, and steady's entry shows it as
// a leaf. The rule excuses that, and nothing wider: not an outer map the
// entry did not hold, nor one holding other leaves of the entry.
func TestUpdateNullMapUncoversOnlyHeldMaps(t *testing.T) {
	obj := map[string]any{"m": map[string]any{"x": 1, "n": nil}}
	cases := []struct {
		name      string
		got, want map[string][]string
		held      []string // the reference's beta/Update members before
		explained bool
	}{
		{"the outer map the entry held", map[string][]string{"alpha/Update": {".m.n"}, "beta/Update": {".m"}},
			map[string][]string{"beta/Update": {".m.n"}}, []string{".m", ".m.n"}, true},
		{"an outer map the entry did not hold", map[string][]string{"alpha/Update": {".m.n"}, "beta/Update": {".m"}},
			map[string][]string{"beta/Update": {".m.n"}}, []string{".m.n"}, false},
		{"an outer map holding another leaf of the entry", map[string][]string{"alpha/Update": {".m.n"}, "beta/Update": {".m", ".m.x"}},
			map[string][]string{"beta/Update": {".m.n", ".m.x"}}, []string{".m", ".m.n", ".m.x"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &cmp{op: "update", manager: "alpha", nullMaps: []string{".m.n"},
				heldBefore: func(k, p string) bool { return k == "beta/Update" && slices.Contains(tc.held, p) },
				got:        outcome{object: obj, owned: tc.got},
				want:       outcome{object: obj, owned: tc.want},
			}
			rules := ruleHits{}
			if got := sameOwned(c, tc.got, nil, &rules); got != tc.explained {
				t.Fatalf("sameOwned = %v, want %v (rules %v)", got, tc.explained, rules)
			}
			if tc.explained && rules["update-null-map"] != 1 {
				t.Errorf("rules = %v, want update-null-map once", rules)
			}
		})
	}
}

// TestOwnedKeptRefusesAFailedPrune pins rule owned-kept where the
// reference's prune leaves null for the map above what steady keeps (seed
// 47, step 208, in its smallest form): alpha stops applying .m.m, whose
// field a an Updater owns; steady keeps .m.m for it, structured-merge-
// diff removes it and leaves "m":null. So too where alpha applies .m as
// {} (seed 240, step 34). The rule excuses that and nothing wider: not
// steady keeping a field alpha owned before and nobody owns now (a prune
// that failed), beside the kept one or alone, nor a field alpha applies
// inside the map.
func TestOwnedKeptRefusesAFailedPrune(t *testing.T) {
	before := map[string]any{"k": 1, "m": map[string]any{"m": map[string]any{"a": 2, "x": 1}}}
	prev := map[string][]string{"alpha/Apply": {".k", ".m.m.x"}, "beta/Update": {".m.m.a"}, "gamma/Update": {".m"}}
	kept := map[string]any{"k": 1, "m": map[string]any{"m": map[string]any{"a": 2}}}
	cases := []struct {
		name      string
		applied   map[string]any
		got, want outcome
		explained bool
	}{
		{"steady keeps the map for the updater's field", map[string]any{"k": 1},
			outcome{object: kept, owned: map[string][]string{"alpha/Apply": {".k"}, "beta/Update": {".m.m.a"}, "gamma/Update": {".m"}}},
			outcome{object: map[string]any{"k": 1, "m": nil}, owned: map[string][]string{"alpha/Apply": {".k"}, "gamma/Update": {".m"}}}, true},
		{"and alpha applies the map as {}", map[string]any{"k": 1, "m": map[string]any{}},
			outcome{object: kept, owned: map[string][]string{"alpha/Apply": {".k", ".m"}, "beta/Update": {".m.m.a"}, "gamma/Update": {".m"}}},
			outcome{object: map[string]any{"k": 1, "m": nil}, owned: map[string][]string{"alpha/Apply": {".k", ".m"}, "gamma/Update": {".m"}}}, true},
		{"steady also keeps a field alpha stopped applying", map[string]any{"k": 1},
			outcome{object: map[string]any{"k": 1, "m": map[string]any{"m": map[string]any{"a": 2, "x": 1}}},
				owned: map[string][]string{"alpha/Apply": {".k"}, "beta/Update": {".m.m.a"}, "gamma/Update": {".m"}}},
			outcome{object: map[string]any{"k": 1, "m": nil}, owned: map[string][]string{"alpha/Apply": {".k"}, "gamma/Update": {".m"}}}, false},
		{"steady keeps only the field alpha stopped applying", map[string]any{"k": 1},
			outcome{object: map[string]any{"k": 1, "m": map[string]any{"m": map[string]any{"x": 1}}},
				owned: map[string][]string{"alpha/Apply": {".k"}, "gamma/Update": {".m"}}},
			outcome{object: map[string]any{"k": 1, "m": nil}, owned: map[string][]string{"alpha/Apply": {".k"}, "gamma/Update": {".m"}}}, false},
		{"alpha applies a field inside the kept map", map[string]any{"k": 1, "m": map[string]any{"y": 1}},
			outcome{object: map[string]any{"k": 1, "m": map[string]any{"m": map[string]any{"a": 2}, "y": 1}},
				owned: map[string][]string{"alpha/Apply": {".k", ".m.y"}, "beta/Update": {".m.m.a"}, "gamma/Update": {".m"}}},
			outcome{object: map[string]any{"k": 1, "m": nil}, owned: map[string][]string{"alpha/Apply": {".k", ".m.y"}, "gamma/Update": {".m"}}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &cmp{op: "apply", manager: "alpha", applied: tc.applied,
				gotBefore: before, wantBefore: before, gotPrev: prev, wantPrev: prev,
				heldBefore: func(string, string) bool { return false },
				got:        tc.got, want: tc.want}
			rules := ruleHits{}
			ok, kept := sameObject(c, c.got.object, &rules)
			if ok {
				ok = sameOwned(c, c.got.owned, kept, &rules)
			}
			if ok != tc.explained {
				t.Fatalf("explained = %v, want %v (rules %v)", ok, tc.explained, rules)
			}
			if tc.explained && (rules["owned-kept"] != 2 || rules["prune-null"] != 1) {
				t.Errorf("rules = %v, want owned-kept (object and owned) and prune-null", rules)
			}
		})
	}
}

// TestNullToMapUncoversOnlyHeldMaps pins rule null-to-map's owned paths
// where the applier's own Update entry wrote the null inside a map it
// created (seed 232, step 555): the reference's entry keeps the null,
// which hid the map above; steady's entry lost the null to the apply and
// holds the map. The rule excuses that, and not a map the entry did not
// hold before.
func TestNullToMapUncoversOnlyHeldMaps(t *testing.T) {
	before := map[string]any{"m": map[string]any{"n": nil}}
	after := map[string]any{"m": map[string]any{"n": map[string]any{"z": 2}}}
	for _, held := range []bool{true, false} {
		c := &cmp{op: "apply", manager: "alpha", applied: after, gotBefore: before, wantBefore: before,
			heldBefore: func(k, p string) bool { return held && k == "alpha/Update" && p == ".m" },
			got:        outcome{object: after, owned: map[string][]string{"alpha/Apply": {".m.n.z"}, "alpha/Update": {".m"}}},
			want:       outcome{object: after, owned: map[string][]string{"alpha/Apply": {".m.n.z"}, "alpha/Update": {".m.n"}}},
		}
		rules := ruleHits{}
		if got := sameOwned(c, c.got.owned, nil, &rules); got != held {
			t.Errorf("held before %v: sameOwned = %v (rules %v)", held, got, rules)
		}
	}
}
