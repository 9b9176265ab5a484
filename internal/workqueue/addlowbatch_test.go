package workqueue_test

import (
	"context"
	"math"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/internal/workqueue"
	"github.com/stretchr/testify/require"
)

// AddLowBatch is AddLow of each key in order, across its batches: new keys
// queue low in order, a key already queued (either priority), delayed or
// due to rerun is left as it is, a processing key reruns low, and after
// ShutDown nothing is added.
func TestAddLowBatchIsAddLowOfEachKeyInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q := workqueue.New[string]()
		q.Add("proc")
		q.Add("dirty")
		require.Equal(t, "proc", get(t, q))
		require.Equal(t, "dirty", get(t, q))
		q.Add("dirty")
		q.Add("normal")
		q.AddLow("low")
		q.AddAfter("delayed", time.Hour)

		var keys []string
		for i := range 100 { // several batches
			keys = append(keys, "k"+strconv.Itoa(i))
		}
		keys = append(keys, "k3", "low", "delayed", "proc", "dirty", "normal", "k99")
		q.AddLowBatch(keys)

		require.Equal(t, workqueue.KeyState{Queued: true}, q.State("normal"))
		require.Equal(t, workqueue.KeyState{Queued: true, Priority: workqueue.Low}, q.State("low"))
		require.True(t, q.State("delayed").Delayed)
		require.False(t, q.State("delayed").Queued, "a resync does not hurry a delay")
		require.Equal(t, workqueue.KeyState{Processing: true, Dirty: true, Priority: workqueue.Low}, q.State("proc"))
		require.Equal(t, workqueue.KeyState{Processing: true, Dirty: true}, q.State("dirty"))
		require.Equal(t, 102, q.Len())

		require.Equal(t, "normal", get(t, q))
		require.Equal(t, "low", get(t, q))
		for i := range 100 {
			require.Equal(t, "k"+strconv.Itoa(i), get(t, q))
		}
		q.ShutDown()
		q.AddLowBatch([]string{"late"})
		require.True(t, q.State("late").Idle())
		_, ok := q.Get(ctx)
		require.False(t, ok)
	})
}

func get(t *testing.T, q *workqueue.Queue[string]) string {
	t.Helper()
	k, ok := q.Get(context.Background())
	require.True(t, ok)
	return k
}

// AddLowBatch refuses, as every add does, a key that is not equal to
// itself (a NaN), and adds the others of its batch.
func TestAddLowBatchRefusesAKeyNotEqualToItself(t *testing.T) {
	q := workqueue.New[float64]()
	defer q.ShutDown()
	nan := math.NaN()
	for range 100 {
		q.AddLowBatch([]float64{nan, 1, nan, 2})
	}
	require.Equal(t, 2, q.Len(), "1 and 2, and no NaN")
	require.Equal(t, workqueue.Counts{Low: 2}, q.Counts())
}
