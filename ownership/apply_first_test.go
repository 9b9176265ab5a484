package ownership

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkFirstAgrees checks applyFirst against the full walk for manager's
// apply of cfg when manager has no Apply entry, and reports whether
// applyFirst took it. The results must agree exactly: the object (number
// types included), both flags, and every entry node for node.
func checkFirstAgrees(t *testing.T, live, cfg map[string]any, mgr string, managed Managed, sch *Schema) bool {
	t.Helper()
	if managed.Find(mgr, OpApply) >= 0 {
		return false
	}
	liveJSON, cfgJSON, before := mustJSON(live), mustJSON(cfg), snapshot(managed)
	quick, ok := applyFirst(live, cfg, mgr, managed, sch.top())
	require.Equal(t, liveJSON, mustJSON(live), "applyFirst modified live")
	require.Equal(t, cfgJSON, mustJSON(cfg), "applyFirst modified config")
	require.Equal(t, before, snapshot(managed), "applyFirst modified managed")
	if !ok {
		return false
	}
	r, err := applyMerge(live, cfg, mgr, managed, options{schema: sch}, -1)
	why := func() string {
		return "live " + liveJSON + "\nconfig " + cfgJSON + "\nrecord " + mustJSON(before)
	}
	require.NoError(t, err, "applyFirst took an apply the full walk rejects:\n%s", why())
	require.Equal(t, r.Changed, quick.Changed, "Changed:\n%s", why())
	require.Equal(t, r.ObjectChanged, quick.ObjectChanged, "ObjectChanged:\n%s", why())
	require.True(t, reflect.DeepEqual(r.Object, quick.Object), "objects differ:\nwalk  %#v\nfirst %#v\n%s", r.Object, quick.Object, why())
	require.Equal(t, len(r.Managed), len(quick.Managed), "records differ:\nwalk  %v\nfirst %v\n%s", snapshot(r.Managed), snapshot(quick.Managed), why())
	for i, e := range r.Managed {
		q := quick.Managed[i]
		require.Equal(t, e.Manager, q.Manager, "entry %d\n%s", i, why())
		require.Equal(t, e.Operation, q.Operation, "entry %d\n%s", i, why())
		require.True(t, reflect.DeepEqual(e.Set.nodes, q.Set.nodes), "entry %d's set:\nwalk  %+v\nfirst %+v\n%s", i, e.Set.nodes, q.Set.nodes, why())
	}
	return true
}

// firstSchema is a status side's: keyed conditions, and in the status a
// keyed list, a set and an atomic map.
var firstSchema = mustSchema(map[string]Strategy{
	".conditions":   Keyed("type"),
	".status.pods":  Keyed("name"),
	".status.tags":  AsSet(),
	".status.sel":   Atomic(),
	".status.m.sel": Atomic(),
})

// firstGen makes status-side trees over a small vocabulary, so that
// managers' fields overlap often.
type firstGen struct{ r *rand.Rand }

func (g firstGen) scalar() any {
	return []any{int64(0), int64(1), 1.0, int64(2), "x", "y", true, false, nil}[g.r.IntN(9)]
}

// status returns a status map: scalar fields, a nested map, a keyed list,
// a set, an atomic map, nulls and type changes, each present by chance.
func (g firstGen) status(depth int) map[string]any {
	m := map[string]any{}
	for _, k := range []string{"ready", "phase", "count", "obs"} {
		if g.r.IntN(3) > 0 {
			m[k] = g.scalar()
		}
	}
	if depth == 0 && g.r.IntN(3) == 0 {
		m["m"] = g.status(1)
	}
	if g.r.IntN(6) == 0 {
		m["n"] = map[string]any{"z": g.scalar()} // a map where a scalar is elsewhere
	} else if g.r.IntN(6) == 0 {
		m["n"] = g.scalar()
	}
	if g.r.IntN(5) == 0 {
		var pods []any
		for _, name := range []string{"p", "q"} {
			if g.r.IntN(2) == 0 {
				pods = append(pods, map[string]any{"name": name, "v": g.scalar()})
			}
		}
		m["pods"] = pods
	}
	if g.r.IntN(6) == 0 {
		m["tags"] = []any{"s", int64(3)}[:g.r.IntN(3)]
	}
	if g.r.IntN(6) == 0 {
		m["sel"] = map[string]any{"k": g.scalar()}
	}
	if g.r.IntN(10) == 0 {
		m["empty"] = map[string]any{}
	}
	return m
}

// side returns a status-side tree: a status and, by chance, conditions.
func (g firstGen) side() map[string]any {
	t := map[string]any{"status": g.status(0)}
	if g.r.IntN(4) == 0 {
		t["status"] = nil
	}
	if g.r.IntN(3) == 0 {
		var conds []any
		for _, typ := range []string{"Ready", "Stalled"} {
			if g.r.IntN(2) == 0 {
				conds = append(conds, map[string]any{"type": typ, "status": []any{"True", "False"}[g.r.IntN(2)]})
			}
		}
		t["conditions"] = conds
	}
	return t
}

// small returns a config most often in applyFirst's shape: a few status
// fields, sometimes nested, null, or more than it takes.
func (g firstGen) small() map[string]any {
	st := map[string]any{}
	for _, k := range []string{"ready", "phase", "count", "obs", "n"} {
		if g.r.IntN(3) == 0 {
			st[k] = g.scalar()
		}
	}
	if g.r.IntN(4) == 0 {
		st["m"] = map[string]any{"ready": g.scalar(), "obs": g.scalar()}
	}
	if g.r.IntN(12) == 0 {
		st["n"] = map[string]any{"z": g.scalar()}
	}
	cfg := map[string]any{"status": st}
	switch g.r.IntN(12) {
	case 0:
		cfg["conditions"] = []any{map[string]any{"type": "Ready", "status": "True"}}
	case 1:
		cfg = g.side()
	}
	return cfg
}

// TestApplyFirstMatchesTheWalk: for a manager's first apply over random
// status-side objects and records (other managers' Apply and Update
// entries, overlapping fields, lists, nulls, conditions, and the
// manager's own Update entry), Apply's result, error included, is the
// full walk's, and applyFirst takes a good share of them.
func TestApplyFirstMatchesTheWalk(t *testing.T) {
	g := firstGen{rand.New(rand.NewPCG(26, 1))}
	opt := WithSchema(firstSchema)
	took, tried := 0, 0
	for range 4000 {
		var live map[string]any
		var managed Managed
		for range g.r.IntN(4) {
			mgr := []string{"user", "loop", "other", "ctrl"}[g.r.IntN(4)]
			switch {
			case live != nil && g.r.IntN(3) == 0:
				next := g.side()
				if r, err := Update(live, next, mgr, managed, opt); err == nil {
					live, managed = r.Object, r.Managed
				}
			case mgr != "ctrl":
				if r, err := Apply(live, g.side(), mgr, managed, opt, Force()); err == nil {
					live, managed = r.Object, r.Managed
				}
			}
		}
		if live == nil {
			live = g.side()
		}
		if g.r.IntN(20) == 0 {
			// An entry that owns nothing, as a record decoded from
			// elsewhere may hold: Apply drops it.
			managed = append(slices.Clone(managed), Entry{Manager: "ghost", Operation: OpUpdate, Set: &Set{}})
		}
		cfg := g.small()
		tried++
		if checkFirstAgrees(t, live, cfg, "ctrl", managed, firstSchema) {
			took++
		}
		got, err := Apply(live, cfg, "ctrl", managed, opt)
		want, werr := applyMerge(live, cfg, "ctrl", managed, options{schema: firstSchema}, managed.Find("ctrl", OpApply))
		if werr != nil {
			require.Error(t, err, "the walk failed (%v), Apply did not", werr)
			require.Equal(t, werr.Error(), err.Error())
			continue
		}
		require.NoError(t, err)
		require.True(t, reflect.DeepEqual(want.Object, got.Object), "objects differ\nwalk  %#v\napply %#v", want.Object, got.Object)
		require.Equal(t, snapshot(want.Managed), snapshot(got.Managed))
		require.Equal(t, want.Changed, got.Changed)
		require.Equal(t, want.ObjectChanged, got.ObjectChanged)
	}
	t.Logf("applyFirst took %d of %d first applies", took, tried)
	require.Greater(t, took, tried/4, "applyFirst took too few to be tested")
	require.Less(t, took, tried*9/10, "applyFirst gave up too rarely for its limits to be tested")
}

// TestApplyFirstShortcut: the shapes applyFirst takes and gives up on.
func TestApplyFirstShortcut(t *testing.T) {
	live := func() map[string]any {
		return map[string]any{"status": map[string]any{"ready": int64(0), "phase": "x"}, "conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
	}
	loop, err := Apply(live(), map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}, "loop", nil, WithSchema(firstSchema))
	require.NoError(t, err)
	owner, err := Apply(live(), map[string]any{"status": map[string]any{"phase": "x"}}, "owner", loop.Managed, WithSchema(firstSchema))
	require.NoError(t, err)
	tests := []struct {
		name string
		cfg  map[string]any
		take bool
	}{
		{"one field beside another's condition", map[string]any{"status": map[string]any{"ready": int64(1)}}, true},
		{"a field another owns, unchanged", map[string]any{"status": map[string]any{"ready": int64(1), "phase": "x"}}, true},
		{"a field another owns, changed", map[string]any{"status": map[string]any{"phase": "y"}}, false},
		{"a new nested map", map[string]any{"status": map[string]any{"m": map[string]any{"a": true}}}, true},
		{"a null beside a field", map[string]any{"status": map[string]any{"ready": nil, "obs": int64(2)}}, true},
		{"only nulls", map[string]any{"status": map[string]any{"ready": nil}}, false},
		{"an empty map", map[string]any{"status": map[string]any{}}, false},
		{"a list", map[string]any{"status": map[string]any{"tags": []any{"s"}}}, false},
		{"an atomic map", map[string]any{"status": map[string]any{"sel": map[string]any{"k": "v"}}}, false},
		{"a condition", map[string]any{"conditions": []any{map[string]any{"type": "Stalled", "status": "True"}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.take, checkFirstAgrees(t, owner.Object, tt.cfg, "ctrl", owner.Managed, firstSchema))
		})
	}
}
