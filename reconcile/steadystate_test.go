package reconcile_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
	"github.com/stretchr/testify/require"
)

// The essay: "Informers maintain a local cache fed by a watch, so the read
// half of the comparison is served from memory." A converged fleet under
// periodic resync costs the store nothing: every pass compares full state,
// from the cache, and writes nothing.
func TestSteadyStatePassesReadAndWriteNothingFromTheStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		b := memstore.New()
		type spec struct{ Replicas int }
		type status struct{ Replicas int }
		st, err := store.New[spec, status](b, "Group")
		require.NoError(t, err)
		const n = 200
		for i := range n {
			o := &store.Object[spec, status]{Meta: store.Meta{Name: fmt.Sprintf("g-%03d", i)}, Spec: spec{3}, Status: status{3}}
			_, err := st.As("user").Create(ctx, o)
			require.NoError(t, err)
		}
		groupCache := cache.New(st)
		go groupCache.Run(ctx)

		var passes, diffs atomic.Int64
		r := reconcile.Func[string](func(ctx context.Context, name string) (reconcile.Result, error) {
			passes.Add(1)
			o, ok := groupCache.Get(name) // the whole comparison, from memory
			if !ok {
				return reconcile.Result{}, nil
			}
			if o.Spec.Replicas != o.Status.Replicas {
				diffs.Add(1)
			}
			return reconcile.Result{}, nil
		})
		loop, err := reconcile.New("groups", r, reconcile.FromStore(groupCache, st), reconcile.WithResync(time.Minute, 0), reconcile.WithWorkers(2))
		require.NoError(t, err)
		done := make(chan error)
		go func() { done <- loop.Run(ctx) }()

		synctest.Wait() // the first term reconciles every key once
		require.EqualValues(t, n, passes.Load())
		before := b.Stats()

		for range 5 {
			time.Sleep(time.Minute) // one resync period, on virtual time
			synctest.Wait()
		}
		used := b.Stats().Sub(before)
		require.EqualValues(t, 6*n, passes.Load(), "every resync compares every object")
		require.Zero(t, diffs.Load())
		require.Zero(t, used.Gets, "no store reads in steady state")
		require.Zero(t, used.Lists, "no relists in steady state")
		require.Zero(t, used.Txns, "no writes in steady state")

		cancel()
		require.NoError(t, <-done)
	})
}
