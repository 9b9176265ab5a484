package store_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// countingClock counts its reads.
type countingClock struct {
	clock.Real
	reads atomic.Int64
}

func (c *countingClock) Now() time.Time {
	c.reads.Add(1)
	return c.Real.Now()
}

// An ApplyStatus reads the Store's clock only to stamp the conditions it
// applies: a status applied alone (a controller's usual write) reads none.
func TestApplyStatusReadsTheClockForConditionsOnly(t *testing.T) {
	ctx := t.Context()
	clk := &countingClock{}
	st, err := store.New[judgeSpec, judgeStatus](memstore.New(), "App", store.WithClock(clk))
	require.NoError(t, err)
	name := writePathObjects(t, st, 1)[0]
	ctrl := st.As("ctrl")
	before := clk.reads.Load()
	for i := range int64(3) {
		res, err := ctrl.ApplyStatus(ctx, name, judgeStatus{ReadyReplicas: i + 2}, nil)
		require.NoError(t, err)
		require.True(t, res.Changed)
	}
	require.Equal(t, before, clk.reads.Load(), "status alone")
	res, err := ctrl.ApplyStatus(ctx, name, judgeStatus{ReadyReplicas: 4}, []store.Condition{{Type: "Ready", Status: store.ConditionTrue}})
	require.NoError(t, err)
	require.True(t, res.Changed)
	require.Greater(t, clk.reads.Load(), before, "a condition to stamp")
	got, err := st.Get(ctx, name)
	require.NoError(t, err)
	require.False(t, got.Conditions[0].LastTransitionTime.IsZero(), "stamped")
}

// An applied status of the Store's Status type, already boxed by the
// caller, is encoded as given: it is not boxed again, which allocated (a
// value of more than a byte).
func TestApplyStatusBoxesNoStatusAgain(t *testing.T) {
	st, name := allocsStore(t)
	ctx := t.Context()
	ctrl := st.As("ctrl")
	// Statuses boxed here, once: values of a byte (which the runtime
	// boxes with no allocation), then larger ones, applied by turns.
	var allocs [2]float64
	for i, statuses := range [][2]any{{judgeStatus{ReadyReplicas: 7}, judgeStatus{ReadyReplicas: 8}},
		{judgeStatus{ReadyReplicas: 70_000}, judgeStatus{ReadyReplicas: 80_000}}} {
		allocs[i] = testing.AllocsPerRun(100, func() {
			for _, s := range statuses {
				res, err := ctrl.ApplyStatus(ctx, name, s, nil)
				if err != nil || !res.Changed {
					t.Fatal(err, res)
				}
			}
		})
	}
	require.Equal(t, allocs[0], allocs[1], "allocations of two ApplyStatus of statuses of a byte, and of larger ones")
}
