package conditions

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
	changed, err := Set(&conds, store.Condition{Type: Ready, Status: store.ConditionFalse, Reason: "Creating", ObservedGeneration: 3}, t0)
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
			changed, err := Set(&conds, tt.set, t1)
			require.NoError(t, err)
			require.Equal(t, tt.wantChanged, changed)
			got, ok := Get(conds, Ready)
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
	changed, err := Set(&conds, store.Condition{Type: Ready, Status: store.ConditionTrue}, t0)
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
		changed, err := Set(&conds, c, t0)
		require.ErrorIs(t, err, ErrInvalid)
		require.False(t, changed)
		require.Empty(t, conds)
	}
	_, err := Set(nil, store.Condition{Type: Ready, Status: store.ConditionTrue}, t0)
	require.ErrorIs(t, err, ErrInvalid)
}

func TestGetConditionAndIsTrue(t *testing.T) {
	conds := []store.Condition{{Type: Ready, Status: store.ConditionUnknown}, {Type: Stalled, Status: store.ConditionTrue}}
	_, ok := Get(conds, "Other")
	require.False(t, ok)
	c, ok := Get(conds, Ready)
	require.True(t, ok)
	require.Equal(t, store.ConditionUnknown, c.Status)
	require.False(t, IsTrue(conds, Ready))
	require.True(t, IsTrue(conds, Stalled))
	require.False(t, IsTrue(nil, Ready))
}

func TestRemoveCondition(t *testing.T) {
	base := []store.Condition{{Type: Ready}, {Type: Stalled}}
	conds := base
	require.True(t, Remove(&conds, Ready))
	require.Equal(t, []store.Condition{{Type: Stalled}}, conds)
	require.Equal(t, Ready, base[0].Type, "input slice never written")
	require.False(t, Remove(&conds, Ready))
	require.False(t, Remove(nil, Ready))
}
