package conditions_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

// Set and Remove never write into the slice they are given, even where it
// has room: a cached object's conditions may share their backing array
// with the cache's copy, or with another slice of the caller's.
func TestBlackbox51SetAndRemoveNeverWriteIntoTheirInput(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	backing := make([]store.Condition, 2, 8)
	backing[0] = store.Condition{Type: conditions.Ready, Status: store.ConditionFalse, Reason: "Waiting", LastTransitionTime: now}
	backing[1] = store.Condition{Type: "Synced", Status: store.ConditionTrue, LastTransitionTime: now}
	spare := backing[:3] // another view of the same array, one past the end
	before := append([]store.Condition(nil), spare...)

	conds := backing
	changed, err := conditions.Set(&conds, store.Condition{Type: "Extra", Status: store.ConditionTrue}, now.Add(time.Minute))
	require.NoError(t, err)
	require.True(t, changed)
	require.Len(t, conds, 3)
	require.Equal(t, before, spare, "a new condition is not appended into the caller's spare capacity")

	conds = backing
	changed, err = conditions.Set(&conds, store.Condition{Type: conditions.Ready, Status: store.ConditionTrue, Reason: "Done"}, now.Add(time.Minute))
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, store.ConditionTrue, conds[0].Status)
	require.Equal(t, before, spare, "a changed condition is not written in place")

	conds = backing
	require.True(t, conditions.Remove(&conds, conditions.Ready))
	require.Equal(t, []store.Condition{backing[1]}, conds)
	require.Equal(t, before, spare, "a removal does not shift the caller's array")
}

// What Set keeps and what it moves: an unchanged condition (a new
// LastTransitionTime alone is no change) leaves the list as it was, the
// very slice; a change that keeps the Status keeps the old transition
// time even when c carries one; a flip takes c's time when it has one,
// else now; and an invalid condition changes nothing.
func TestBlackbox51SetKeepsWhatDoesNotChange(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ready := store.Condition{Type: conditions.Ready, Status: store.ConditionTrue, Reason: "Done", ObservedGeneration: 2, LastTransitionTime: t0}
	orig := []store.Condition{ready}
	conds := orig

	same := ready
	same.LastTransitionTime = t0.Add(time.Hour)
	changed, err := conditions.Set(&conds, same, t0.Add(2*time.Hour))
	require.NoError(t, err)
	require.False(t, changed)
	require.Same(t, &orig[0], &conds[0], "nothing changed: the same slice")

	reason := ready
	reason.Reason, reason.LastTransitionTime = "StillDone", t0.Add(time.Hour)
	changed, err = conditions.Set(&conds, reason, t0.Add(2*time.Hour))
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, t0, conds[0].LastTransitionTime, "the Status did not flip: the old time stays")

	flip := ready
	flip.Status, flip.LastTransitionTime = store.ConditionFalse, t0.Add(time.Hour)
	changed, err = conditions.Set(&conds, flip, t0.Add(2*time.Hour))
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, t0.Add(time.Hour), conds[0].LastTransitionTime, "a flip takes c's time")
	flip.Status, flip.LastTransitionTime = store.ConditionUnknown, time.Time{}
	_, err = conditions.Set(&conds, flip, t0.Add(2*time.Hour))
	require.NoError(t, err)
	require.Equal(t, t0.Add(2*time.Hour), conds[0].LastTransitionTime, "a flip without a time takes now")

	kept := conds
	for _, bad := range []store.Condition{{Status: store.ConditionTrue}, {Type: "X", Status: "true"}, {Type: "X"}} {
		changed, err = conditions.Set(&conds, bad, t0)
		require.ErrorIs(t, err, conditions.ErrInvalid)
		require.False(t, changed)
		require.Equal(t, kept, conds)
	}
	_, err = conditions.Set(nil, ready, t0)
	require.ErrorIs(t, err, conditions.ErrInvalid)
}
