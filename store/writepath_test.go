package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// A controller's status apply that changes only the value of a field it
// already owns leaves the ownership record as stored, and does so without
// encoding the record again (BenchmarkApplyStatusOwnField: 50 allocations
// before, when every such write re-encoded the unchanged record; 40 before
// the applied status's tree was decoded from its JSON alone, not encoded
// with it first; 38 while a successful write's check for a failed condition
// allocated errors.As's target; 34 while ownership.Apply took its full walk
// for a re-apply of changed values, and built the record's key twice).
// Allocations are counted, not time, so the machine's load does not matter.
func TestApplyStatusOfAnOwnedFieldKeepsTheRecordUnencoded(t *testing.T) {
	if testing.Short() || raceScale > 1 {
		t.Skip("counts allocations (the race detector's sync.Pool drops scratch space at random)")
	}
	ctx := t.Context()
	st, err := store.New[judgeSpec, judgeStatus](memstore.New(memstore.WithHistorySize(16)), "App")
	require.NoError(t, err)
	name := writePathObjects(t, st, 1)[0]
	before, err := st.Get(ctx, name)
	require.NoError(t, err)
	ctrl := st.As("ctrl")
	replicas := int64(1)
	allocs := testing.AllocsPerRun(100, func() {
		replicas++
		res, err := ctrl.ApplyStatus(ctx, name, judgeStatus{ReadyReplicas: replicas}, nil)
		if err != nil || !res.Changed {
			t.Fatal(err, res)
		}
	})
	after, err := st.Get(ctx, name)
	require.NoError(t, err)
	require.Equal(t, replicas, after.Status.ReadyReplicas)
	require.Equal(t, before.Meta.Managed, after.Meta.Managed, "the record as stored")
	require.LessOrEqualf(t, allocs, 29.0, "an ApplyStatus of an owned field allocates %v times", allocs)
}

// The same holds for the spec side: a controller's Apply that changes only
// the value of a spec field it already owns leaves the ownership record as
// stored, without encoding it again (128 allocations before, when every
// such Apply re-encoded the unchanged record, 111 while a successful write's
// check for a failed condition allocated; BenchmarkApplySpecOwnField).
func TestApplyOfAnOwnedSpecFieldKeepsTheRecordUnencoded(t *testing.T) {
	if testing.Short() || raceScale > 1 {
		t.Skip("counts allocations (the race detector's sync.Pool drops scratch space at random)")
	}
	ctx := t.Context()
	st, err := store.New[judgeSpec, judgeStatus](memstore.New(memstore.WithHistorySize(16)), "App")
	require.NoError(t, err)
	name := writePathObjects(t, st, 1)[0]
	deployer := st.As("deployer")
	_, err = deployer.Apply(ctx, name, map[string]any{"replicas": 5}, store.WithForce())
	require.NoError(t, err)
	before, err := st.Get(ctx, name)
	require.NoError(t, err)
	replicas := int64(5)
	allocs := testing.AllocsPerRun(100, func() {
		replicas++
		res, err := deployer.Apply(ctx, name, map[string]any{"replicas": replicas})
		if err != nil || !res.Changed {
			t.Fatal(err, res)
		}
	})
	after, err := st.Get(ctx, name)
	require.NoError(t, err)
	require.Equal(t, replicas, after.Spec.Replicas)
	require.Equal(t, before.Meta.Managed, after.Meta.Managed, "the record as stored")
	require.LessOrEqualf(t, allocs, 109.0, "an Apply of an owned spec field allocates %v times", allocs)
}

// An Update of the spec, the other writer's half of a controller's event,
// allocates what its encoding and its ownership record need, and nothing
// for the options it was not given (24 allocations before, when the
// option scratch space of a write was allocated whether or not it had
// options).
func TestUpdateWithoutOptionsAllocatesNoOptionSpace(t *testing.T) {
	if testing.Short() || raceScale > 1 {
		t.Skip("counts allocations (the race detector's sync.Pool drops scratch space at random)")
	}
	ctx := t.Context()
	st, err := store.New[judgeSpec, judgeStatus](memstore.New(memstore.WithHistorySize(16)), "App")
	require.NoError(t, err)
	name := writePathObjects(t, st, 1)[0]
	obj, err := st.Get(ctx, name)
	require.NoError(t, err)
	user := st.As("user")
	allocs := testing.AllocsPerRun(100, func() {
		obj.Spec.Replicas++
		if _, err := user.Update(ctx, obj); err != nil {
			t.Fatal(err)
		}
	})
	got, err := st.Get(ctx, name)
	require.NoError(t, err)
	require.Equal(t, obj.Spec, got.Spec)
	require.LessOrEqualf(t, allocs, 22.0, "an Update of the spec allocates %v times", allocs)
}
