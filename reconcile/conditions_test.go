package reconcile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

var (
	t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Minute)
)

func TestStalledUpdate(t *testing.T) {
	stalledTrue := []store.Condition{{Type: conditions.Stalled, Status: store.ConditionTrue, Reason: conditions.ReasonFailing, Message: "lp: 5 consecutive failures", LastTransitionTime: t0}}
	stalledFalse := []store.Condition{{Type: conditions.Stalled, Status: store.ConditionFalse, Reason: conditions.ReasonRecovered, LastTransitionTime: t0}}

	// Set on a fresh object.
	out, write := stalledUpdate(nil, "lp", false, stalledSet, "SecretMissing", "secret s not found", 4, t1, time.Time{})
	require.True(t, write)
	require.Equal(t, []store.Condition{{Type: conditions.Stalled, Status: store.ConditionTrue, Reason: "SecretMissing",
		Message: "lp: secret s not found", LastTransitionTime: t1, ObservedGeneration: 4}}, out)
	// Setting the same again causes no write, nor does a new message
	// alone: the meaning (status, reason, generation) stands.
	_, write = stalledUpdate(out, "lp", true, stalledSet, "SecretMissing", "secret s not found", 4, t1.Add(time.Hour), time.Time{})
	require.False(t, write)
	_, write = stalledUpdate(out, "other", false, stalledSet, "SecretMissing", "secret s still not found", 4, t1.Add(time.Hour), time.Time{})
	require.False(t, write)
	// A new reason or generation is a new meaning.
	_, write = stalledUpdate(out, "lp", true, stalledSet, conditions.ReasonFailing, "secret s not found", 4, t1, time.Time{})
	require.True(t, write)
	_, write = stalledUpdate(out, "lp", true, stalledSet, "SecretMissing", "secret s not found", 5, t1, time.Time{})
	require.True(t, write)
	// A new generation with the same reason only from regen on (the last
	// write plus the backoff cap): a spec that moves at every write, as
	// in a fight, costs a write per cap, Oscillating or not.
	for _, reason := range []string{conditions.ReasonOscillating, conditions.ReasonFailing} {
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
	otherText := []store.Condition{{Type: conditions.Stalled, Status: store.ConditionTrue, Reason: conditions.ReasonFailing, Message: "other: 5 consecutive failures", LastTransitionTime: t0}}
	_, write = stalledUpdate(otherText, "lp", true, stalledClear, "", "", 1, t1, time.Time{})
	require.True(t, write, "a Stalled this Loop owns is cleared whatever its text")
	out, write = stalledUpdate(stalledTrue, "lp", true, stalledClear, "", "", 2, t1, time.Time{})
	require.True(t, write)
	c, _ := conditions.Get(out, conditions.Stalled)
	require.Equal(t, store.ConditionFalse, c.Status)
	require.Equal(t, conditions.ReasonRecovered, c.Reason)
	require.Equal(t, t1, c.LastTransitionTime)

	// Keep changes nothing.
	_, write = stalledUpdate(stalledTrue, "lp", true, stalledKeep, "", "", 1, t1, time.Time{})
	require.False(t, write)
}
