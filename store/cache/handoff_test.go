package cache_test

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// A Cache over a Store decodes the watch's events on Run's own goroutine:
// an event reaches the handlers in one goroutine hand-off (the backend's
// watch to Run), not two through a decoding goroutine of the Store's, and
// the events are the same: each write is applied and handled in order.
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

		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		require.NotContains(t, stacks, "store.(*Store[...]).watch.func",
			"a goroutine of the Store decodes the watch for the Cache")
		require.True(t, strings.Contains(stacks, "cache.(*Cache[...]).follow"), "Run follows the watch")
	})
}

// A Cache over a Store over a memstore reads the watch itself, on Run's
// goroutine: a write wakes Run, with no watch goroutine between them (one
// goroutine hand-off per event, not two). What it applies is what a watch
// delivers: every write in order, a deletion, and a progress mark for a
// write under another prefix, which moves the Cache's revision; and the
// memstore serves one Watch for it.
func TestCacheOverAMemstoreReadsItsWatchWithoutAWatchGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		mem := memstore.New()
		st, err := store.New[cacheSpec, cacheStatus](mem, "Widget")
		require.NoError(t, err)
		others, err := store.New[cacheSpec, cacheStatus](mem, "Gadget")
		require.NoError(t, err)
		u := st.As("u")
		_, err = u.Create(ctx, &cobj{Meta: store.Meta{Name: "a"}, Spec: cacheSpec{Image: "v1"}})
		require.NoError(t, err)
		c := cache.New(st)
		var rec recorder
		c.AddHandler(rec.handle)
		watches := mem.Stats().Watches
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		synctest.Wait()

		a, err := st.Get(ctx, "a")
		require.NoError(t, err)
		a.Spec.Image = "v2"
		_, err = u.Update(ctx, a) // revision 2
		require.NoError(t, err)
		_, err = u.Create(ctx, &cobj{Meta: store.Meta{Name: "b"}}) // 3
		require.NoError(t, err)
		_, err = u.Delete(ctx, "a") // 4
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, []string{"add a@1", "mod a@1->2", "add b@3", "del a@2"}, rec.take())
		_, err = others.As("u").Create(ctx, &cobj{Meta: store.Meta{Name: "x"}}) // 5, under another prefix
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, int64(5), c.Revision(), "a progress mark moved the Cache past a write of another kind")
		require.Empty(t, rec.take())
		require.Equal(t, int64(1), mem.Stats().Sub(memstore.Stats{Watches: watches}).Watches, "one watch")

		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		require.NotContains(t, stacks, "kvwatch.Watch.Run", "a watch goroutine stands between the writer and Run")
		require.Contains(t, stacks, "cache.(*Cache[...]).follow", "Run follows the watch")
	})
}

// wrappedMem is a test's wrapper of a memstore: it embeds the Store, and
// so carries its hooks, but its Watch is its own.
type wrappedMem struct {
	*memstore.Store
	watches atomic.Int64
}

func (w *wrappedMem) Watch(ctx context.Context, prefix string, from int64) (<-chan kv.Event, error) {
	w.watches.Add(1)
	return w.Store.Watch(ctx, prefix, from)
}

// A Cache over a Store over a wrapper of a memstore watches through the
// wrapper's Watch, which is what the wrapper means it to see: the
// memstore's direct watch, which the wrapper carries by embedding it, is
// not taken.
func TestCacheOverAWrappedMemstoreWatchesThroughTheWrapper(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		w := &wrappedMem{Store: memstore.New()}
		st, err := store.New[cacheSpec, cacheStatus](w, "Widget")
		require.NoError(t, err)
		c := cache.New(st)
		var rec recorder
		c.AddHandler(rec.handle)
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		_, err = st.As("u").Create(ctx, &cobj{Meta: store.Meta{Name: "a"}})
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, []string{"add a@1"}, rec.take())
		require.Equal(t, int64(1), w.watches.Load(), "the Cache watched through the wrapper")
	})
}
