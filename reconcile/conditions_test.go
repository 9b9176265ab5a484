package reconcile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
)

var (
	t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Minute)
)

func TestSetConditionAddsNew(t *testing.T) {
	var conds []store.Condition
	changed, err := SetCondition(&conds, store.Condition{Type: Ready, Status: store.ConditionFalse, Reason: "Creating", ObservedGeneration: 3}, t0)
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, []store.Condition{{Type: Ready, Status: store.ConditionFalse, Reason: "Creating", LastTransitionTime: t0, ObservedGeneration: 3}}, conds)
}

func TestSetConditionTransitionTime(t *testing.T) {
	base := []store.Condition{{Type: Ready, Status: store.ConditionFalse, Reason: "A", LastTransitionTime: t0, ObservedGeneration: 1}}
	tests := []struct {
		name        string
		set         store.Condition
		wantChanged bool
		wantLTT     time.Time
	}{
		{"equal: no change, no write", store.Condition{Type: Ready, Status: store.ConditionFalse, Reason: "A", ObservedGeneration: 1}, false, t0},
		{"reason changes, status does not: time kept", store.Condition{Type: Ready, Status: store.ConditionFalse, Reason: "B", ObservedGeneration: 1}, true, t0},
		{"message changes: time kept", store.Condition{Type: Ready, Status: store.ConditionFalse, Reason: "A", Message: "m", ObservedGeneration: 1}, true, t0},
		{"generation recorded: time kept", store.Condition{Type: Ready, Status: store.ConditionFalse, Reason: "A", ObservedGeneration: 2}, true, t0},
		{"status flips: time moves", store.Condition{Type: Ready, Status: store.ConditionTrue, Reason: "A", ObservedGeneration: 1}, true, t1},
		{"status flips with explicit time", store.Condition{Type: Ready, Status: store.ConditionTrue, Reason: "A", ObservedGeneration: 1, LastTransitionTime: t0.Add(time.Second)}, true, t0.Add(time.Second)},
		{"given time ignored when status holds", store.Condition{Type: Ready, Status: store.ConditionFalse, Reason: "B", ObservedGeneration: 1, LastTransitionTime: t1}, true, t0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conds := base
			changed, err := SetCondition(&conds, tt.set, t1)
			require.NoError(t, err)
			require.Equal(t, tt.wantChanged, changed)
			got, ok := GetCondition(conds, Ready)
			require.True(t, ok)
			require.Equal(t, tt.wantLTT, got.LastTransitionTime)
			require.Equal(t, tt.set.ObservedGeneration, got.ObservedGeneration)
			require.Equal(t, tt.set.Reason, got.Reason)
			require.Equal(t, t0, base[0].LastTransitionTime, "input slice never written")
			require.Equal(t, "A", base[0].Reason, "input slice never written")
		})
	}
}

func TestSetConditionKeepsOthers(t *testing.T) {
	conds := []store.Condition{{Type: Stalled, Status: store.ConditionTrue}, {Type: Ready, Status: store.ConditionFalse}}
	changed, err := SetCondition(&conds, store.Condition{Type: Ready, Status: store.ConditionTrue}, t0)
	require.NoError(t, err)
	require.True(t, changed)
	require.Len(t, conds, 2)
	require.True(t, IsTrue(conds, Stalled))
	require.True(t, IsTrue(conds, Ready))
}

func TestSetConditionRejectsBadInput(t *testing.T) {
	var conds []store.Condition
	for _, c := range []store.Condition{
		{Status: store.ConditionTrue},
		{Type: Ready},
		{Type: Ready, Status: "Maybe"},
	} {
		changed, err := SetCondition(&conds, c, t0)
		require.ErrorIs(t, err, ErrInvalidCondition)
		require.False(t, changed)
		require.Empty(t, conds)
	}
	_, err := SetCondition(nil, store.Condition{Type: Ready, Status: store.ConditionTrue}, t0)
	require.ErrorIs(t, err, ErrInvalidCondition)
}

func TestGetConditionAndIsTrue(t *testing.T) {
	conds := []store.Condition{{Type: Ready, Status: store.ConditionUnknown}, {Type: Stalled, Status: store.ConditionTrue}}
	_, ok := GetCondition(conds, "Other")
	require.False(t, ok)
	c, ok := GetCondition(conds, Ready)
	require.True(t, ok)
	require.Equal(t, store.ConditionUnknown, c.Status)
	require.False(t, IsTrue(conds, Ready))
	require.True(t, IsTrue(conds, Stalled))
	require.False(t, IsTrue(nil, Ready))
}

func TestRemoveCondition(t *testing.T) {
	base := []store.Condition{{Type: Ready}, {Type: Stalled}}
	conds := base
	require.True(t, RemoveCondition(&conds, Ready))
	require.Equal(t, []store.Condition{{Type: Stalled}}, conds)
	require.Equal(t, Ready, base[0].Type, "input slice never written")
	require.False(t, RemoveCondition(&conds, Ready))
	require.False(t, RemoveCondition(nil, Ready))
}

func TestStalledUpdate(t *testing.T) {
	stalledTrue := []store.Condition{{Type: Stalled, Status: store.ConditionTrue, Reason: ReasonFailing, Message: "lp: 5 consecutive failures", LastTransitionTime: t0}}
	stalledFalse := []store.Condition{{Type: Stalled, Status: store.ConditionFalse, Reason: ReasonRecovered, LastTransitionTime: t0}}

	// Set on a fresh object.
	out, write := stalledUpdate(nil, "lp", false, stalledSet, "SecretMissing", "secret s not found", 4, t1, time.Time{})
	require.True(t, write)
	require.Equal(t, []store.Condition{{Type: Stalled, Status: store.ConditionTrue, Reason: "SecretMissing",
		Message: "lp: secret s not found", LastTransitionTime: t1, ObservedGeneration: 4}}, out)
	// Setting the same again causes no write, nor does a new message
	// alone: the meaning (status, reason, generation) stands.
	_, write = stalledUpdate(out, "lp", true, stalledSet, "SecretMissing", "secret s not found", 4, t1.Add(time.Hour), time.Time{})
	require.False(t, write)
	_, write = stalledUpdate(out, "other", false, stalledSet, "SecretMissing", "secret s still not found", 4, t1.Add(time.Hour), time.Time{})
	require.False(t, write)
	// A new reason or generation is a new meaning.
	_, write = stalledUpdate(out, "lp", true, stalledSet, ReasonFailing, "secret s not found", 4, t1, time.Time{})
	require.True(t, write)
	_, write = stalledUpdate(out, "lp", true, stalledSet, "SecretMissing", "secret s not found", 5, t1, time.Time{})
	require.True(t, write)
	// A new generation with the same reason only from regen on (the last
	// write plus the backoff cap): a spec that moves at every write, as
	// in a fight, costs a write per cap, Oscillating or not.
	for _, reason := range []string{ReasonOscillating, ReasonFailing} {
		osc, _ := stalledUpdate(nil, "lp", true, stalledSet, reason, "fight", 4, t1, time.Time{})
		_, write = stalledUpdate(osc, "lp", true, stalledSet, reason, "fight", 9, t1, t1.Add(time.Minute))
		require.False(t, write, reason)
		_, write = stalledUpdate(osc, "lp", true, stalledSet, reason, "fight", 9, t1.Add(time.Minute), t1.Add(time.Minute))
		require.True(t, write, reason)
	}

	// Clear: only an object that is stalled gets a write.
	_, write = stalledUpdate(nil, "lp", false, stalledClear, "", "", 1, t1, time.Time{})
	require.False(t, write, "never stalled: no write")
	_, write = stalledUpdate(stalledFalse, "lp", true, stalledClear, "", "", 1, t1, time.Time{})
	require.False(t, write, "already recovered: no write")
	// Ownership decides whose Stalled it is, not the message: a Stalled
	// whose text names this Loop but that another manager owns stays.
	_, write = stalledUpdate(stalledTrue, "lp", false, stalledClear, "", "", 1, t1, time.Time{})
	require.False(t, write, "a Loop never clears a Stalled it does not own")
	otherText := []store.Condition{{Type: Stalled, Status: store.ConditionTrue, Reason: ReasonFailing, Message: "other: 5 consecutive failures", LastTransitionTime: t0}}
	_, write = stalledUpdate(otherText, "lp", true, stalledClear, "", "", 1, t1, time.Time{})
	require.True(t, write, "a Stalled this Loop owns is cleared whatever its text")
	out, write = stalledUpdate(stalledTrue, "lp", true, stalledClear, "", "", 2, t1, time.Time{})
	require.True(t, write)
	c, _ := GetCondition(out, Stalled)
	require.Equal(t, store.ConditionFalse, c.Status)
	require.Equal(t, ReasonRecovered, c.Reason)
	require.Equal(t, t1, c.LastTransitionTime)

	// Keep changes nothing.
	_, write = stalledUpdate(stalledTrue, "lp", true, stalledKeep, "", "", 1, t1, time.Time{})
	require.False(t, write)
}
