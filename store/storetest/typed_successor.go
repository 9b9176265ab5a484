package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
)

// testTypedStatusSuccessor checks that a status computed from a read never
// lands on a same-named successor at the same generation: the object is
// deleted and recreated (both at generation 1), so WithGeneration alone
// cannot tell them apart, while WithObserved of the read's Meta rejects the
// write with ErrConflict, for ApplyStatus and UpdateStatus alike, and lets
// the successor's own status land.
func testTypedStatusSuccessor(t *testing.T, st *store.Store[WidgetSpec, WidgetStatus]) {
	ctx := t.Context()
	user, ctrl := st.As("user"), st.As("ctrl")
	typedCreate(t, user, typedWidget("web", 1))
	old, err := st.Get(ctx, "web")
	require.NoError(t, err)
	_, err = user.Delete(ctx, "web")
	require.NoError(t, err)
	typedCreate(t, user, typedWidget("web", 2))
	succ, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, old.Meta.Generation, succ.Meta.Generation, "both objects are at generation 1")
	require.NotEqual(t, old.Meta.UID, succ.Meta.UID)

	ready := []store.Condition{{Type: "Ready", Status: store.ConditionTrue, ObservedGeneration: old.Meta.Generation}}
	_, err = ctrl.ApplyStatus(ctx, "web", WidgetStatus{Ready: 1}, ready, store.WithObserved(old.Meta))
	require.ErrorIs(t, err, store.ErrConflict, "ApplyStatus of the old object's status on its successor")
	fresh := *succ // the status-freshness check passes; only the identity differs
	fresh.Status.Ready = 1
	_, err = ctrl.UpdateStatus(ctx, &fresh, store.WithObserved(old.Meta))
	require.ErrorIs(t, err, store.ErrConflict, "UpdateStatus of the old object's status on its successor")
	got, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Empty(t, got.Conditions, "nobody reconciled the successor")
	require.Zero(t, got.Status.Ready)

	// WithGeneration alone cannot tell them apart: it is a spec check.
	_, err = ctrl.ApplyStatus(ctx, "web", WidgetStatus{Ready: 1}, ready, store.WithGeneration(old.Meta.Generation))
	require.NoError(t, err, "WithGeneration(1) lands on a successor at generation 1")

	// A spec change since the read is refused too.
	read, err := st.Get(ctx, "web")
	require.NoError(t, err)
	spec := *read
	spec.Spec.Replicas = 3
	_, err = user.Update(ctx, &spec)
	require.NoError(t, err)
	_, err = ctrl.ApplyStatus(ctx, "web", WidgetStatus{Ready: 2}, nil, store.WithObserved(read.Meta))
	require.ErrorIs(t, err, store.ErrConflict, "status computed from an older spec")

	// The successor's own status lands.
	read, err = st.Get(ctx, "web")
	require.NoError(t, err)
	_, err = ctrl.ApplyStatus(ctx, "web", WidgetStatus{Ready: 3}, nil, store.WithObserved(read.Meta))
	require.NoError(t, err)
	fresh2, err := st.Get(ctx, "web")
	require.NoError(t, err)
	fresh2.Status.Ready = 4
	_, err = ctrl.UpdateStatus(ctx, fresh2, store.WithObserved(read.Meta))
	require.NoError(t, err)

	// A Meta that no read returned is a caller's bug, not a condition.
	_, err = ctrl.ApplyStatus(ctx, "web", WidgetStatus{Ready: 5}, nil, store.WithObserved(store.Meta{Name: "web"}))
	require.ErrorIs(t, err, store.ErrInvalid)
	got, err = st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, 4, got.Status.Ready)
}
