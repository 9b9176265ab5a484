package workqueue_test

import (
	"context"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/internal/queuetest"
	"github.com/steady-go/steady/internal/workqueue"
)

// AddLows is AddLow for each key in order, in batches under one lock: on
// keys new, queued at either priority, processing (with and without a
// rerun due), delayed and backed off, and more keys than a batch holds,
// both queues end in the same states, count the same adds, and hand out
// the same keys in the same order. After ShutDown it adds nothing.
func TestAddLowsIsAddLowForEachKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var keys []string
		for i := range 200 {
			keys = append(keys, "k"+strconv.Itoa(i))
		}
		// setup brings both queues to the same states, step by step.
		setup := func(qs ...*workqueue.Queue[string]) {
			each := func(f func(q *workqueue.Queue[string])) {
				for _, q := range qs {
					f(q)
				}
			}
			each(func(q *workqueue.Queue[string]) { q.AddRateLimited("k8") })
			time.Sleep(time.Second)
			each(func(q *workqueue.Queue[string]) {
				k, _ := q.Get(ctx)
				require.Equal(t, "k8", k)
				q.Done(k) // k8 failed once and is done: kept for its count
				q.Add("k1")
				q.AddLow("k2")
				q.Add("k3")
				q.Add("k4")
				for _, want := range []string{"k1", "k3", "k4"} {
					k, ok := q.Get(ctx)
					require.True(t, ok)
					require.Equal(t, want, k)
				}
				q.Add("k3")                   // k3 processing, rerun due
				q.AddAfter("k5", time.Minute) // delayed
				q.AddRateLimited("k6")        // backed off
				q.AddLow("k7")                // queued low
				q.AddAfter("k1", time.Minute) // k1 processing and delayed
			})
		}
		r1, r2 := &queuetest.Recorder{}, &queuetest.Recorder{}
		p := backoff.Policy{Base: time.Second, Factor: 2, Cap: time.Minute} // no jitter: both queues back off alike
		one := workqueue.New[string](workqueue.WithMetrics(r1), workqueue.WithBackoff(p))
		many := workqueue.New[string](workqueue.WithMetrics(r2), workqueue.WithBackoff(p))
		setup(one, many)
		for _, k := range keys {
			one.AddLow(k)
		}
		many.AddLows(keys)
		for _, k := range append(keys, "k-none") {
			require.Equal(t, one.State(k), many.State(k), "state of %s", k)
		}
		require.Equal(t, r1.Snapshot().Added, r2.Snapshot().Added, "adds counted")
		for _, q := range []*workqueue.Queue[string]{one, many} {
			q.Done("k1")
			q.Done("k3")
			q.Done("k4")
		}
		for one.Len() > 0 {
			a, _ := one.Get(ctx)
			b, _ := many.Get(ctx)
			require.Equal(t, a, b)
			one.Done(a)
			many.Done(b)
		}
		require.Zero(t, many.Len())

		many.ShutDown()
		many.AddLows([]string{"late"})
		require.True(t, many.State("late").Idle(), "no add after ShutDown")
		one.ShutDown()
	})
}
