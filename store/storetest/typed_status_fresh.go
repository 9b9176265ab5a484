package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
)

// testTypedStatusFreshness checks the exact rule of status writes: a status
// write based on a stale read of status is rejected (no lost increment),
// one that only missed metadata writes lands, one computed from an older
// spec is rejected, and no status write lands on a deleted object's
// same-named successor (UpdateStatus by the UID it read, ApplyStatus by
// WithUID, and by WithGeneration when the successor's generation is lower).
func testTypedStatusFreshness(t *testing.T, st *store.Store[WidgetSpec, WidgetStatus]) {
	ctx := t.Context()
	alice, bob := st.As("alice"), st.As("bob")
	typedCreate(t, alice, typedWidget("web", 1))

	// Two read-increment-write cycles from the same status: one wins, the
	// other is told to re-read, and no increment is lost.
	a, err := st.Get(ctx, "web")
	require.NoError(t, err)
	b, err := st.Get(ctx, "web")
	require.NoError(t, err)
	a.Status.Ready++
	_, err = alice.UpdateStatus(ctx, a)
	require.NoError(t, err)
	b.Status.Ready++
	_, err = bob.UpdateStatus(ctx, b)
	require.ErrorIs(t, err, store.ErrConflict, "a status write based on a stale read of status is rejected")
	b, err = st.Get(ctx, "web")
	require.NoError(t, err)
	b.Status.Ready++
	_, err = bob.UpdateStatus(ctx, b)
	require.NoError(t, err)
	got, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, 2, got.Status.Ready, "both increments landed")

	// A metadata-only write in between does not conflict.
	read, err := st.Get(ctx, "web")
	require.NoError(t, err)
	labeled := *read
	labeled.Meta.Labels = map[string]string{"team": "a"}
	_, err = bob.Update(ctx, &labeled)
	require.NoError(t, err)
	read.Status.Ready = 10
	_, err = alice.UpdateStatus(ctx, read)
	require.NoError(t, err, "a status write rides over a concurrent metadata write")

	// A spec write in between does.
	read, err = st.Get(ctx, "web")
	require.NoError(t, err)
	spec := *read
	spec.Spec.Replicas = 5
	_, err = bob.Update(ctx, &spec)
	require.NoError(t, err)
	read.Status.Ready = 11
	_, err = alice.UpdateStatus(ctx, read)
	require.ErrorIs(t, err, store.ErrConflict, "status computed from an older spec")

	// Deleted and recreated: the old object's status never lands on the new.
	old, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.EqualValues(t, 2, old.Meta.Generation)
	_, err = alice.Delete(ctx, "web")
	require.NoError(t, err)
	typedCreate(t, alice, typedWidget("web", 1))
	ready := []store.Condition{{Type: "Ready", Status: store.ConditionTrue, ObservedGeneration: old.Meta.Generation}}
	_, err = alice.ApplyStatus(ctx, "web", nil, ready, store.WithGeneration(old.Meta.Generation))
	require.ErrorIs(t, err, store.ErrConflict, "generation %d is not the successor's 1", old.Meta.Generation)
	_, err = alice.ApplyStatus(ctx, "web", nil, ready, store.WithUID(old.Meta.UID))
	require.ErrorIs(t, err, store.ErrConflict, "another UID")
	old.Status.Ready = 99
	_, err = alice.UpdateStatus(ctx, old)
	require.ErrorIs(t, err, store.ErrConflict)
	now, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Empty(t, now.Conditions)
	require.Zero(t, now.Status.Ready)
	ready[0].ObservedGeneration = 1
	_, err = alice.ApplyStatus(ctx, "web", nil, ready, store.WithUID(now.Meta.UID), store.WithGeneration(1))
	require.NoError(t, err, "the successor's own status write lands")
}
