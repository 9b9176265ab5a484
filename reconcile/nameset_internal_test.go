package reconcile

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// The primary source's set of names lists each name added and not
// removed once, in the order added but for a removal, which moves the last
// name into the removed one's place; its index stays in step.
func TestNameSetListsEachNameOnceAndKeepsItsIndexInStep(t *testing.T) {
	n := newNameSet()
	for _, name := range []string{"a", "b", "c", "d", "b"} {
		n.add(name)
	}
	require.Equal(t, []string{"a", "b", "c", "d"}, n.list)
	n.remove("b")
	n.remove("x") // never added: nothing to do
	require.Equal(t, []string{"a", "d", "c"}, n.list)
	n.remove("c") // the last
	n.remove("a")
	require.Equal(t, []string{"d"}, n.list)
	n.add("e")
	require.Equal(t, []string{"d", "e"}, n.list)
	for i, name := range n.list {
		at, ok := n.index(name)
		require.True(t, ok, name)
		require.Equal(t, i, at, "index of %s", name)
	}
	n.remove("d")
	n.remove("e")
	require.Empty(t, n.list)
	_, ok := n.index("d")
	require.False(t, ok)
	require.False(t, slices.Contains(n.list[:cap(n.list)], "a"), "a removed name is not kept alive by the list's room")
}

// Under random adds and removes, enough to grow its tables and shift their
// probe runs back, the set holds what a Go map of name to place in the
// list holds, and the list holds each name once.
func TestNameSetActsLikeAMap(t *testing.T) {
	n := newNameSet()
	want := map[string]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	check := func() {
		t.Helper()
		require.Len(t, n.list, len(want))
		shards := 0
		for i := range n.shards {
			shards += n.shards[i].n
		}
		require.Equal(t, len(want), shards, "slots in use")
		for i, name := range n.list {
			require.True(t, want[name], "listed %s, not held", name)
			at, ok := n.index(name)
			require.True(t, ok, "index of %s", name)
			require.Equal(t, i, at, "index of %s", name)
		}
	}
	for step := range 60_000 {
		name := "obj-" + strconv.Itoa(r.IntN(5_000))
		if r.IntN(3) == 0 {
			n.remove(name)
			delete(want, name)
		} else {
			n.add(name)
			want[name] = true
		}
		if _, ok := n.index(name); ok != want[name] {
			t.Fatalf("step %d: index(%s) held %v, want %v", step, name, ok, want[name])
		}
		if step%5_000 == 0 {
			check()
		}
	}
	check()
	for name := range want {
		n.remove(name)
	}
	require.Empty(t, n.list)
	for i := range n.shards {
		require.Zero(t, n.shards[i].n)
		require.Zero(t, slices.Max(append([]uint64{0}, n.shards[i].slots...)), "a slot left behind")
	}
}

// Keys lists the names of a snapshot taken when it starts, and keeps its
// copy for the next listing only while it is small: a copy of many names
// would stay for the GC to scan between resyncs.
func TestStoreSourceKeysKeepsOnlyASmallCopyOfTheNames(t *testing.T) {
	for _, n := range []int{10, keysBufKept, keysBufKept + 1} {
		s := storeSource[int, int]{cacheSource: &cacheSource[int, int]{names: newNameSet()}}
		var want []string
		for i := range n {
			name := "obj-" + strconv.Itoa(i)
			s.names.add(name)
			want = append(want, name)
		}
		var got []string
		for name := range s.Keys() {
			if len(got) == 0 {
				s.names.add("late") // after the snapshot: not listed
			}
			got = append(got, name)
		}
		require.Equal(t, want, got, "%d names", n)
		if n > keysBufKept {
			require.Nil(t, s.buf, "%d names: the copy is let go", n)
			continue
		}
		require.GreaterOrEqual(t, cap(s.buf), n, "%d names: the copy is kept", n)
		require.Empty(t, s.buf)
		require.Empty(t, slices.DeleteFunc(s.buf[:cap(s.buf)], func(name string) bool { return name == "" }), "%d names: the kept copy holds no name", n)
	}
}
