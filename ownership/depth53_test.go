package ownership_test

// DeepCopy, which has no error to return, and NewSet, given trees and
// paths far deeper than MaxDepth: no stack overflow, which no recover
// catches. The goroutine stack limit is lowered so that a walk without the
// bound fails the test (the process dies) at a depth cheap to build.

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/ownership"
)

func smallStack53(t *testing.T) {
	old := debug.SetMaxStack(64 << 20)
	t.Cleanup(func() { debug.SetMaxStack(old) })
}

func TestDeepCopyStopsAtMaxDepth(t *testing.T) {
	smallStack53(t)
	const n = 20 * ownership.MaxDepth
	m := nestedMaps(n)
	c := ownership.DeepCopy(m).(map[string]any)

	// The first MaxDepth maps are copies; the next is m's own.
	orig, cp := m, c
	for range ownership.MaxDepth {
		cp["mark"] = true
		require.NotContains(t, orig, "mark", "a copy")
		orig, cp = orig["a"].(map[string]any), cp["a"].(map[string]any)
	}
	cp["mark"] = true
	require.Contains(t, orig, "mark", "past MaxDepth: shared")

	// Lists, and trees that hold themselves, end too.
	l := ownership.DeepCopy(nestedLists(n)).(map[string]any)
	require.Contains(t, l, "a")
	self := selfMap()
	require.Equal(t, "v", ownership.DeepCopy(self).(map[string]any)["k"])
	require.Len(t, ownership.DeepCopy(selfList()).([]any), 1)

	// A tree within MaxDepth is copied whole, as before.
	within := nestedMaps(ownership.MaxDepth)
	require.Equal(t, within, ownership.DeepCopy(within))
}

func TestNewSetRefusesAPathLongerThanMaxDepth(t *testing.T) {
	smallStack53(t)
	long := make(diff.Path, 20*ownership.MaxDepth)
	for i := range long {
		long[i] = diff.Element{Kind: diff.FieldElem, Name: "a"}
	}
	_, err := ownership.NewSet(long)
	require.ErrorIs(t, err, ownership.ErrTooDeep)

	_, err = ownership.NewSet(long[:ownership.MaxDepth+2])
	require.ErrorIs(t, err, ownership.ErrTooDeep)

	// The deepest path a tree has, and the set's walks of it: Paths
	// copied every prefix, 6 s and 2 GB at this depth.
	deepest := long[:ownership.MaxDepth+1]
	s, err := ownership.NewSet(deepest, deepest[:1])
	require.NoError(t, err)
	require.True(t, s.Has(deepest))
	require.Equal(t, []diff.Path{deepest[:1], deepest}, s.Paths())
	allocs := testing.AllocsPerRun(1, func() { s.Paths() })
	require.Less(t, allocs, 100.0, "a copy per member, not per level (it was %d)", ownership.MaxDepth+2)
	back, err := ownership.DecodeSet(s.Encode())
	require.NoError(t, err, "every set NewSet takes decodes back")
	require.True(t, back.Equal(s))
}
