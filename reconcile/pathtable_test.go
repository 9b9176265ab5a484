package reconcile

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
)

// statusChange is what a controller's status write changes, as the
// ChangeFunc reports it: paths cut from a fresh diff arena at every call.
func statusChange() []diff.Path {
	type view struct {
		Running    int               `json:"running"`
		Conditions []store.Condition `json:"conditions"`
	}
	old := view{Conditions: []store.Condition{{Type: conditions.Ready, Status: store.ConditionFalse, Reason: "Progressing", Message: "0/3"}}}
	new := view{Running: 3, Conditions: []store.Condition{{Type: conditions.Ready, Status: store.ConditionTrue, Reason: "AllRunning", Message: "3/3"}}}
	return diff.ChangedPaths(&old, &new, diff.ListKeys(diff.MustParsePath(".conditions"), "type"))
}

// The oscillation state of many keys whose writes change the same fields
// holds one copy of those paths, not one per write: a controller's keys
// change the same few status fields, and at 100,000 keys a copy per write,
// with the chunk of diff arena it was cut from, was most of what the Loop
// kept per key (examples/fleet at -objects 100000).
func TestOscillationStateOfManyKeysSharesTheirPaths(t *testing.T) {
	l := mustNew(t, Func[string](func(context.Context, string) (Result, error) { return Result{}, nil }), nil)
	const n = 5_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("obj-%05d", i)
	}
	require.Len(t, statusChange(), 4, "the change: .running and three fields of the Ready condition")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, k := range keys {
		for range 2 {
			l.observeWrite(k, oscillation.Write{Self: true, Owned: statusChange()})
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perKey := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d keys, two writes each: %d bytes a key", n, perKey)
	require.Less(t, perKey, int64(1500), "bytes of oscillation state a key (2,900 when each write kept its own paths)")
	runtime.KeepAlive(l)
}

// A key's detector gets the table's copy of a path the table holds, and
// paths keep coming through unchanged once it is full.
func TestPathTableSharesEqualPathsAndIsBounded(t *testing.T) {
	var tab pathTable
	a, b := statusChange(), statusChange()
	require.NotSame(t, &a[0][0], &b[0][0], "two diffs, two arenas")
	tab.intern(a)
	tab.intern(b)
	for i := range a {
		require.True(t, a[i].Equal(statusChange()[i]), "interning keeps the path")
		require.Same(t, &a[i][0], &b[i][0], "path %s is shared", a[i])
	}
	for i := range maxTablePaths {
		tab.intern([]diff.Path{diff.MustParsePath(fmt.Sprintf(".spec.f%d", i))})
	}
	require.Len(t, tab.paths, maxTablePaths)
	extra := []diff.Path{diff.MustParsePath(".spec.extra")}
	first := &extra[0][0]
	tab.intern(extra)
	require.Same(t, first, &extra[0][0], "a full table keeps a new path as it came")
	require.Len(t, tab.paths, maxTablePaths)
}

// The oscillation state of a controller that writes one status field of
// each of its keys, while another writer changes their specs (the
// controller benchmark's shape, bench/cmd/ctl-steady): a detector a key,
// the times of its status writes within the window, and one shared list
// of the paths they changed. At 10,000 keys it was ~3.5 MB, a tenth of
// what that controller keeps alive.
func TestOscillationStateOfAStatusWriterIsSmall(t *testing.T) {
	l := mustNew(t, Func[string](func(context.Context, string) (Result, error) { return Result{}, nil }), nil)
	const n = 5_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("obj-%05d", i)
	}
	status := func() []diff.Path { return []diff.Path{diff.MustParsePath(".status.readyReplicas")} }
	spec := func() []diff.Path { return []diff.Path{diff.MustParsePath(".spec.replicas")} }
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, k := range keys {
		for range 3 {
			l.observeWrite(k, oscillation.Write{Self: true, Owned: status()})
			l.observeWrite(k, oscillation.Write{Foreign: spec()})
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perKey := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	objects := float64(int64(after.HeapObjects)-int64(before.HeapObjects)) / n
	t.Logf("%d keys, three status writes each: %d bytes, %.2f objects a key", n, perKey, objects)
	require.Less(t, perKey, int64(170), "bytes of oscillation state a key (275 with a Config, 48-byte writes and a list of paths a write in each detector; 171 with the detector's lists apart)")
	require.Less(t, objects, 1.2, "objects a key: its detector (and its share of the map); 3 with the detector's two lists apart")
	runtime.KeepAlive(l)
}

// A key's detector gets the table's copy of a list of paths equal to a
// list the table holds, and once it is full a copy of the list given: the
// caller's is reused (FromStore's source judges into the same two lists
// change after change).
func TestPathTableSharesEqualListsAndIsBounded(t *testing.T) {
	var tab pathTable
	a, b := statusChange(), statusChange()
	tab.intern(a)
	tab.intern(b)
	la, lb := tab.list(a), tab.list(b)
	require.Equal(t, a, la, "the list holds the paths, in order")
	require.Same(t, &la[0], &lb[0], "equal lists are shared")
	require.Nil(t, tab.list(nil))
	for i := range maxTableLists {
		tab.list([]diff.Path{diff.MustParsePath(fmt.Sprintf(".spec.f%d", i))})
	}
	require.Len(t, tab.lists, maxTableLists)
	extra := []diff.Path{diff.MustParsePath(".spec.extra")}
	kept := tab.list(extra)
	require.Equal(t, extra, kept, "a full table gives the paths of a new list, in order")
	require.NotSame(t, &extra[0], &kept[0], "a full table gives a copy of a new list, not the caller's")
	require.Len(t, tab.lists, maxTableLists)
}

// A path given again at the same address (a Store's path of a status
// field, built once and judged event after event) gets the table's copy
// of it, as an equal path at another address does, and a path of the same
// length at another address that differs gets its own.
func TestPathTableKnowsAPathGivenAgainByItsAddress(t *testing.T) {
	var tab pathTable
	ready, other := diff.MustParsePath(".status.ready"), diff.MustParsePath(".status.other")
	first := []diff.Path{ready, other}
	tab.intern(first)
	require.Equal(t, []diff.Path{ready, other}, first, "interning keeps the paths")
	require.NotSame(t, &ready[0], &first[0][0], "the table's copy")
	for range 2 {
		again := []diff.Path{other, ready, diff.MustParsePath(".status.ready")}
		tab.intern(again)
		require.Same(t, &first[1][0], &again[0][0], ".status.other, given again")
		require.Same(t, &first[0][0], &again[1][0], ".status.ready, given again")
		require.Same(t, &first[0][0], &again[2][0], ".status.ready, an equal path at another address")
	}
	require.Len(t, tab.paths, 2)
}

// listOf is intern then list: over random writes of zero to three paths,
// drawn from paths given again at their address (a Store's, built once),
// equal paths at new addresses and more distinct paths than the table
// holds, it gives the same paths in the same order as a second table
// interning and listing the same writes, and shares a list between two
// writes exactly when that table does.
func TestPathTableListOfIsInternThenList(t *testing.T) {
	rng := rand.New(rand.NewPCG(59, 5))
	const distinct = maxTablePaths + 16
	fixed := make([]diff.Path, distinct)
	for i := range fixed {
		fixed[i] = diff.MustParsePath(fmt.Sprintf(".status.f%d", i))
	}
	pick := func() diff.Path {
		i := rng.IntN(distinct)
		if rng.IntN(3) == 0 {
			return diff.MustParsePath(fmt.Sprintf(".status.f%d", i)) // equal, elsewhere
		}
		return fixed[i]
	}
	for run := range 20 {
		var fast, plain pathTable
		shared := map[*diff.Path]*diff.Path{} // plain's list -> fast's
		for range 2000 {
			n := rng.IntN(4)
			if run%2 == 0 && rng.IntN(4) > 0 {
				n = 1 // mostly single paths, the Loop's common case
			}
			ps := make([]diff.Path, n)
			for i := range ps {
				// few paths at first, so lists repeat before either table fills
				if rng.IntN(8) > 0 {
					ps[i] = fixed[rng.IntN(4)]
				} else {
					ps[i] = pick()
				}
			}
			qs := slices.Clone(ps)
			got := fast.listOf(ps)
			plain.intern(qs)
			want := plain.list(qs)
			require.Equal(t, len(want), len(got))
			if len(want) == 0 {
				require.Nil(t, got)
				continue
			}
			for i := range want {
				require.True(t, got[i].Equal(want[i]), "path %d: %s, want %s", i, got[i], want[i])
			}
			if prev, ok := shared[&want[0]]; ok {
				require.Same(t, prev, &got[0], "plain shares this list with an earlier write: so does listOf")
			} else {
				for _, f := range shared {
					require.NotSame(t, f, &got[0], "plain gives a list of its own: so does listOf")
				}
				shared[&want[0]] = &got[0]
			}
		}
	}
}
