package cache_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// WaitFor's doc, end to end over a real store: progress notifications
// count, so waiting on the revision of a write to another kind (one the
// Cache never holds) returns, and Get then shows every write of its own
// kind made before it.
func TestWaitForAWriteToAnotherKindReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		b := memstore.New()
		type spec struct{ N int }
		apps, err := store.New[spec, struct{}](b, "App")
		require.NoError(t, err)
		others, err := store.New[spec, struct{}](b, "Other")
		require.NoError(t, err)
		c := cache.New(apps)
		go c.Run(ctx)
		require.NoError(t, c.WaitForSync(ctx))

		a, err := apps.As("w").Create(ctx, &store.Object[spec, struct{}]{Meta: store.Meta{Name: "a"}, Spec: spec{1}})
		require.NoError(t, err)
		o, err := others.As("w").Create(ctx, &store.Object[spec, struct{}]{Meta: store.Meta{Name: "o"}})
		require.NoError(t, err)
		require.Greater(t, o, a)

		wctx, wcancel := context.WithTimeout(ctx, time.Minute)
		defer wcancel()
		require.NoError(t, c.WaitFor(wctx, o), "a write to another kind is waited for")
		require.GreaterOrEqual(t, c.Revision(), o)
		got, ok := c.Get("a")
		require.True(t, ok)
		require.Equal(t, 1, got.Spec.N)
		_, ok = c.Get("o")
		require.False(t, ok, "the other kind is not held")
	})
}

// WaitFor returns only once the handlers have been told of the change that
// brought the Cache to the revision: a Loop's worker waiting for its own
// write goes on after the Loop's hint of that write is queued, never
// alongside it (a race that made replays of a seeded schedule diverge).
// Here the handler holds the event for the write while WaitFor waits.
func TestWaitForReturnsAfterTheHandlersOfItsRevision(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		type spec struct{ N int }
		apps, err := store.New[spec, struct{}](memstore.New(), "App")
		require.NoError(t, err)
		c := cache.New(apps)
		release := make(chan struct{})
		releaseOnce := sync.OnceFunc(func() { close(release) })
		defer releaseOnce() // a failure below leaves no handler blocked
		var handled bool
		c.AddHandler(func(_, new *store.Object[spec, struct{}]) {
			if new != nil && new.Spec.N == 1 {
				<-release
				handled = true
			}
		})
		go c.Run(ctx)
		require.NoError(t, c.WaitForSync(ctx))

		rev, err := apps.As("w").Create(ctx, &store.Object[spec, struct{}]{Meta: store.Meta{Name: "a"}, Spec: spec{1}})
		require.NoError(t, err)
		waited := make(chan error, 1)
		go func() { waited <- c.WaitFor(ctx, rev) }()
		synctest.Wait()
		require.GreaterOrEqual(t, c.Revision(), rev, "the Cache shows the write while its handler runs")
		select {
		case err := <-waited:
			t.Fatalf("WaitFor returned (%v) while the handler of its revision was still running", err)
		default:
		}
		releaseOnce()
		require.NoError(t, <-waited)
		require.True(t, handled)
		require.NoError(t, c.WaitFor(ctx, rev), "a revision already told returns at once")
	})
}
