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

// silentWatcher passes a Store through, but its watches deliver nothing at
// all, progress notifications included, until their ctx ends: a watch
// stuck behind a dead connection.
type silentWatcher struct {
	*store.Store[cacheSpec, cacheStatus]
}

func (silentWatcher) Watch(ctx context.Context, from int64) (<-chan store.Event[cacheSpec, cacheStatus], error) {
	out := make(chan store.Event[cacheSpec, cacheStatus])
	go func() {
		defer close(out)
		<-ctx.Done()
	}()
	return out, nil
}

// TestPeriodicRelistRepairsAStuckWatchWithinOnePeriod: a watch that
// delivers nothing never reaches a periodic listing's revision, so the
// Cache gives it a quarter of a period to catch up and then applies the
// listing: every write reaches the Cache within one period plus a quarter
// (the most the jitter shortens a period by), not two periods.
func TestPeriodicRelistRepairsAStuckWatchWithinOnePeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		w := st.As("alice")
		_, err = w.Create(ctx, &cobj{Meta: store.Meta{Name: "a"}, Spec: cacheSpec{Replicas: 0}})
		require.NoError(t, err)
		const period = time.Minute
		c := cache.New[cacheSpec, cacheStatus](silentWatcher{st}, cache.WithRelistPeriod(period))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))

		for i := 1; i <= 20; i++ { // at every phase of the relist timer and its jitter
			a, err := st.Get(ctx, "a")
			require.NoError(t, err)
			a.Spec.Replicas = i
			_, err = w.Update(ctx, a)
			require.NoError(t, err)
			time.Sleep(period + period/4)
			synctest.Wait()
			got, _ := c.Get("a")
			require.Equal(t, i, got.Spec.Replicas, "write %d is still not in the cache one period and a quarter later", i)
			time.Sleep(time.Duration(i) * period / 7) // move to another phase
		}
		require.Equal(t, int64(20), c.DriftRepairs())
	})
}
