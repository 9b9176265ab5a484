package ownership

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// checkNoopAgrees requires that when Apply's shortcuts take an apply, the
// full walk agrees: for the no-op, no error and nothing changed; for a
// re-apply with changed leaves (applyChanges), the same object, record and
// flags.
func checkNoopAgrees(t *testing.T, live, cfg map[string]any, mgr string, managed Managed) {
	t.Helper()
	i := managed.Find(mgr, OpApply)
	if i < 0 || !allNonEmpty(managed) {
		return
	}
	changes, ok := reapplied(live, cfg, fuzzSchema.top(), managed[i].Set, true)
	if !ok {
		return
	}
	quick := Result{Object: live, Managed: managed}
	if changes.n > 0 {
		if quick, ok = applyChanges(live, managed, i, &changes); !ok {
			return
		}
	}
	r, err := applyMerge(live, cfg, mgr, managed, options{schema: fuzzSchema}, i)
	require.NoError(t, err, "the shortcut accepted an apply the full walk rejects:\nlive %s\nconfig %s\n%v", mustJSON(live), mustJSON(cfg), snapshot(managed))
	require.Equal(t, r.Changed, quick.Changed, "the shortcut and the full walk disagree on Changed:\nlive %s\nconfig %s\n%v", mustJSON(live), mustJSON(cfg), snapshot(managed))
	require.Equal(t, r.ObjectChanged, quick.ObjectChanged)
	require.Equal(t, mustJSON(r.Object), mustJSON(quick.Object))
	require.Equal(t, snapshot(r.Managed), snapshot(quick.Managed))
}

// TestApplyNoopShortcut: a re-apply is recognized by the shortcut, and
// near misses are not.
func TestApplyNoopShortcut(t *testing.T) {
	base := func() map[string]any {
		return map[string]any{
			"a":     int64(1),
			"items": []any{map[string]any{"name": "p", "v": "x"}, map[string]any{"name": "q"}},
			"tags":  []any{"s", int64(3)},
			"sel":   map[string]any{"k": "y"},
			"m":     map[string]any{},
		}
	}
	opt := WithSchema(fuzzSchema)
	first, err := Apply(nil, base(), "alpha", nil, opt)
	require.NoError(t, err)
	set := first.Managed[0].Set
	tests := []struct {
		name   string
		edit   func(m map[string]any)
		accept bool
	}{
		{"same config", func(map[string]any) {}, true},
		{"number of another type", func(m map[string]any) { m["a"] = 1.0 }, true},
		{"null field ignored", func(m map[string]any) { m["b"] = nil }, true},
		{"items reordered", func(m map[string]any) { it := m["items"].([]any); it[0], it[1] = it[1], it[0] }, true},
		{"changed value", func(m map[string]any) { m["a"] = int64(2) }, false},
		{"field dropped", func(m map[string]any) { delete(m, "sel") }, false},
		{"field added", func(m map[string]any) { m["c"] = "x" }, false},
		{"item field dropped", func(m map[string]any) { m["items"].([]any)[0].(map[string]any)["v"] = nil }, false},
		{"duplicate item", func(m map[string]any) {
			m["items"] = []any{map[string]any{"name": "p", "v": "x"}, map[string]any{"name": "p"}}
		}, false},
		{"duplicate tag", func(m map[string]any) { m["tags"] = []any{"s", "s"} }, false},
		{"atomic map changed", func(m map[string]any) { m["sel"] = map[string]any{"k": "z"} }, false},
		{"empty map filled", func(m map[string]any) { m["m"] = map[string]any{"a": "x"} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base()
			tt.edit(cfg)
			require.Equal(t, tt.accept, isNoop(first.Object, cfg, fuzzSchema.top(), set))
			checkNoopAgrees(t, first.Object, cfg, "alpha", first.Managed)
			r, err := Apply(first.Object, cfg, "alpha", first.Managed, opt)
			if tt.accept {
				require.NoError(t, err)
				require.False(t, r.Changed)
			}
		})
	}
}

// TestApplyNoopDuplicateLiveItems: when live holds two items with one key
// (an Update can write that), the merge uses the first; the shortcut must
// not accept a config equal only to the second.
func TestApplyNoopDuplicateLiveItems(t *testing.T) {
	opt := WithSchema(fuzzSchema)
	cfg := map[string]any{"items": []any{map[string]any{"name": "q", "v": "x"}, map[string]any{"name": "p", "v": "y"}}}
	first, err := Apply(nil, cfg, "alpha", nil, opt)
	require.NoError(t, err)
	live := map[string]any{"items": []any{
		map[string]any{"name": "p", "v": "other"},
		map[string]any{"name": "p", "v": "y"},
		map[string]any{"name": "q", "v": "x"},
	}}
	for _, c := range []map[string]any{
		cfg,
		{"items": []any{map[string]any{"name": "p", "v": "y"}, map[string]any{"name": "q", "v": "x"}}},
	} {
		require.False(t, isNoop(live, c, fuzzSchema.top(), first.Managed[0].Set))
		checkNoopAgrees(t, live, c, "alpha", first.Managed)
	}
	checkNoopAgrees(t, live, cfg, "alpha", first.Managed)
}

// TestApplyChangedLeavesShortcut: a re-apply of the same fields with new
// scalar values outside lists is finished by applyChanges when nobody else
// holds a changed path, and left to the full walk otherwise.
func TestApplyChangedLeavesShortcut(t *testing.T) {
	opt := WithSchema(fuzzSchema)
	base := func() map[string]any {
		return map[string]any{
			"a":     int64(1),
			"b":     "x",
			"c":     int64(2),
			"m":     map[string]any{"b": "x", "c": true},
			"items": []any{map[string]any{"name": "p", "v": "x"}},
			"sel":   map[string]any{"k": "y"},
		}
	}
	first, err := Apply(nil, base(), "alpha", nil, opt)
	require.NoError(t, err)
	// beta owns m.c; alpha's own Update entry owns a (by an update of it).
	withBeta, err := Apply(first.Object, map[string]any{"m": map[string]any{"c": true}}, "beta", first.Managed, opt)
	require.NoError(t, err)
	tests := []struct {
		name    string
		managed Managed
		edit    func(m map[string]any)
		quick   bool // applyChanges finishes it
	}{
		{"one leaf", first.Managed, func(m map[string]any) { m["a"] = int64(7) }, true},
		{"leaves in a map", first.Managed, func(m map[string]any) { m["m"] = map[string]any{"b": "z", "c": false} }, true},
		{"leaves at two depths", first.Managed, func(m map[string]any) { m["a"] = "s"; m["m"].(map[string]any)["c"] = int64(3) }, true},
		{"a leaf another manager owns too", withBeta.Managed, func(m map[string]any) { m["m"].(map[string]any)["c"] = false }, false},
		{"a leaf beside one another manager owns", withBeta.Managed, func(m map[string]any) { m["m"].(map[string]any)["b"] = "z" }, true},
		{"a value inside a list item", first.Managed, func(m map[string]any) { m["items"].([]any)[0].(map[string]any)["v"] = "z" }, false},
		{"an atomic map", first.Managed, func(m map[string]any) { m["sel"] = map[string]any{"k": "z"} }, false},
		{"a scalar becomes a map", first.Managed, func(m map[string]any) { m["a"] = map[string]any{"z": int64(1)} }, false},
		{"a map becomes a scalar", first.Managed, func(m map[string]any) { m["m"] = "x" }, false},
		{"four leaves", first.Managed, func(m map[string]any) {
			m["a"], m["b"], m["m"] = int64(2), "y", map[string]any{"b": "z", "c": false}
		}, true},
		{"five leaves: more than the walk holds", first.Managed, func(m map[string]any) {
			m["a"], m["b"], m["c"], m["m"] = int64(2), "y", int64(3), map[string]any{"b": "z", "c": false}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := withBeta.Object
			cfg := base()
			tt.edit(cfg)
			i := tt.managed.Find("alpha", OpApply)
			changes, ok := reapplied(live, cfg, fuzzSchema.top(), tt.managed[i].Set, true)
			if ok && changes.n > 0 {
				_, ok = applyChanges(live, tt.managed, i, &changes)
			}
			require.Equal(t, tt.quick, ok && changes.n > 0)
			checkNoopAgrees(t, live, cfg, "alpha", tt.managed)
			before := mustJSON(live)
			r, err := Apply(live, cfg, "alpha", tt.managed, opt, Force())
			require.NoError(t, err)
			require.True(t, r.Changed)
			require.Equal(t, before, mustJSON(live), "Apply modified live")
		})
	}
}

// The no-op walk takes a re-apply as deep as MaxDepth allows (the depth
// tests in depth_test.go show the full walk refuses one level more), with
// maps and a keyed list beside the path, visited before it, that it must
// uncount.
func TestNoopWalkTakesATreeAtMaxDepth(t *testing.T) {
	wide := func() map[string]any {
		m := map[string]any{"leaf": "x"}
		for range MaxDepth - 1 {
			m = map[string]any{"a": m, "_": map[string]any{"k": "v"}}
		}
		m["_l"] = []any{map[string]any{"name": "x", "v": "y"}}
		return m
	}
	sch, err := NewSchema(map[string]Strategy{"._l": Keyed("name")})
	require.NoError(t, err)
	first, err := Apply(nil, wide(), "m", nil, WithSchema(sch))
	require.NoError(t, err)
	require.True(t, isNoop(first.Object, wide(), sch.top(), first.Managed[0].Set))
}
