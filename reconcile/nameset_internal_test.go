package reconcile

import (
	"slices"
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
	require.Len(t, n.at, len(n.list))
	for i, name := range n.list {
		require.Equal(t, i, n.at[name], "index of %s", name)
	}
	n.remove("d")
	n.remove("e")
	require.Empty(t, n.list)
	require.Empty(t, n.at)
	require.False(t, slices.Contains(n.list[:cap(n.list)], "a"), "a removed name is not kept alive by the list's room")
}
