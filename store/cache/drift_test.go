package cache_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// droppingWatcher passes a Store through, but its watches silently drop
// every event that drop matches and carry on, as a faulty proxy would.
type droppingWatcher struct {
	*store.Store[cacheSpec, cacheStatus]
	drop func(store.Event[cacheSpec, cacheStatus]) bool
}

func (d droppingWatcher) Watch(ctx context.Context, from int64) (<-chan store.Event[cacheSpec, cacheStatus], error) {
	in, err := d.Store.Watch(ctx, from)
	if err != nil {
		return nil, err
	}
	out := make(chan store.Event[cacheSpec, cacheStatus])
	go func() {
		defer close(out)
		for ev := range in {
			if !ev.Progress && ev.Err == nil && d.drop(ev) {
				continue
			}
			select {
			case out <- ev:
			case <-ctx.Done():
			}
		}
	}()
	return out, nil
}

// TestPeriodicRelistRepairsASilentlyLossyWatch: a watch that drops events
// and carries on used to leave the cache wrong forever (the cache relisted
// only when its watch ended). With a relist period, it converges within one
// period, tells the handlers, and counts the repairs.
func TestPeriodicRelistRepairsASilentlyLossyWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		w := st.As("alice")
		for _, name := range []string{"a", "b", "c"} {
			_, err := w.Create(ctx, &cobj{Meta: store.Meta{Name: name}, Spec: cacheSpec{Replicas: 1}})
			require.NoError(t, err)
		}
		lossy := droppingWatcher{st, func(ev store.Event[cacheSpec, cacheStatus]) bool {
			name := ev.Object.Meta.Name
			return name == "b" || name == "c" || name == "d" // every change to b, c and d is lost
		}}
		const period = time.Minute
		c := cache.New[cacheSpec, cacheStatus](lossy, cache.WithRelistPeriod(period))
		var rec recorder
		c.AddHandler(rec.handle)
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))
		rec.take()
		start := time.Now()

		b, err := st.Get(ctx, "b")
		require.NoError(t, err)
		b.Spec.Replicas = 5
		_, err = w.Update(ctx, b)
		require.NoError(t, err)
		_, err = w.Delete(ctx, "c")
		require.NoError(t, err)
		_, err = w.Create(ctx, &cobj{Meta: store.Meta{Name: "d"}})
		require.NoError(t, err)
		a, err := st.Get(ctx, "a")
		require.NoError(t, err)
		a.Spec.Replicas = 2
		last, err := w.Update(ctx, a)
		require.NoError(t, err)
		require.NoError(t, c.WaitFor(ctx, last))
		synctest.Wait()
		stale, _ := c.Get("b")
		require.Equal(t, 1, stale.Spec.Replicas, "the watch lost b's update")
		require.Equal(t, []string{"a", "b", "c"}, objNames(c.List(nil)))

		// Within one period the cache matches the store again.
		time.Sleep(period)
		synctest.Wait()
		require.LessOrEqual(t, time.Since(start), period)
		got, _ := c.Get("b")
		require.Equal(t, 5, got.Spec.Replicas)
		require.Equal(t, []string{"a", "b", "d"}, objNames(c.List(nil)))
		calls := rec.take()
		require.Len(t, calls, 4, "a's update, then the repairs of c, b and d: %v", calls)
		require.Equal(t, int64(3), c.DriftRepairs())
		require.GreaterOrEqual(t, c.Relists(), int64(1))

		// A relist that finds nothing wrong repairs nothing.
		time.Sleep(period)
		synctest.Wait()
		require.Equal(t, int64(3), c.DriftRepairs())
		require.Empty(t, rec.take())
	})
}
