package store_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// A Loop's status write, ApplyStatus guarded by WithObserved of its read,
// lands on the object and spec it read or nowhere: a read of an earlier
// spec, or of an object since deleted and recreated under the same name,
// gets ErrConflict and writes nothing, and so does each as a dry run,
// which reports the conflict; a Meta that no read returned is refused with
// ErrInvalid, by UpdateStatus too. One that changes nothing writes
// nothing.
func TestApplyStatusWithObserved(t *testing.T) {
	ctx := t.Context()
	st, err := store.New[judgeSpec, judgeStatus](memstore.New(), "App")
	require.NoError(t, err)
	user, ctrl := st.As("user"), st.As("ctrl")
	create := func() *store.Object[judgeSpec, judgeStatus] {
		o := &store.Object[judgeSpec, judgeStatus]{Meta: store.Meta{Name: "web"}, Spec: judgeSpec{Replicas: 1}}
		_, err := user.Create(ctx, o)
		require.NoError(t, err)
		return o
	}
	read := create()
	rev := listRev(t, st)

	// Not a read: refused before anything is read or written.
	for _, m := range []store.Meta{{}, {UID: read.Meta.UID}, {Generation: read.Meta.Generation}} {
		_, err := ctrl.ApplyStatus(ctx, "web", judgeStatus{ReadyReplicas: 1}, nil, store.WithObserved(m))
		require.ErrorIs(t, err, store.ErrInvalid, "%+v", m)
		require.ErrorContains(t, err, fmt.Sprintf("WithObserved needs the Meta of a read object (UID %q, Generation %d)", m.UID, m.Generation))
		o := *read
		_, err = ctrl.UpdateStatus(ctx, &o, store.WithObserved(m))
		require.ErrorIs(t, err, store.ErrInvalid, "%+v", m)
	}
	require.Equal(t, rev, listRev(t, st), "nothing written")

	// The read's object and spec: it lands, once.
	res, err := ctrl.ApplyStatus(ctx, "web", judgeStatus{ReadyReplicas: 1}, nil, store.WithObserved(read.Meta))
	require.NoError(t, err)
	require.True(t, res.Changed)
	res, err = ctrl.ApplyStatus(ctx, "web", judgeStatus{ReadyReplicas: 1}, nil, store.WithObserved(read.Meta))
	require.NoError(t, err)
	require.False(t, res.Changed, "the same status again")
	rev = listRev(t, st)
	require.Equal(t, rev, res.Revision)

	stale := func(why string) {
		t.Helper()
		var dry store.DryRunResult
		_, err := ctrl.ApplyStatus(ctx, "web", judgeStatus{ReadyReplicas: 2}, nil, store.WithObserved(read.Meta), store.DryRun(&dry))
		require.ErrorIs(t, err, store.ErrConflict, "dry run: %s", why)
		require.ErrorIs(t, dry.Err, store.ErrConflict, "dry run: %s", why)
		require.False(t, dry.Write, why)
		_, err = ctrl.ApplyStatus(ctx, "web", judgeStatus{ReadyReplicas: 2}, nil, store.WithObserved(read.Meta))
		require.ErrorIs(t, err, store.ErrConflict, why)
		got, err := st.Get(ctx, "web")
		require.NoError(t, err)
		require.Equal(t, rev, got.Meta.Revision, "nothing written: %s", why)
	}

	// Another writer moves the spec on: the read is of an earlier one.
	o, err := st.Get(ctx, "web")
	require.NoError(t, err)
	o.Spec.Replicas = 2
	rev, err = user.Update(ctx, o)
	require.NoError(t, err)
	stale("a later spec")

	// The object is deleted and recreated: the same generation, another UID.
	_, err = user.Delete(ctx, "web")
	require.NoError(t, err)
	again := create()
	require.Equal(t, read.Meta.Generation, again.Meta.Generation)
	rev = listRev(t, st)
	stale("a successor")

	// A dry run with the successor's read reports the write it would make.
	var dry store.DryRunResult
	res, err = ctrl.ApplyStatus(ctx, "web", judgeStatus{ReadyReplicas: 2}, nil, store.WithObserved(again.Meta), store.DryRun(&dry))
	require.NoError(t, err)
	require.True(t, dry.Write)
	require.Equal(t, "ApplyStatus", dry.Op)
	require.Equal(t, rev, listRev(t, st), "a dry run writes nothing")
	res, err = ctrl.ApplyStatus(ctx, "web", judgeStatus{ReadyReplicas: 2}, nil, store.WithObserved(again.Meta))
	require.NoError(t, err)
	require.True(t, res.Changed)
}

// The Store's memory of its own writes (WithLastValues) shares nothing
// with what its callers hold: maps and slices a caller gave a write, or
// got back from one, and changes in place afterwards without writing,
// never reach the store through a later write computed from the memory
// (a status apply, which leaves the metadata and other managers'
// conditions as they are).
func TestLastValuesKeepNoCallersMaps(t *testing.T) {
	ctx := t.Context()
	st, err := store.New[judgeSpec, judgeStatus](memstore.New(), "App")
	require.NoError(t, err)
	user, ctrl, loop := st.As("user"), st.As("ctrl"), st.As("loop")
	o := &store.Object[judgeSpec, judgeStatus]{
		Meta:       store.Meta{Name: "web", Labels: map[string]string{"tier": "a"}, Finalizers: []string{"x/a"}},
		Spec:       judgeSpec{Replicas: 1},
		Conditions: []store.Condition{{Type: "Ready", Status: store.ConditionFalse, Reason: "A"}},
	}
	_, err = user.Create(ctx, o)
	require.NoError(t, err)
	ready := int64(0)
	// applyThenCheck makes a status apply, from the memory of the last
	// write, and checks what is stored.
	applyThenCheck := func(tier, finalizer, reason string) {
		t.Helper()
		ready++
		res, err := loop.ApplyStatus(ctx, "web", judgeStatus{ReadyReplicas: ready}, nil, store.WithForce())
		require.NoError(t, err)
		require.True(t, res.Changed)
		got, err := st.Get(ctx, "web")
		require.NoError(t, err)
		require.Equal(t, tier, got.Meta.Labels["tier"])
		require.Equal(t, []string{finalizer}, got.Meta.Finalizers)
		require.Equal(t, reason, got.Conditions[0].Reason)
	}

	o.Meta.Labels["tier"], o.Meta.Finalizers[0] = "z", "x/z" // what Create was given
	applyThenCheck("a", "x/a", "A")

	o, err = st.Get(ctx, "web")
	require.NoError(t, err)
	o.Meta.Labels["tier"], o.Meta.Finalizers[0] = "b", "x/b"
	_, err = user.Update(ctx, o)
	require.NoError(t, err)
	o.Meta.Labels["tier"], o.Meta.Finalizers[0] = "z", "x/z" // what Update was given and returned
	applyThenCheck("b", "x/b", "A")

	o, err = st.Get(ctx, "web")
	require.NoError(t, err)
	o.Conditions[0].Reason = "B"
	_, err = ctrl.UpdateStatus(ctx, o)
	require.NoError(t, err)
	o.Conditions[0].Reason = "Z" // what UpdateStatus was given and returned
	o.Meta.Labels["tier"], o.Meta.Finalizers[0] = "z", "x/z"
	applyThenCheck("b", "x/b", "B")
	applyThenCheck("b", "x/b", "B") // from the memory of a status apply
}

// listRev is the store revision a List of st reads at.
func listRev[S, T any](t *testing.T, st *store.Store[S, T]) int64 {
	t.Helper()
	l, err := st.List(t.Context(), store.ListOptions{})
	require.NoError(t, err)
	return l.Revision
}

// WithObserved called in the write's own call, as a Loop's reconciler
// calls it (ApplyStatus(..., WithObserved(o.Meta))), allocates nothing:
// it inlines, and its option stays on the caller's stack, as no write
// keeps its options. It allocated its option on every write before.
func TestWithObservedInTheCallAllocatesNothing(t *testing.T) {
	st, name := allocsStore(t)
	ctx := t.Context()
	ctrl := st.As("ctrl")
	obj, err := st.Get(ctx, name)
	require.NoError(t, err)
	replicas := int64(1000) // boxed alike in every run: past the runtime's static small ints
	var allocs [2]float64   // without WithObserved, with it
	for i, observed := range []bool{false, true} {
		allocs[i] = testing.AllocsPerRun(100, func() {
			replicas++
			var res store.ApplyResult
			var err error
			if observed {
				res, err = ctrl.ApplyStatus(ctx, name, judgeStatus{ReadyReplicas: replicas}, nil, store.WithObserved(obj.Meta))
			} else {
				res, err = ctrl.ApplyStatus(ctx, name, judgeStatus{ReadyReplicas: replicas}, nil)
			}
			if err != nil || !res.Changed {
				t.Fatal(err, res)
			}
		})
	}
	require.Equalf(t, allocs[0], allocs[1], "an ApplyStatus allocates %v times with WithObserved called in it, %v without", allocs[1], allocs[0])
}
