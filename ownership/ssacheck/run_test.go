package ssacheck

import (
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/race"
	"github.com/steady-go/steady/ownership"
)

var (
	stepsFlag = flag.Int("steps", 1000, "random steps per seed and mode (a quarter of the default under -race)")
	seedFlag  = flag.Uint64("seed", 0, "replay this seed (synced and chained) instead of the fixed seeds")
	freshFlag = flag.Int("fresh", 0, "also run this many fresh seeds, each printed for replay with -seed (scripts/flaky.sh runs 50)")
	longFlag  = flag.Bool("long", false, "run TestDifferentialLong: 20,000 chained steps over seeds the fixed runs do not use")
)

// fixedSeeds are the seeds every run checks.
var fixedSeeds = []uint64{20261201, 20261202}

// regressionSeeds are seeds that once failed, each run (synced and
// chained) up to and including the step that failed: seed 47 step 208
// (owned-kept where the reference's prune leaves null above the kept
// map), seeds 68 step 257, 70 step 495 and 101 step 40 (an applied map
// whose fields claim nothing is owned), seed 232 step 555 (null-to-map
// where the null's entry held the map above) and seed 240 step 34
// (owned-kept where the applier applies the kept map as {}), seeds 157
// step 412 and 259 step 247 (a map emptied by dropping an item with
// others' fields in it goes).
var regressionSeeds = map[uint64]int{47: 209, 68: 258, 70: 496, 101: 41, 157: 413, 232: 556, 240: 35, 259: 248}

// longSeeds are the seeds of the long run (4 x 5,000 steps, each mode);
// neither the fixed runs nor earlier audits used them (the round before
// used 23001-23004).
var longSeeds = []uint64{24001, 24002, 24003, 24004}

// cmp is one compared step: its input, each engine's state before it and
// both outcomes.
type cmp struct {
	op         string // "apply", "force" or "update"
	manager    string
	applied    map[string]any                // the applied config; nil for an update
	nullMaps   []string                      // an update's null <-> map paths
	gotBefore  map[string]any                // steady's object before the step
	wantBefore map[string]any                // the reference's
	gotPrev    map[string][]string           // steady's owned leaves before the step
	wantPrev   map[string][]string           // the reference's
	heldBefore func(entry, path string) bool // the reference's sets before the step
	got, want  outcome
}

// drift is where the engines' states differed after the last step, all of
// it excused: object paths (field paths, lists compared as values) and
// (entry, path) pairs of the entries' members. In a chained run a
// difference that follows from one an earlier step's rule excused is rule
// carried: in the object, the conflicts or the no-op flag, one at, above
// or below a path where the objects or the owners drifted (whether a
// prune keeps a field, or an apply conflicts, depends on its owners); in
// the owned paths, the same drifted pair, one in such an object subtree
// or in a subtree carried so, or a leaf that is one in one engine only
// because the entry's members below it drifted
// (TestCarriedCatchesPlantedFaults checks that nothing where the states
// agreed is carried). A difference apart from all earlier drift that
// appears in a step no rule touched is not drift but a divergence (run
// reports it). Synced runs have no drift.
type drift struct {
	paths map[string]bool
	owned map[string]bool // "entry path"
}

// related reports whether p lies at, above or below a path where the
// objects or the owners differed.
func (d drift) related(p string) bool {
	return d.relatedObject(p) || d.ownersAround(p)
}

// ownersAround reports whether the owners of p, or of a path above or
// below it, differed.
func (d drift) ownersAround(p string) bool {
	for pair := range d.owned {
		if _, q, _ := strings.Cut(pair, " "); atOrBelow(p, q) || atOrBelow(q, p) {
			return true
		}
	}
	return false
}

// ownedBelow reports whether entry k's members strictly below p differed.
func (d drift) ownedBelow(k, p string) bool {
	for pair := range d.owned {
		if e, q, _ := strings.Cut(pair, " "); e == k && q != p && atOrBelow(q, p) {
			return true
		}
	}
	return false
}

// relatedObject reports whether p lies at, above or below a path where
// the objects differed.
func (d drift) relatedObject(p string) bool {
	for q := range d.paths {
		if atOrBelow(p, q) || atOrBelow(q, p) {
			return true
		}
	}
	return false
}

// stateDrift returns where the engines' states differ: object paths, and
// (entry, path) pairs of their members, not only their leaves, so that a
// map or list one engine's entry holds and the other's does not is drift
// too. It is empty when the states are equal.
func stateDrift(st engine, ref *reference) drift {
	after := objectDiff(st.object(), ref.object())
	afterOwned := ownedDiff(st.members(), ref.members())
	if len(after) == 0 && len(afterOwned) == 0 {
		return drift{}
	}
	d := drift{paths: map[string]bool{}, owned: map[string]bool{}}
	for _, p := range after {
		d.paths[p] = true
	}
	for _, p := range afterOwned {
		d.owned[p] = true
	}
	return d
}

// apart returns the differences of d (object paths, and "entry path"
// pairs) that lie neither at, above nor below a path where prev differed,
// in the object or in any entry's members.
func (d drift) apart(prev drift) []string {
	var out []string
	for p := range d.paths {
		if !prev.related(p) {
			out = append(out, p)
		}
	}
	for pair := range d.owned {
		if _, p, _ := strings.Cut(pair, " "); !prev.related(p) {
			out = append(out, pair)
		}
	}
	slices.Sort(out)
	return out
}

// judge compares one step. It returns which of object, conflicts, no-op
// flag and owned paths agree once the named rules are applied, and the
// rules it applied (used).
//
// byField records, per rule, what it was applied to: the input (the
// reference's config, before judge), each compared field, or the whole
// step (a refusal only one engine made).
func judge(c *cmp, d drift, used ruleHits, byField map[string]*[nWhere]bool) [4]bool {
	var f [nWhere]ruleHits
	for i := range f {
		f[i] = ruleHits{}
	}
	for name := range used {
		f[whereInput].hit(name)
	}
	got := carry(c, d, &f)
	sameObj, kept := sameObject(c, got.object, &f[0])
	ok := [4]bool{
		sameObj,
		sameConflicts(c, got.conflicts, &f[1]),
		c.got.conflicts != nil || c.want.conflicts != nil || got.noop == c.want.noop || reorderOnly(c, got, &f[2]),
		sameOwned(c, got.owned, kept, &f[3]),
	}
	switch {
	case refusedInDrift(c, d):
		// Rule carried: only one engine refused, on drifted paths only.
		f[whereStep].hit("carried")
		ok = [4]bool{true, true, true, true}
	case nullToMap(c):
		// Rule null-to-map (doc.go): only steady refused, and only for
		// stored nulls the config makes maps; the reference wrote.
		f[whereStep].hit("null-to-map")
		ok = [4]bool{true, true, true, true}
	}
	for i := range f {
		for name := range f[i] {
			used.hit(name)
			if byField[name] == nil {
				byField[name] = new([nWhere]bool)
			}
			byField[name][i] = true
		}
	}
	return ok
}

// What a rule was applied to: the four compared fields (judge's order),
// the reference's input, or the whole step; whereAlone counts the steps
// where it was the only rule applied.
const (
	whereInput = 4
	whereStep  = 5
	whereAlone = 6
	nWhere     = 7
)

var whereNames = [nWhere]string{"object", "conflicts", "no-op", "owned", "input", "step", "alone"}

// reorderOnly reports whether steady's no-op differs from the reference's
// write only by rule list-order: the reference changed nothing but the
// order of keyed lists and sets.
func reorderOnly(c *cmp, got outcome, rules *ruleHits) bool {
	if !got.noop || c.want.noop || !ownedEqual(c.wantPrev, c.want.owned) ||
		js(c.wantBefore) == js(c.want.object) || js(sortLists(c.wantBefore, "obj")) != js(sortLists(c.want.object, "obj")) {
		return false
	}
	rules.hit("list-order")
	return true
}

// refusedInDrift reports whether exactly one engine refused the step and
// every conflict it reported lies in a drifted subtree.
func refusedInDrift(c *cmp, d drift) bool {
	refused := c.got.conflicts
	switch {
	case c.got.conflicts != nil && c.want.conflicts != nil, c.got.conflicts == nil && c.want.conflicts == nil:
		return false
	case c.want.conflicts != nil:
		refused = c.want.conflicts
	}
	return !slices.ContainsFunc(refused, func(g string) bool {
		_, p, _ := strings.Cut(g, " ")
		return !d.related(p)
	})
}

// carry returns steady's outcome with the differences from the
// reference's that lie in drifted subtrees replaced by the reference's
// (rule carried).
func carry(c *cmp, d drift, f *[nWhere]ruleHits) outcome {
	got := c.got
	if len(d.paths) == 0 && len(d.owned) == 0 {
		return got
	}
	hit := func(i int) { f[i].hit("carried") }
	copied := false
	var carried []string // object paths carried: their owners are too
	for _, p := range objectDiff(c.got.object, c.want.object) {
		if !d.related(p) {
			continue
		}
		carried = append(carried, p)
		if !copied {
			got.object, copied = ownership.DeepCopy(got.object).(map[string]any), true
		}
		hit(0)
		wv, ok := lookup(c.want.object, p)
		setPath(got.object, p, wv, ok)
	}
	copied = false
	for _, pair := range ownedDiff(c.got.owned, c.want.owned) {
		k, p, _ := strings.Cut(pair, " ")
		inCarried := slices.ContainsFunc(carried, func(q string) bool { return atOrBelow(p, q) })
		if !d.owned[pair] && !d.relatedObject(p) && !d.ownedBelow(k, p) && !inCarried {
			// Only the same (entry, path) drifted, the object there, or
			// the entry's members below p (which decide whether p is
			// one of its leaves).
			continue
		}
		if !copied {
			got.owned, copied = cloneOwned(got.owned), true
		}
		hit(3)
		if slices.Contains(c.want.owned[k], p) {
			got.owned[k] = append(got.owned[k], p)
			slices.Sort(got.owned[k])
		} else {
			got.owned[k] = slices.DeleteFunc(got.owned[k], func(q string) bool { return q == p })
			if len(got.owned[k]) == 0 {
				delete(got.owned, k)
			}
		}
	}
	if got.conflicts != nil && c.want.conflicts != nil {
		// The same refusal, with owners that drifted.
		var out []string
		for _, g := range got.conflicts {
			if _, p, _ := strings.Cut(g, " "); !d.related(p) || slices.Contains(c.want.conflicts, g) {
				out = append(out, g)
			} else {
				hit(1)
			}
		}
		for _, w := range c.want.conflicts {
			if _, p, _ := strings.Cut(w, " "); d.related(p) && !slices.Contains(out, w) {
				out = append(out, w)
				hit(1)
			}
		}
		slices.Sort(out)
		got.conflicts = out
	}
	if got.conflicts == nil && c.want.conflicts == nil && got.noop != c.want.noop {
		// The engine that wrote changed only paths where the objects or
		// the owners had drifted (at, above or below them).
		before, after, prev, owned := c.gotBefore, c.got.object, c.gotPrev, c.got.owned
		if got.noop {
			before, after, prev, owned = c.wantBefore, c.want.object, c.wantPrev, c.want.owned
		}
		changes := objectDiff(before, after)
		for _, pair := range ownedDiff(prev, owned) {
			_, p, _ := strings.Cut(pair, " ")
			changes = append(changes, p)
		}
		if !slices.ContainsFunc(changes, func(p string) bool { return !d.related(p) }) {
			got.noop = c.want.noop
			hit(2)
		}
	}
	return got
}

func cloneOwned(m map[string][]string) map[string][]string {
	out := make(map[string][]string, len(m))
	for k, v := range m {
		out[k] = slices.Clone(v)
	}
	return out
}

// sameAt reports whether a and b hold the same value (or none) at p.
func sameAt(a, b map[string]any, p string) bool {
	av, aok := lookup(a, p)
	bv, bok := lookup(b, p)
	return aok == bok && js(av) == js(bv)
}

// objectDiff lists the field paths where a and b differ: a key one lacks,
// or values that are not both maps and differ (lists compared sorted, as
// rule list-order does).
func objectDiff(a, b map[string]any) []string {
	var out []string
	var walk func(a, b map[string]any, path, typ string)
	walk = func(a, b map[string]any, path, typ string) {
		for _, k := range slices.Sorted(maps.Keys(mergeKeys(a, b))) {
			p := path + "." + k
			ct, _ := childType(typ, diff.Element{Kind: diff.FieldElem, Name: k})
			av, aok := a[k]
			bv, bok := b[k]
			am, amap := av.(map[string]any)
			bm, bmap := bv.(map[string]any)
			switch {
			case aok != bok:
				out = append(out, p)
			case amap && bmap && ct != "sel":
				walk(am, bm, p, ct)
			case js(sortLists(av, ct)) != js(sortLists(bv, ct)):
				out = append(out, p)
			}
		}
	}
	walk(a, b, "", "obj")
	return out
}

func mergeKeys(a, b map[string]any) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// ownedDiff lists the "entry path" pairs that one side owns and the other
// does not.
func ownedDiff(a, b map[string][]string) []string {
	var out []string
	for k := range mergeKeys(toSet(a), toSet(b)) {
		for _, p := range a[k] {
			if !slices.Contains(b[k], p) {
				out = append(out, k+" "+p)
			}
		}
		for _, p := range b[k] {
			if !slices.Contains(a[k], p) {
				out = append(out, k+" "+p)
			}
		}
	}
	slices.Sort(out)
	return out
}

func toSet(m map[string][]string) map[string]any {
	out := make(map[string]any, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// setPath sets (or, with !ok, deletes) field path p of obj, creating maps
// on the way; obj is a private copy.
func setPath(obj map[string]any, p string, v any, ok bool) {
	names := strings.Split(p, ".")[1:]
	m := obj
	for _, n := range names[:len(names)-1] {
		next, isMap := m[n].(map[string]any)
		if !isMap {
			next = map[string]any{}
			m[n] = next
		}
		m = next
	}
	last := names[len(names)-1]
	if ok {
		m[last] = v
	} else {
		delete(m, last)
	}
}

// report is one run's agreement figures.
type report struct {
	seed        uint64
	chained     bool
	steps       int
	ops         map[string]int
	agree       [4]int // after the rules
	identical   [4]int // raw, before any rule
	all         int    // all four agree after the rules
	noRule      int    // all four identical and no rule applied at all
	rules       ruleHits
	where       map[string]*[nWhere]int // per rule, the steps it was applied to each of
	carriedFrom ruleHits                // chained: carried steps per rule that began their drift
	examples    []string
	unexplained []int      // step numbers
	faults      []planting // mutation test: what each planted fault did
}

// planting is what one planted fault did in a run: the steps it was
// planted in, of those the steps reported, and examples of those that
// passed.
type planting struct {
	planted, caught int
	passed          []string
}

// run runs steps random steps from seed through both engines. chained
// keeps each engine on its own state; otherwise, after a step that does
// not end identically, the reference takes steady's state (synced).
// Each of faults may plant a fault in a copy of a step's comparison (in
// steady's outcome; it must copy what it changes) and reports whether it
// did; the copy is judged on its own (report.faults), and the run goes
// on from the step as it was, so that one run serves every fault.
func run(t *testing.T, seed uint64, steps int, chained bool, faults ...func(*cmp) bool) report {
	g := &gen{r: rand.New(rand.NewPCG(seed, 1))}
	ref := newReference(t)
	st := engine{live: map[string]any{}} // both engines start from {}
	rep := report{seed: seed, chained: chained, steps: steps, ops: map[string]int{}, rules: ruleHits{}, where: map[string]*[nWhere]int{}, carriedFrom: ruleHits{}, faults: make([]planting, len(faults))}
	var d drift
	var began map[string][]string // chained: where each element of d began
	for step := 0; step < steps; step++ {
		c := &cmp{
			manager:    []string{"alpha", "beta", "gamma"}[g.r.IntN(3)],
			gotBefore:  st.object(),
			wantBefore: ref.object(),
			gotPrev:    st.owned(),
			wantPrev:   ref.owned(),
		}
		prevManagers := cloneManagers(ref.managers)
		c.heldBefore = func(k, p string) bool { return (&reference{managers: prevManagers}).holds(k, p) }
		used := ruleHits{} // the rules this step applied
		var what string
		switch k := g.r.IntN(20); {
		case k < 15:
			force := k >= 12
			cfg := g.obj(0)
			c.op, c.applied = map[bool]string{false: "apply", true: "force"}[force], cfg
			what = fmt.Sprintf("%s %s %s", c.op, c.manager, js(cfg))
			refCfg, stripped := stripNulls(cfg)
			if stripped {
				used.hit("applied-null")
			}
			c.got = st.apply(t, cfg, c.manager, force)
			c.want = ref.apply(t, refCfg, c.manager, force, &used)
		default:
			next := g.mutate(st.object())
			c.op = "update"
			what = fmt.Sprintf("update %s %s", c.manager, js(next))
			c.nullMaps = nullMapPaths(c.wantBefore, next, "")
			c.got = st.update(t, next, c.manager)
			c.want = ref.update(t, next, c.manager)
		}
		rep.ops[c.op]++
		input := maps.Clone(used) // the rules applied to the input
		raw := [4]bool{
			js(c.got.object) == js(c.want.object),
			slices.Equal(c.got.conflicts, c.want.conflicts),
			c.got.noop == c.want.noop,
			ownedEqual(c.got.owned, c.want.owned),
		}
		byField := map[string]*[nWhere]bool{}
		ok := judge(c, d, used, byField)
		// The states after the step. Chained, a difference between them
		// that lies apart from every earlier one must come from a step
		// some rule excused: one that appears in a step no rule touched
		// is a divergence the four compared fields do not show yet (an
		// entry holding a map or list the other engine's does not).
		var next drift
		divergent := func(used ruleHits, ok *[4]bool) {
			if !chained || len(used) > 0 {
				return
			}
			for _, p := range next.apart(d) {
				if strings.Contains(p, " ") {
					ok[3] = false
				} else {
					ok[0] = false
				}
			}
		}
		if chained {
			next = stateDrift(st, ref)
		}
		divergent(used, &ok)
		for i, plant := range faults {
			fc := *c
			if !plant(&fc) {
				continue
			}
			fu := maps.Clone(input)
			fok := judge(&fc, d, fu, map[string]*[nWhere]bool{})
			divergent(fu, &fok)
			f := &rep.faults[i]
			f.planted++
			switch {
			case fok != [4]bool{true, true, true, true}:
				f.caught++
			case len(f.passed) < 8:
				f.passed = append(f.passed, fmt.Sprintf("planted fault passed: seed %d step %d (chained=%v): %s rules %v\n  steady:    %s conflicts=%v noop=%v owned=%v\n  reference: %s conflicts=%v noop=%v owned=%v",
					seed, step, chained, what, slices.Sorted(maps.Keys(fu)), js(fc.got.object), fc.got.conflicts, fc.got.noop, fc.got.owned, js(fc.want.object), fc.want.conflicts, fc.want.noop, fc.want.owned))
			}
		}
		for name := range used {
			rep.rules.hit(name)
		}
		for name := range used {
			byField[name][whereAlone] = len(used) == 1
		}
		for name, w := range byField {
			if rep.where[name] == nil {
				rep.where[name] = new([nWhere]int)
			}
			for i, on := range w {
				if on {
					rep.where[name][i]++
				}
			}
		}
		for i := range ok {
			if raw[i] {
				rep.identical[i]++
			}
			if ok[i] {
				rep.agree[i]++
			}
		}
		exact := raw == [4]bool{true, true, true, true}
		if exact && len(used) == 0 {
			rep.noRule++
		}
		if ok == [4]bool{true, true, true, true} {
			rep.all++
		} else {
			rep.unexplained = append(rep.unexplained, step)
			if len(rep.examples) < 8 {
				rep.examples = append(rep.examples, fmt.Sprintf("seed %d step %d (chained=%v): %s\n  agree object/conflicts/noop/owned: %v\n  steady:    %s conflicts=%v noop=%v owned=%v\n  reference: %s conflicts=%v noop=%v owned=%v",
					seed, step, chained, what, ok, js(c.got.object), c.got.conflicts, c.got.noop, c.got.owned, js(c.want.object), c.want.conflicts, c.want.noop, c.want.owned))
			}
		}
		if !chained {
			if js(st.object()) != js(ref.object()) || !ownedEqual(st.owned(), ref.owned()) {
				ref.reset(t, st.live, st.managed)
			}
			continue
		}
		if used["carried"] > 0 {
			for _, r := range origins(began) {
				rep.carriedFrom[r]++
			}
		}
		began = traceDrift(next, began, used)
		d = next
	}
	return rep
}

// traceDrift returns, for each element of drift next (an object path or
// an "entry path" pair), the rules of the step where it began: prev's for
// one that was there before; for a new one, the rules this step applied
// (used), other than carried, and where carried applied, the origins of
// the earlier elements at, above or below its path, from which it
// follows.
func traceDrift(next drift, prev map[string][]string, used ruleHits) map[string][]string {
	out := make(map[string][]string, len(next.paths)+len(next.owned))
	pathOf := func(e string) string {
		if _, p, ok := strings.Cut(e, " "); ok {
			return p
		}
		return e
	}
	add := func(e string) {
		if o, ok := prev[e]; ok {
			out[e] = o
			return
		}
		set := map[string]bool{}
		for name := range used {
			set[name] = name != "carried"
		}
		if used["carried"] > 0 {
			for q, o := range prev {
				if p, qp := pathOf(e), pathOf(q); atOrBelow(p, qp) || atOrBelow(qp, p) {
					for _, name := range o {
						set[name] = true
					}
				}
			}
		}
		for name, in := range set {
			if in {
				out[e] = append(out[e], name)
			}
		}
		slices.Sort(out[e])
	}
	for e := range next.paths {
		add(e)
	}
	for e := range next.owned {
		add(e)
	}
	return out
}

// origins lists the rules that began any element of a drift traced by
// traceDrift, each once.
func origins(began map[string][]string) []string {
	set := map[string]bool{}
	for _, o := range began {
		for _, name := range o {
			set[name] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

func pct(n, of int) string { return fmt.Sprintf("%6.2f%%", 100*float64(n)/float64(of)) }

// table formats reports as the agreement table: per seed and mode, per
// field (agree after the rules / identical before them), and the steps
// each rule was applied to.
func table(reps []report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-9s %-8s %6s | %-17s %-17s %-17s %-17s | %7s %8s %6s\n", "seed", "mode", "steps",
		"object", "conflicts", "no-op flag", "owned paths", "all", "no rule", "unexpl")
	// Totals per mode: the modes measure different things.
	tots := map[bool]*report{false: {chained: false, rules: ruleHits{}}, true: {chained: true, rules: ruleHits{}}}
	runs := map[bool]int{}
	for _, r := range reps {
		row(&b, fmt.Sprint(r.seed), r)
		tot := tots[r.chained]
		runs[r.chained]++
		for name, n := range r.rules {
			tot.rules[name] += n
		}
		tot.steps += r.steps
		tot.all += r.all
		tot.noRule += r.noRule
		for i := range r.agree {
			tot.agree[i] += r.agree[i]
			tot.identical[i] += r.identical[i]
		}
		tot.unexplained = append(tot.unexplained, r.unexplained...)
	}
	for _, chained := range []bool{false, true} {
		if runs[chained] > 1 {
			row(&b, "total", *tots[chained])
		}
	}
	b.WriteString("(each field: agree after the rules / identical before any rule; no rule: all four identical and no rule applied)\n")
	b.WriteString(whereTable(reps))
	return b.String()
}

// row formats one run's (or one mode's total) line of the table and the
// steps each rule was applied to.
func row(b *strings.Builder, name string, r report) {
	mode := map[bool]string{false: "synced", true: "chained"}[r.chained]
	fmt.Fprintf(b, "%-9s %-8s %6d |", name, mode, r.steps)
	for i := range r.agree {
		fmt.Fprintf(b, " %s/%s", pct(r.agree[i], r.steps), pct(r.identical[i], r.steps))
	}
	fmt.Fprintf(b, " | %s %s %6d\n", pct(r.all, r.steps), pct(r.noRule, r.steps), len(r.unexplained))
	fmt.Fprintf(b, "%28s rules (steps):", "")
	for _, name := range slices.Sorted(maps.Keys(r.rules)) {
		fmt.Fprintf(b, " %s=%d", name, r.rules[name])
	}
	b.WriteString("\n")
}

// whereTable lists, per mode and rule, the steps the rule was applied to,
// in all and to each field, the reference's input and whole steps.
func whereTable(reps []report) string {
	var b strings.Builder
	for _, chained := range []bool{false, true} {
		steps, rules, where := 0, ruleHits{}, map[string]*[nWhere]int{}
		for _, r := range reps {
			if r.chained != chained {
				continue
			}
			steps += r.steps
			for name, n := range r.rules {
				rules[name] += n
				if where[name] == nil {
					where[name] = new([nWhere]int)
				}
				if w := r.where[name]; w != nil {
					for i := range w {
						where[name][i] += w[i]
					}
				}
			}
		}
		if steps == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s, %d steps: steps each rule was applied to, in all and per field\n", map[bool]string{false: "synced", true: "chained"}[chained], steps)
		fmt.Fprintf(&b, "  %-24s %6s", "rule", "steps")
		for _, n := range whereNames {
			fmt.Fprintf(&b, " %9s", n)
		}
		b.WriteString("\n")
		names := slices.Sorted(maps.Keys(rules))
		slices.SortStableFunc(names, func(x, y string) int { return rules[y] - rules[x] })
		for _, name := range names {
			fmt.Fprintf(&b, "  %-24s %6d", name, rules[name])
			for _, n := range where[name] {
				fmt.Fprintf(&b, " %9d", n)
			}
			b.WriteString("\n")
		}
		from := ruleHits{}
		for _, r := range reps {
			if r.chained == chained {
				for name, n := range r.carriedFrom {
					from[name] += n
				}
			}
		}
		if len(from) > 0 {
			b.WriteString("  carried steps, by the rules of the steps where their drift began (a step may count for several):")
			for _, name := range slices.Sorted(maps.Keys(from)) {
				fmt.Fprintf(&b, " %s=%d", name, from[name])
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// chainedBudget is the share of chained steps that may stay unexplained
// in CI: differences that follow from an earlier excused one in ways no
// rule names yet (issue 23 asks for none; see doc.go). The fixed seeds
// and the 20,000 steps of TestDifferentialLong have none; fresh seeds
// showed at most 1 in 1,000. Synced runs may have none.
const chainedBudget = 0.003

// check logs the table and fails on any unexplained synced step, and on
// chained runs over chainedBudget (strict: on any).
func check(t *testing.T, reps []report, strict bool) {
	t.Helper()
	t.Log("steady vs structured-merge-diff v6.4.2\n" + table(reps))
	for _, r := range reps {
		for _, e := range r.examples {
			t.Log(e)
		}
		if r.chained && !strict && float64(len(r.unexplained)) <= chainedBudget*float64(r.steps) {
			if len(r.unexplained) > 0 {
				t.Logf("seed %d (chained): %d of %d steps unexplained, within the budget of %.1f%% (replay with -seed=%d)",
					r.seed, len(r.unexplained), r.steps, 100*chainedBudget, r.seed)
			}
			continue
		}
		if len(r.unexplained) > 0 {
			t.Errorf("seed %d (chained=%v): %d of %d steps differ in a way no documented rule explains (examples above); replay with -seed=%d",
				r.seed, r.chained, len(r.unexplained), r.steps, r.seed)
		}
	}
}

// TestDifferential runs seeded random scenarios of three managers through
// steady and structured-merge-diff, each synced (every step starts from
// the same state) and chained (each engine on its own state throughout),
// and requires that they agree, in every step, on the conflicts, the
// object, the no-op flag and each (manager, operation)'s owned leaf
// paths, once the differences doc.go lists are removed by a named rule
// each. It runs the fixed seeds and regressionSeeds, so that CI is
// deterministic; -fresh=N adds
// N fresh seeds, each printed so that a failure can be replayed with -seed.
// Under -race the fixed and fresh seeds run the first quarter of their
// steps unless -steps is given (race.Sweep): the engines run on one
// goroutine, which the race detector slows about fivefold, and
// scripts/test.sh, README's command, runs every step without it.
func TestDifferential(t *testing.T) {
	steps := *stepsFlag
	if !stepsGiven() {
		steps = race.Sweep(steps, 4)
	}
	seeds := fixedSeeds
	if *seedFlag != 0 {
		seeds = []uint64{*seedFlag}
	} else {
		seeds = slices.Clone(seeds)
		for i := range *freshFlag {
			fresh := uint64(time.Now().UnixNano()) + uint64(i)
			t.Logf("fresh seed %d (replay: go test -run Differential -seed=%d)", fresh, fresh)
			seeds = append(seeds, fresh)
		}
	}
	var reps []report
	for _, seed := range seeds {
		for _, chained := range []bool{false, true} {
			reps = append(reps, run(t, seed, steps, chained))
		}
	}
	if *seedFlag == 0 {
		for _, seed := range slices.Sorted(maps.Keys(regressionSeeds)) {
			for _, chained := range []bool{false, true} {
				reps = append(reps, run(t, seed, regressionSeeds[seed], chained))
			}
		}
	}
	check(t, reps, false)
}

// stepsGiven reports whether -steps was set on the command line.
func stepsGiven() bool {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "steps" })
	return given
}

// TestDifferentialLong is the bound of issue 23: 20,000 chained steps over
// seeds not used elsewhere, no unexplained step, all four fields identical
// with no rule applied on at least 85% of steps and conflicts identical on
// at least 99.5%. It runs the same seeds synced too, for doc.go's table
// (the bound is on the chained runs). It runs with -long.
func TestDifferentialLong(t *testing.T) {
	if !*longFlag {
		t.Skip("run with -long")
	}
	var reps []report
	for _, chained := range []bool{false, true} {
		for _, seed := range longSeeds {
			reps = append(reps, run(t, seed, 5000, chained))
		}
	}
	check(t, reps, true)
	var steps, noRule, conflicts int
	for _, r := range reps {
		if r.chained {
			steps, noRule, conflicts = steps+r.steps, noRule+r.noRule, conflicts+r.identical[1]
		}
	}
	if float64(noRule) < 0.85*float64(steps) {
		t.Errorf("all four identical with no rule on %d of %d steps; want >= 85%%", noRule, steps)
	}
	if float64(conflicts) < 0.995*float64(steps) {
		t.Errorf("conflicts identical on %d of %d steps; want >= 99.5%%", conflicts, steps)
	}
}
