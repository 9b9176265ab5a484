package ownership

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// checkNoopAgrees requires that when Apply's no-op shortcut accepts an
// apply, the full walk agrees: no error, nothing changed.
func checkNoopAgrees(t *testing.T, live, cfg map[string]any, mgr string, managed Managed) {
	t.Helper()
	i := managed.Find(mgr, OpApply)
	if i < 0 || !allNonEmpty(managed) || !isNoop(live, cfg, fuzzSchema.top(), managed[i].Set) {
		return
	}
	r, err := applyMerge(live, cfg, mgr, managed, options{schema: fuzzSchema}, i)
	require.NoError(t, err, "the shortcut accepted an apply the full walk rejects")
	require.False(t, r.Changed, "the shortcut accepted an apply that changes something:\nlive %s\nconfig %s\n%v", mustJSON(live), mustJSON(cfg), snapshot(managed))
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
