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
