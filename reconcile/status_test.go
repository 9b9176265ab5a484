package reconcile

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

// StoreConditions reads who owns a condition from the object's managed fields.
func TestStoreStatusOwnsCondition(t *testing.T) {
	e := newEnv(t, "App", nil)
	defer e.stop()
	e.create(t, "user", &app{Meta: store.Meta{Name: "a"}})
	apply := func(manager, message string) {
		t.Helper()
		c := store.Condition{Type: conditions.Stalled, Status: store.ConditionTrue, Reason: conditions.ReasonFailing, Message: message}
		_, err := e.st.As(manager).ApplyStatus(context.Background(), "a", nil, []store.Condition{c}, store.WithForce())
		require.NoError(t, err)
	}
	owns := func(manager string) bool {
		return ownsCondition(e.st, e.get(t, "a"), manager, conditions.Stalled)
	}
	require.False(t, owns("a-loop"), "no condition: nobody owns it")

	apply("a-loop", "a: stuck")
	require.True(t, owns("a-loop"))
	require.False(t, owns("b-loop"))
	require.False(t, owns("user"), "the object's creator does not own the Loop's condition")

	apply("b-loop", "b: stuck") // b takes the message; status, reason are equal, so shared
	require.True(t, owns("b-loop"))
	require.True(t, owns("a-loop"), "an equal status applied by two managers is owned by both")

	c := store.Condition{Type: conditions.Stalled, Status: store.ConditionFalse, Reason: conditions.ReasonRecovered, Message: "b: recovered"}
	_, err := e.st.As("b-loop").ApplyStatus(context.Background(), "a", nil, []store.Condition{c}, store.WithForce())
	require.NoError(t, err)
	require.True(t, owns("b-loop"))
	require.True(t, owns("a-loop"), "a manager that applied the condition keeps owning it (the list item) after a forced change of its status")
	require.False(t, owns("user"))
	require.False(t, ownsCondition(e.st, e.get(t, "a"), "b-loop", conditions.Ready), "a missing condition type is nobody's")
}
