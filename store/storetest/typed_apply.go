package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// testTypedApply checks server-side apply over the backend: creation, no
// write when nothing changes, field conflicts, and concurrent applies of
// disjoint fields all landing.
func testTypedApply(t *testing.T, newBackend func(t *testing.T) kv.Backend) {
	ctx := t.Context()
	st, err := store.New[map[string]int, map[string]int](newBackend(t), "Counters", store.WithKeyPrefix("storetest/"))
	require.NoError(t, err)
	a, b := st.As("a"), st.As("b")

	res, err := a.Apply(ctx, "c", map[string]any{"x": 1})
	require.NoError(t, err)
	require.True(t, res.Created)
	again, err := a.Apply(ctx, "c", map[string]any{"x": 1})
	require.NoError(t, err)
	require.False(t, again.Changed)
	require.Equal(t, res.Revision, again.Revision, "an apply that changes nothing writes nothing")

	_, err = b.Apply(ctx, "c", map[string]any{"x": 2})
	var ce *ownership.ConflictError
	require.True(t, errors.As(err, &ce), "want a field conflict, got %v", err)
	require.NotErrorIs(t, err, store.ErrConflict)

	_, err = a.ApplyStatus(ctx, "c", nil, []store.Condition{{Type: "Ready", Status: store.ConditionTrue}})
	require.NoError(t, err)
	_, err = b.ApplyStatus(ctx, "c", nil, []store.Condition{{Type: "Stalled", Status: store.ConditionFalse}})
	require.NoError(t, err)
	obj, err := st.Get(ctx, "c")
	require.NoError(t, err)
	require.Len(t, obj.Conditions, 2, "conditions are owned by type")

	const managers, rounds = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, managers)
	for m := range managers {
		w := st.As(fmt.Sprintf("m%d", m))
		wg.Go(func() {
			for r := 1; r <= rounds; r++ {
				if _, err := w.Apply(ctx, "c", map[string]any{fmt.Sprintf("f%d", m): r}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	obj, err = st.Get(ctx, "c")
	require.NoError(t, err)
	for m := range managers {
		require.Equal(t, rounds, obj.Spec[fmt.Sprintf("f%d", m)], "every concurrent apply of disjoint fields lands")
	}
	require.Equal(t, 1, obj.Spec["x"])
}
