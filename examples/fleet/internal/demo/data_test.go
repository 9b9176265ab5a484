package demo

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/boltstore"
)

// storedGroups reads the groups in the data mode's file of dir.
func storedGroups(t *testing.T, dir string) map[string]*Group {
	t.Helper()
	b, err := boltstore.Open(dataFile(dir))
	require.NoError(t, err)
	defer b.Close()
	groups, err := store.New[GroupSpec, GroupStatus](b, "Group")
	require.NoError(t, err)
	list, err := groups.List(t.Context(), store.ListOptions{})
	require.NoError(t, err)
	m := map[string]*Group{}
	for _, g := range list.Items {
		m[g.Meta.Name] = g
	}
	return m
}

// TestDataSurvivesRestart runs the demo twice on one -data directory. The
// first run is stopped in the middle of its faults, before it converged, as
// if killed; the second starts with empty memory and an empty fleet, finds
// the groups in the file, converges them, and recreates none of them: every
// group keeps its UID, its generation and its spec (including the image
// changes the first run's "ops" made).
func TestDataSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		err := run(t.Context(), []string{"-objects=10", "-data=" + dir, "-duration=2s", "-chaos=3s"}, &out)
		require.ErrorContains(t, err, "not converged after 2s", out.String())
		require.Contains(t, out.String(), "at revision 0: 0 groups kept from an earlier run")
	})
	before := storedGroups(t, dir)
	require.Len(t, before, 10)

	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		require.NoError(t, run(t.Context(), []string{"-objects=10", "-data=" + dir, "-faults=off"}, &out), out.String())
		require.Contains(t, out.String(), "10 groups kept from an earlier run")
		require.Contains(t, out.String(), "converged: all 10 groups match the store")
	})
	after := storedGroups(t, dir)
	require.Len(t, after, 10)
	changed := 0
	for name, g := range before {
		require.Equal(t, g.Meta.UID, after[name].Meta.UID, "%s is the same object, not a new one", name)
		require.Equal(t, g.Meta.Generation, after[name].Meta.Generation, "%s's spec was not written again", name)
		require.Equal(t, g.Spec, after[name].Spec)
		if g.Meta.Generation > 1 {
			changed++
		}
	}
	require.Positive(t, changed, "the first run's image changes are kept")
}

// TestDataIsOwnedByOneProcess: a second demo on the same -data directory
// is refused while the first runs.
func TestDataIsOwnedByOneProcess(t *testing.T) {
	dir := t.TempDir()
	b, release, err := openData(dir)
	require.NoError(t, err)
	defer release()
	_ = b
	var out strings.Builder
	err = run(t.Context(), []string{"-data=" + dir}, &out)
	require.ErrorIs(t, err, boltstore.ErrLocked)
}
