package cache_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// writeOnWatch is a Backend that runs write inside its first Watch call,
// before the watch starts: a write that lands between a listing and the
// watch that follows it.
type writeOnWatch struct {
	kv.Backend
	once  sync.Once
	write func(ctx context.Context)
	lists atomic.Int32
}

func (b *writeOnWatch) List(ctx context.Context, prefix string, opts kv.ListOptions) (kv.List, error) {
	b.lists.Add(1)
	return b.Backend.List(ctx, prefix, opts)
}

func (b *writeOnWatch) Watch(ctx context.Context, prefix string, from int64) (<-chan kv.Event, error) {
	b.once.Do(func() { b.write(ctx) })
	return b.Backend.Watch(ctx, prefix, from)
}

// The listing of a fresh store has Revision 0, and the Cache watches from
// it: a write between the two reaches the Cache because a watch from 0
// replays from revision 1 (kv.Backend's Watch). Until round 53 a watch from
// 0 could mean "from now", and the Cache listed again after an empty
// listing to make up for it; it no longer does, so a Backend whose watch
// from 0 starts from now fails this test.
func TestCacheOverAFreshStoreSeesAWriteBetweenItsListingAndItsWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &writeOnWatch{Backend: memstore.New()}
		st, err := store.New[cacheSpec, cacheStatus](b, "Widget")
		require.NoError(t, err)
		w := st.As("writer")
		b.write = func(ctx context.Context) {
			// On Run's goroutine: t.Errorf, as require's t.FailNow would
			// end that goroutine (runtime.Goexit) and hang the test.
			if _, err := w.Create(ctx, &cobj{Meta: store.Meta{Name: "between"}, Spec: cacheSpec{Image: "v1"}}); err != nil {
				t.Errorf("the write between the listing and the watch: %v", err)
			}
		}
		c := cache.New(st, cache.WithRelistPeriod(0))
		stop := startCache(t, c)
		defer stop()
		synctest.Wait()
		require.Equal(t, []string{"between"}, c.Keys(), "the write between the listing (revision 0) and the watch")
		require.Equal(t, int64(1), c.Revision())

		_, err = w.Create(t.Context(), &cobj{Meta: store.Meta{Name: "after"}, Spec: cacheSpec{Image: "v1"}})
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, []string{"after", "between"}, c.Keys())
		require.EqualValues(t, 1, b.lists.Load(), "one listing: the watch from 0 makes a second needless")
	})
}
