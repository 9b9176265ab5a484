package diff_test

// Values nested past MaxDepth, and values that hold themselves, given to
// Diff, ChangedPaths, Hash and Change.String: a stack overflow is fatal (no
// recover catches it), so each walk must stop at MaxDepth. The tests lower
// the goroutine stack limit so that a walk without the bound fails them
// (the process dies) at a depth cheap to build.

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
)

// deep53 is how deep the values built here nest: far past MaxDepth, so
// that a walk without the bound needs far more stack than smallStack.
const deep53 = 20 * diff.MaxDepth

// smallStack limits the goroutine stack to 64 MiB for the test: ample for
// MaxDepth levels, too little for deep53.
func smallStack(t *testing.T) {
	old := debug.SetMaxStack(64 << 20)
	t.Cleanup(func() { debug.SetMaxStack(old) })
}

// deepMap53 returns n maps, each the field "a" of the one before, the
// innermost holding "leaf": leaf.
func deepMap53(n int, leaf any) map[string]any {
	m := map[string]any{"leaf": leaf}
	for range n - 1 {
		m = map[string]any{"a": m}
	}
	return m
}

// deepList53 returns n lists, each the only item of the one before.
func deepList53(n int, leaf any) []any {
	l := []any{leaf}
	for range n - 1 {
		l = []any{l}
	}
	return l
}

type link53 struct {
	V    int     `json:"v"`
	Next *link53 `json:"next,omitempty"`
}

// chain53 returns n nodes, each holding v, each pointing to the next.
func chain53(n, v int) *link53 {
	var h *link53
	for range n {
		h = &link53{V: v, Next: h}
	}
	return h
}

type box53 struct {
	In any `json:"in"`
}

// boxes53 returns n structs, each held in the interface field of the one
// before: deep with no map, slice or pointer at all.
func boxes53(n int, leaf any) any {
	v := leaf
	for range n {
		v = box53{In: v}
	}
	return v
}

func TestDiffPastMaxDepthEnds(t *testing.T) {
	smallStack(t)
	w, g := deepMap53(deep53, 1), deepMap53(deep53, 2)

	// The leaf differs far below MaxDepth: the pair of maps at MaxDepth is
	// reported Changed, with the maps as its values.
	cs := diff.Diff(w, g)
	require.Len(t, cs, 1)
	require.Equal(t, diff.Changed, cs[0].Kind)
	require.Len(t, cs[0].Path, diff.MaxDepth)
	require.IsType(t, map[string]any{}, cs[0].Old)
	require.True(t, strings.HasSuffix(cs[0].String(), ": <too deep> → <too deep>"), cs[0].String()[len(cs[0].String())-40:])
	require.Equal(t, cs.Paths(), diff.ChangedPaths(w, g))

	// Equal below MaxDepth but not the same maps: still Changed, as
	// documented; the same map is equal.
	require.Len(t, diff.Diff(w, deepMap53(deep53, 1)), 1)
	require.Empty(t, diff.Diff(w, w))

	// A difference above MaxDepth is found as before.
	a, b := deepMap53(100, 1), deepMap53(100, 2)
	require.Len(t, diff.Diff(a, b)[0].Path, 100)

	// Lists, pointer chains (a pointer and a struct per node) and structs
	// held in interfaces.
	require.Len(t, diff.ChangedPaths(deepList53(deep53, 1), deepList53(deep53, 2))[0], diff.MaxDepth)
	cs = diff.Diff(chain53(deep53, 1), chain53(deep53, 2))
	require.NotEmpty(t, cs)
	require.Equal(t, ".v", cs[0].Path.String())
	require.Len(t, cs[len(cs)-1].Path, diff.MaxDepth/2)
	cs = diff.Diff(boxes53(deep53, 1), boxes53(deep53, 2))
	require.Len(t, cs, 1)
	require.Len(t, cs[0].Path, diff.MaxDepth)
}

func TestHashPastMaxDepthEnds(t *testing.T) {
	smallStack(t)
	// Values that differ only below MaxDepth hash equal (Diff reports
	// them Changed); above it they hash apart.
	require.Equal(t, diff.Hash(deepMap53(deep53, 1)), diff.Hash(deepMap53(deep53, 2)))
	require.NotEqual(t, diff.Hash(deepMap53(diff.MaxDepth, 1)), diff.Hash(deepMap53(diff.MaxDepth, 2)))
	require.Equal(t, diff.Hash(deepList53(deep53, 1)), diff.Hash(deepList53(deep53, 2)))
	require.Equal(t, diff.Hash(chain53(deep53, 1)), diff.Hash(chain53(deep53, 1)))
	require.Equal(t, diff.Hash(boxes53(deep53, 1)), diff.Hash(boxes53(deep53, 2)))
}

func TestChangeStringOfCyclicAndDeepValues(t *testing.T) {
	smallStack(t)
	self := map[string]any{"v": 1.0}
	self["self"] = self
	list := []any{1.0, nil}
	list[1] = list
	ring := &link53{V: 1}
	ring.Next = ring

	for _, tc := range []struct {
		v    any
		want string
	}{
		{self, "<cyclic>"},
		{list, "<cyclic>"},
		{ring, "<cyclic>"},
		{deepMap53(deep53, 1), "<too deep>"},
		{chain53(deep53, 1), "<too deep>"},
		{boxes53(deep53, 1), "<too deep>"},
		{deepMap53(3, 1), `{"a":{"a":{"leaf":1}}}`},
		{chain53(2, 1), `{"v":1,"next":{"v":1}}`},
	} {
		c := diff.Change{Kind: diff.Changed, Path: diff.Path{}.Field("x"), Old: tc.v, New: 2}
		require.Equal(t, ".x: "+tc.want+" → 2", c.String())
		c = diff.Change{Kind: diff.Added, Path: diff.Path{}.Field("x"), New: tc.v}
		require.Equal(t, ".x: added "+tc.want, diff.Changes{c}.String())
	}
}

// Lists of lists under a list declaration (every inner list shares the
// root's, as a path's schema leaves indices out): each level's probe for
// equal-in-order lists was followed, when it failed, by the matching that
// walks the items again, inside the probe of the level above: 2^depth
// walks, a minute at 30 levels. One probe at a time makes it quadratic.
func TestDiffOfListsOfListsUnderADeclarationIsNotExponential(t *testing.T) {
	w, g := deepList53(60, 1), deepList53(60, 2)
	for _, opt := range []diff.Option{diff.ListSets(diff.Path{}), diff.ListKeys(diff.Path{}, "name")} {
		require.Empty(t, diff.Diff(w, deepList53(60, 1), opt))
		require.Equal(t, diff.Hash(w, opt), diff.Hash(deepList53(60, 1), opt))
	}
	// The innermost list, of scalars, is a set: 1 removed, 2 added.
	cs := diff.Diff(w, g, diff.ListSets(diff.Path{}))
	require.Len(t, cs, 2)
	require.Equal(t, "."+strings.Repeat("[0]", 59)+`[=1]: removed 1`, cs[0].String())
	require.Equal(t, "."+strings.Repeat("[0]", 59)+`[=2]: added 2`, cs[1].String())
	// Items that are not maps have no keys: matched by position.
	require.Equal(t, diff.Diff(w, g), diff.Diff(w, g, diff.ListKeys(diff.Path{}, "name")))
}
