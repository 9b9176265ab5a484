package store_test

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
)

// rev is the store's current revision, read as a listing's.
func storeRev(t *testing.T, st *store.Store[applySpec, applyStatus]) int64 {
	t.Helper()
	l, err := st.List(t.Context(), store.ListOptions{})
	require.NoError(t, err)
	return l.Revision
}

// A dry-run Create returns what would be stored (the object as JSON, its
// field ownership) and writes nothing; against an existing name it fails
// as the Create would.
func TestDryRunCreateWritesNothing(t *testing.T) {
	ctx := t.Context()
	st := newApplyStore(t)
	var res store.DryRunResult
	obj := &store.Object[applySpec, applyStatus]{Meta: store.Meta{Name: "web"}, Spec: applySpec{Image: "web:1"}}
	rev, err := st.As("user").Create(ctx, obj, store.DryRun(&res))
	require.NoError(t, err)
	require.Zero(t, rev)
	_, err = st.Get(ctx, "web")
	require.ErrorIs(t, err, store.ErrNotFound, "nothing written")
	require.Zero(t, storeRev(t, st))

	require.Equal(t, "Create", res.Op)
	require.Equal(t, "App", res.Kind)
	require.Equal(t, "web", res.Name)
	require.True(t, res.Write)
	require.NoError(t, res.Err)
	require.NotEmpty(t, res.Meta.Managed, "the field-ownership result")
	var would store.Object[applySpec, applyStatus]
	require.NoError(t, json.Unmarshal(res.Object, &would))
	require.Equal(t, "web:1", would.Spec.Image)
	require.Equal(t, int64(1), would.Meta.Generation)

	_, err = st.As("user").Create(ctx, obj)
	require.NoError(t, err)
	_, err = st.As("user").Create(ctx, obj, store.DryRun(&res))
	require.ErrorIs(t, err, store.ErrAlreadyExists)
	require.ErrorIs(t, res.Err, store.ErrAlreadyExists)
	require.False(t, res.Write)
}

// A dry-run Update checks the revision precondition as the write would and
// leaves the stored object as it was.
func TestDryRunUpdateChecksTheRevision(t *testing.T) {
	ctx := t.Context()
	st := newApplyStore(t)
	obj := &store.Object[applySpec, applyStatus]{Meta: store.Meta{Name: "web"}, Spec: applySpec{Image: "web:1"}}
	_, err := st.As("user").Create(ctx, obj)
	require.NoError(t, err)
	before := storeRev(t, st)

	next := *obj
	next.Spec.Image = "web:2"
	var res store.DryRunResult
	rev, err := st.As("user").Update(ctx, &next, store.DryRun(&res))
	require.NoError(t, err)
	require.Equal(t, obj.Meta.Revision, rev, "the object's revision: nothing was written")
	require.Equal(t, before, storeRev(t, st))
	got, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, "web:1", got.Spec.Image)
	require.True(t, res.Write)
	require.Equal(t, int64(2), res.Meta.Generation, "the spec changed: the generation it would store")

	stale := *obj
	_, err = st.As("other").Update(ctx, &next)
	require.NoError(t, err)
	_, err = st.As("user").Update(ctx, &stale, store.DryRun(&res))
	require.ErrorIs(t, err, store.ErrConflict)
	require.ErrorIs(t, res.Err, store.ErrConflict)
}

// A dry-run Apply reports the field-ownership conflicts the apply would
// meet, and with Force the ownership it would leave; nothing is written.
func TestDryRunApplyReportsConflictsAndOwnership(t *testing.T) {
	ctx := t.Context()
	st := newApplyStore(t)
	_, err := st.As("user").Apply(ctx, "web", applySpec{Image: "web:1", Replicas: ptr(3)})
	require.NoError(t, err)
	before := storeRev(t, st)

	var res store.DryRunResult
	_, err = st.As("scaler").Apply(ctx, "web", applySpec{Replicas: ptr(5)}, store.DryRun(&res))
	requireFieldConflict(t, err, "user", ".spec.replicas")
	requireFieldConflict(t, res.Err, "user", ".spec.replicas")
	require.False(t, res.Write)

	out, err := st.As("scaler").Apply(ctx, "web", applySpec{Replicas: ptr(5)}, store.WithForce(), store.DryRun(&res))
	require.NoError(t, err)
	require.True(t, out.Changed)
	require.Equal(t, before, out.Revision, "the current revision: nothing was written")
	require.Equal(t, before, storeRev(t, st))
	var would store.Object[applySpec, applyStatus]
	require.NoError(t, json.Unmarshal(res.Object, &would))
	require.Equal(t, 5, *would.Spec.Replicas)
	var managers []string
	for _, m := range res.Meta.Managed {
		managers = append(managers, m.Manager)
	}
	require.Contains(t, managers, "scaler", "scaler would own .spec.replicas")

	// An apply that changes nothing would write nothing.
	_, err = st.As("user").Apply(ctx, "web", applySpec{Image: "web:1", Replicas: ptr(3)}, store.DryRun(&res))
	require.NoError(t, err)
	require.False(t, res.Write)
	require.NoError(t, res.Err)
}

// ApplyStatus, UpdateStatus and Delete take DryRun too.
func TestDryRunStatusAndDelete(t *testing.T) {
	ctx := t.Context()
	st := newApplyStore(t)
	obj := &store.Object[applySpec, applyStatus]{Meta: store.Meta{Name: "web"}}
	_, err := st.As("user").Create(ctx, obj)
	require.NoError(t, err)
	before := storeRev(t, st)

	var res store.DryRunResult
	_, err = st.As("ctl").ApplyStatus(ctx, "web", applyStatus{Phase: "Up"},
		[]store.Condition{{Type: "Ready", Status: store.ConditionTrue}}, store.DryRun(&res))
	require.NoError(t, err)
	require.True(t, res.Write)
	require.Equal(t, "ApplyStatus", res.Op)
	var would store.Object[applySpec, applyStatus]
	require.NoError(t, json.Unmarshal(res.Object, &would))
	require.Equal(t, "Up", would.Status.Phase)
	require.Len(t, would.Conditions, 1)

	up := *obj
	up.Status.Phase = "Down"
	_, err = st.As("ctl").UpdateStatus(ctx, &up, store.DryRun(&res))
	require.NoError(t, err)
	require.True(t, res.Write)

	_, err = st.As("user").Delete(ctx, "web", store.DryRun(&res))
	require.NoError(t, err)
	require.True(t, res.Deleted)
	_, err = st.As("user").Delete(ctx, "nope", store.DryRun(&res))
	require.ErrorIs(t, err, store.ErrNotFound)
	require.ErrorIs(t, res.Err, store.ErrNotFound)

	require.Equal(t, before, storeRev(t, st), "no dry run wrote")
	got, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Empty(t, got.Status.Phase)
}

// WithDryRun makes every write with the ctx a dry run, reported in order;
// write observers hear of none, as nothing was written.
func TestWithDryRunReportsEveryWriteOfTheCtx(t *testing.T) {
	st := newApplyStore(t)
	_, err := st.As("user").Create(t.Context(), &store.Object[applySpec, applyStatus]{Meta: store.Meta{Name: "a"}})
	require.NoError(t, err)
	before := storeRev(t, st)
	var mu sync.Mutex
	var got []string
	observed := 0
	ctx := store.WithWriteObserver(t.Context(), func(int64) { observed++ })
	ctx = store.WithDryRun(ctx, func(r store.DryRunResult) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r.Op+" "+r.Name)
	})
	w := st.As("ctl")
	_, err = w.Create(ctx, &store.Object[applySpec, applyStatus]{Meta: store.Meta{Name: "b"}})
	require.NoError(t, err)
	_, err = w.Apply(ctx, "a", applySpec{Image: "x"})
	require.NoError(t, err)
	_, err = w.Delete(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, []string{"Create b", "Apply a", "Delete a"}, got)
	require.Zero(t, observed)
	require.Equal(t, before, storeRev(t, st))
}
