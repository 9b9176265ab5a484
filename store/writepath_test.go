package store_test

import (
	"fmt"
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
// for a re-apply of changed values, and built the record's key twice; 5
// while the conds of its Txn were allocated for each write). The budget is
// exact, so that an allocation added to the path fails it. Allocations are
// counted, not time, so the machine's load does not matter.
func TestApplyStatusOfAnOwnedFieldKeepsTheRecordUnencoded(t *testing.T) {
	st, name := allocsStore(t)
	ctx := t.Context()
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
	require.LessOrEqualf(t, allocs, 4.0, "an ApplyStatus of an owned field allocates %v times", allocs)
}

// The same holds for the spec side: a controller's Apply that changes only
// the value of a spec field it already owns leaves the ownership record as
// stored, without encoding it again (128 allocations before, when every
// such Apply re-encoded the unchanged record, 111 while a successful write's
// check for a failed condition allocated; BenchmarkApplySpecOwnField).
func TestApplyOfAnOwnedSpecFieldKeepsTheRecordUnencoded(t *testing.T) {
	st, name := allocsStore(t)
	ctx := t.Context()
	deployer := st.As("deployer")
	_, err := deployer.Apply(ctx, name, map[string]any{"replicas": 5}, store.WithForce())
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
// options; 7 while the conds of its Txn were allocated for each write; 6
// while the next value it computes, a copy of the current one, escaped).
// The budget is exact, so that an allocation added to the path fails it.
func TestUpdateWithoutOptionsAllocatesNoOptionSpace(t *testing.T) {
	st, name := allocsStore(t)
	ctx := t.Context()
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
	require.LessOrEqualf(t, allocs, 5.0, "an Update of the spec allocates %v times", allocs)
}

// The other writer of a controller's event as BenchmarkUpdateSpecOther
// has it, a client Store that remembers no values, reads the object and
// writes it back with its spec changed: a Get and an Update, which
// allocate 7 times together (13 while the conds of the Update's Txn were
// allocated for each write, 12 while the Update's next value, a copy of
// the current one, escaped to the heap, 11 while the Get and the Update
// each built the object's key, which escaped through kv.Backend's Get:
// memstore reads it in two parts, see getKV; 9 while the Update's read
// and its spec's encoding had allocations of their own, where they now
// take the scratch space the write holds, see updateRead). The budget is
// exact, so that an allocation added to the path fails it.
func TestUpdateOfAnotherObjectAllocationBudget(t *testing.T) {
	if testing.Short() || raceScale > 1 {
		t.Skip("counts allocations (the race detector's sync.Pool drops scratch space at random)")
	}
	ctx := t.Context()
	mem := memstore.New(memstore.WithHistorySize(16))
	st, err := store.New[judgeSpec, judgeStatus](mem, "App")
	require.NoError(t, err)
	name := writePathObjects(t, st, 1)[0]
	other, err := store.New[judgeSpec, judgeStatus](mem, "App", store.WithLastValues(0))
	require.NoError(t, err)
	user := other.As("user")
	replicas := int64(0)
	allocs := testing.AllocsPerRun(100, func() {
		obj, err := other.Get(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		obj.Spec.Replicas++
		replicas = obj.Spec.Replicas
		if _, err := user.Update(ctx, obj); err != nil {
			t.Fatal(err)
		}
	})
	got, err := st.Get(ctx, name)
	require.NoError(t, err)
	require.Equal(t, replicas, got.Spec.Replicas)
	require.LessOrEqualf(t, allocs, 7.0, "a Get and an Update of the spec allocate %v times", allocs)
}

// A controller's first status apply to an object another client created,
// as its Loop makes it at 1M objects (BenchmarkApplyStatusFirstObserved),
// allocates no more than its later applies do, but for the copy of the
// record the memory of values keeps: the new object, its value, the
// applied status's encoding and that copy. Its record and status side are
// the last first apply's (see firstStatusApply), not built anew.
func TestFirstStatusApplyAllocationBudget(t *testing.T) {
	if testing.Short() || raceScale > 1 {
		t.Skip("counts allocations (the race detector's sync.Pool drops scratch space at random)")
	}
	const runs = 100
	ctx := t.Context()
	mem := memstore.New(memstore.WithHistorySize(16))
	st, err := store.New[judgeSpec, judgeStatus](mem, "App")
	require.NoError(t, err)
	other, err := store.New[judgeSpec, judgeStatus](mem, "App", store.WithLastValues(0))
	require.NoError(t, err)
	var names []string
	for i := range runs + 2 { // AllocsPerRun's warm-up call, and one before it
		name := fmt.Sprintf("app-%03d", i)
		_, err := other.As("user").Create(ctx, judgeApp(name, 3))
		require.NoError(t, err)
		_, err = st.Get(ctx, name) // the memory holds it decoded, as a watch leaves it
		require.NoError(t, err)
		names = append(names, name)
	}
	ctrl := st.As("ctrl")
	apply := func(name string) {
		res, err := ctrl.ApplyStatus(ctx, name, judgeStatus{ReadyReplicas: 3}, nil)
		if err != nil || !res.Changed {
			t.Fatal(err, res)
		}
	}
	apply(names[0])
	i := 1
	allocs := testing.AllocsPerRun(runs, func() {
		apply(names[i])
		i++
	})
	got, err := other.Get(ctx, names[runs])
	require.NoError(t, err)
	require.Equal(t, int64(3), got.Status.ReadyReplicas)
	require.Len(t, got.Meta.Managed, 2)
	require.LessOrEqualf(t, allocs, 4.0, "a first status apply allocates %v times", allocs)
}

// The Meta an Update hands back is the caller's: a caller that changes its
// ownership records in place (they are the store's, which it ignores on
// the next write) changes nothing the Store holds, in a Store that
// remembers its writes and in one that remembers nothing, which hands out
// the records it read without copying them. The stored values are those of
// a twin whose caller leaves them alone, after writes that keep the
// records and writes by another manager that rewrite them.
func TestUpdateHandsOutManagedOfItsOwn(t *testing.T) {
	for _, opts := range [][]store.Option{nil, {store.WithLastValues(0)}} {
		ctx := t.Context()
		newStore := func() (*store.Store[judgeSpec, judgeStatus], *memstore.Store) {
			mem := memstore.New()
			st, err := store.New[judgeSpec, judgeStatus](mem, "App", opts...)
			require.NoError(t, err)
			st.SetUIDs(func() string { return "uid-1" })
			_, err = st.As("user").Create(ctx, judgeApp("web", 1))
			require.NoError(t, err)
			_, err = st.As("ctrl").ApplyStatus(ctx, "web", judgeStatus{ReadyReplicas: 1}, nil)
			require.NoError(t, err)
			return st, mem
		}
		st, mem := newStore()
		twin, twinMem := newStore()
		objs := map[*store.Store[judgeSpec, judgeStatus]]*store.Object[judgeSpec, judgeStatus]{}
		for _, s := range []*store.Store[judgeSpec, judgeStatus]{st, twin} {
			o, err := s.Get(ctx, "web")
			require.NoError(t, err)
			objs[s] = o
		}
		for i := range 3 {
			for _, s := range []*store.Store[judgeSpec, judgeStatus]{st, twin} {
				o := objs[s]
				o.Spec.Replicas++
				_, err := s.As("user").Update(ctx, o)
				require.NoError(t, err)
				if s == st {
					for j := range o.Meta.Managed {
						o.Meta.Managed[j].Fields = "~garbage"
					}
				}
				if i == 1 { // another manager takes the replicas
					other := *o
					other.Spec.Replicas++
					_, err := s.As("other").Update(ctx, &other)
					require.NoError(t, err)
					*o = other
				}
			}
			got, err := mem.Get(ctx, "App/web")
			require.NoError(t, err)
			want, err := twinMem.Get(ctx, "App/web")
			require.NoError(t, err)
			require.Equal(t, string(want.Value), string(got.Value), "update %d, options %v", i, opts)
		}
	}
}

// A write's options cost it no allocation: their config comes from a pool
// (a Loop's status apply carries WithObserved on every write; each such
// write allocated a config before). An ApplyStatus of an own field with
// WithObserved allocates what one without options does.
func TestWriteOptionsAllocateNoConfig(t *testing.T) {
	st, name := allocsStore(t)
	ctx := t.Context()
	ctrl := st.As("ctrl")
	replicas := int64(1)
	apply := func(opts ...store.WriteOption) float64 {
		return testing.AllocsPerRun(100, func() {
			replicas++
			res, err := ctrl.ApplyStatus(ctx, name, judgeStatus{ReadyReplicas: replicas}, nil, opts...)
			if err != nil || !res.Changed {
				t.Fatal(err, res)
			}
		})
	}
	bare := apply()
	obj, err := st.Get(ctx, name)
	require.NoError(t, err)
	observed := apply(store.WithObserved(obj.Meta), store.WithForce())
	require.Equalf(t, bare, observed, "an ApplyStatus allocates %v times with options, %v without", observed, bare)
}
