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

// Over a Store whose watch the Cache reads in place and pokes (memstore),
// Run waits for the next event on the watch's channel alone: each nudge
// (the end of Run's ctx, a Refilter or Prune call, a relist tick) pokes
// it. Relists are off here, but for the tick's case, so that no tick
// wakes a Run that a nudge failed to.
func TestRunServesNudgesOverAPokedWatch(t *testing.T) {
	// newCache returns a Cache over a Store holding a, and the Store's
	// writer.
	newCache := func(t *testing.T, opts ...cache.Option) (*cache.Cache[cacheSpec, cacheStatus], *store.Store[cacheSpec, cacheStatus]) {
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		_, err = st.As("user").Create(t.Context(), &cobj{Meta: store.Meta{Name: "a"}})
		require.NoError(t, err)
		return cache.New(st, opts...), st
	}
	update := func(t *testing.T, st *store.Store[cacheSpec, cacheStatus], image string) {
		a, err := st.Get(t.Context(), "a")
		require.NoError(t, err)
		a.Spec.Image = image
		_, err = st.As("user").Update(t.Context(), a)
		require.NoError(t, err)
	}
	run := func(ctx context.Context, c *cache.Cache[cacheSpec, cacheStatus]) <-chan error {
		returned := make(chan error, 1)
		go func() { returned <- c.Run(ctx) }()
		return returned
	}

	// A nudge made while Run applies an event, whose poke the watch's
	// next read takes (the event's read returned the watch's channel,
	// which the Cursor looks at once the event is delivered), is served
	// before Run waits: Run returns once its ctx ends there, with no
	// later write to wake it.
	t.Run("ctx ends in a handler", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, st := newCache(t, cache.WithRelistPeriod(0))
			ctx, cancel := context.WithCancel(t.Context())
			c.AddHandler(func(old, new *cobj) {
				if old != nil && new != nil {
					cancel()
					// Until the nudge of ctx's end (an AfterFunc's
					// goroutine) is made.
					time.Sleep(time.Millisecond)
				}
			})
			returned := run(ctx, c)
			require.NoError(t, c.WaitForSync(t.Context()))
			update(t, st, "v2")
			require.NoError(t, <-returned, "Run returned after its ctx ended in a handler")
		})
	})

	// Run waits for the next change: a Refilter, a Prune and the end of
	// its ctx wake it, and a write after them is still applied.
	t.Run("calls while Run waits", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, st := newCache(t, cache.WithRelistPeriod(0), cache.WithKeep(func(string) bool { return true }))
			ctx, cancel := context.WithCancel(t.Context())
			returned := run(ctx, c)
			require.NoError(t, c.WaitForSync(t.Context()))
			synctest.Wait()
			require.NoError(t, c.Refilter(t.Context()), "a Refilter made while Run waits is served")
			synctest.Wait()
			require.NoError(t, c.Prune(t.Context()), "and a Prune")
			update(t, st, "v2")
			synctest.Wait()
			a, ok := c.Get("a")
			require.True(t, ok)
			require.Equal(t, "v2", a.Spec.Image)
			synctest.Wait()
			cancel()
			require.NoError(t, <-returned, "Run returned once its ctx ended while it waited")
		})
	})

	// A relist tick while Run waits (relayed as a nudge) relists.
	t.Run("relist tick", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, _ := newCache(t, cache.WithRelistPeriod(time.Minute))
			ctx, cancel := context.WithCancel(t.Context())
			returned := run(ctx, c)
			require.NoError(t, c.WaitForSync(t.Context()))
			synctest.Wait()
			before := c.Relists()
			time.Sleep(3 * time.Minute) // past the period and its jitter
			synctest.Wait()
			require.Greater(t, c.Relists(), before, "the tick's nudge woke Run")
			cancel()
			require.NoError(t, <-returned)
		})
	})
}
