package cache_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/goroutines"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// A Cache over a Store decodes the watch's events on Run's own goroutine:
// an event reaches the handlers in one goroutine hand-off (the backend's
// watch to Run), not two through a decoding goroutine of the Store's, and
// the events are the same: each write is applied and handled in order.
// Over memstore, Run also reads the history itself (kvwatch.Cursor): the
// write wakes Run, with no goroutine of the watch's in between.
func TestCacheOverAStoreDecodesItsWatchOnRunsGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		_, err = st.As("u").Create(ctx, &cobj{Meta: store.Meta{Name: "a"}, Spec: cacheSpec{Image: "v1"}})
		require.NoError(t, err)
		c := cache.New(st)
		var rec recorder
		c.AddHandler(rec.handle)
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))

		a, err := st.Get(ctx, "a")
		require.NoError(t, err)
		a.Spec.Image = "v2"
		_, err = st.As("u").Update(ctx, a)
		require.NoError(t, err)
		_, err = st.As("u").Create(ctx, &cobj{Meta: store.Meta{Name: "b"}})
		require.NoError(t, err)
		synctest.Wait()

		got, _ := c.Get("a")
		require.Equal(t, "v2", got.Spec.Image)
		require.Len(t, rec.take(), 3, "the listing's add, the update, the create")

		stacks := goroutines.Stacks()
		require.NotContains(t, stacks, "store.(*Store[...]).watch.func",
			"a goroutine of the Store decodes the watch for the Cache")
		require.True(t, strings.Contains(stacks, "cache.(*Cache[...]).follow"), "Run follows the watch")
		require.NotContains(t, stacks, "kvwatch.Watch.Run",
			"a goroutine of memstore's watch feeds the Cache: Run reads the history in place")
	})
}
