package objmarks

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The condition types Of looks for are the ones the Loop writes.
func TestConditionTypesAreTheLoops(t *testing.T) {
	require.Equal(t, conditions.Paused, pausedCondition)
	require.Equal(t, conditions.Reconciling, reconcilingCondition)
}

// Of reads each mark from the one place it lives, and only "true" sets an
// annotation's mark.
func TestOfReadsEachMark(t *testing.T) {
	cond := func(typ string, status store.ConditionStatus, observed int64) store.Condition {
		return store.Condition{Type: typ, Status: status, ObservedGeneration: observed}
	}
	for _, tc := range []struct {
		name  string
		meta  store.Meta
		conds []store.Condition
		want  Marks
	}{
		{name: "nothing", want: Marks{}},
		{name: "paused", meta: store.Meta{Annotations: map[string]string{PausedAnnotation: "true"}}, want: Marks{Paused: true}},
		{name: "paused, not true", meta: store.Meta{Annotations: map[string]string{PausedAnnotation: "yes"}}, want: Marks{}},
		{name: "observe-only", meta: store.Meta{Annotations: map[string]string{ObserveOnlyAnnotation: "true"}}, want: Marks{ObserveOnly: true}},
		{name: "deleting", meta: store.Meta{DeletionRequested: true}, want: Marks{Deleting: true}},
		{name: "Paused=True", conds: []store.Condition{cond(conditions.Paused, store.ConditionTrue, 0)}, want: Marks{PauseShown: true}},
		{name: "Paused=False", conds: []store.Condition{cond(conditions.Paused, store.ConditionFalse, 0)}, want: Marks{}},
		{name: "Reconciling=True", conds: []store.Condition{cond(conditions.Reconciling, store.ConditionTrue, 0)},
			want: Marks{Reconciling: true, HasReconciling: true}},
		{name: "Reconciling=False observed", conds: []store.Condition{cond(conditions.Reconciling, store.ConditionFalse, 3)},
			want: Marks{HasReconciling: true, Observed: true}},
		{name: "Ready observed", conds: []store.Condition{cond(conditions.Ready, store.ConditionTrue, 0), cond(conditions.Ready, store.ConditionFalse, 1)},
			want: Marks{Observed: true}},
		{name: "last Reconciling counts", conds: []store.Condition{cond(conditions.Reconciling, store.ConditionTrue, 0), cond(conditions.Reconciling, store.ConditionUnknown, 0)},
			want: Marks{HasReconciling: true}},
		{name: "all", meta: store.Meta{DeletionRequested: true, Annotations: map[string]string{PausedAnnotation: "true", ObserveOnlyAnnotation: "true"}},
			conds: []store.Condition{cond(conditions.Paused, store.ConditionTrue, 0), cond(conditions.Reconciling, store.ConditionTrue, 2)},
			want:  Marks{Paused: true, PauseShown: true, ObserveOnly: true, Reconciling: true, HasReconciling: true, Observed: true, Deleting: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Of(&tc.meta, tc.conds))
		})
	}
}

// Quiet marks ask nothing of a Loop before a reconcile: a new object's
// included, whose freshness matters only after a reconcile that failed.
func TestQuietMarksAskNothingOfALoop(t *testing.T) {
	for _, m := range []Marks{{}, {HasReconciling: true}, {Observed: true}, {Deleting: true}, {HasReconciling: true, Observed: true}} {
		require.True(t, m.Quiet(), "%+v", m)
	}
	for _, m := range []Marks{{Paused: true}, {Paused: true, Observed: true}, {PauseShown: true, Observed: true}, {ObserveOnly: true, Observed: true},
		{Reconciling: true, HasReconciling: true}} {
		require.False(t, m.Quiet(), "%+v", m)
	}
}

// A fresh object was never observed: no Reconciling condition, no
// ObservedGeneration, no deletion requested.
func TestFreshMarksAreThoseOfANewObject(t *testing.T) {
	for _, m := range []Marks{{}, {Paused: true}, {ObserveOnly: true, PauseShown: true}} {
		require.True(t, m.Fresh(), "%+v", m)
	}
	for _, m := range []Marks{{HasReconciling: true}, {Observed: true}, {Deleting: true}, {Reconciling: true, HasReconciling: true}} {
		require.False(t, m.Fresh(), "%+v", m)
	}
}
