package cache_test

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// Listing tells a handler whether its change was found by a listing (the
// first one, a relist, AddHandler's replay) or delivered by the watch.
func TestListingTellsListedChangesFromWatchEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		w := st.As("alice")
		_, err = w.Create(ctx, &cobj{Meta: store.Meta{Name: "a"}})
		require.NoError(t, err)
		c := cache.New[cacheSpec, cacheStatus](st)
		var mu sync.Mutex
		var seen []string
		record := func(who string) func(old, new *cobj) {
			return func(old, new *cobj) {
				obj := new
				if obj == nil {
					obj = old
				}
				mu.Lock()
				seen = append(seen, fmt.Sprintf("%s %s listed=%v", who, obj.Meta.Name, c.Listing()))
				mu.Unlock()
			}
		}
		c.AddHandler(record("h1"))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))
		_, err = w.Create(ctx, &cobj{Meta: store.Meta{Name: "b"}})
		require.NoError(t, err)
		synctest.Wait()
		c.AddHandler(record("h2"))
		require.False(t, c.Listing(), "outside a handler")
		_, err = w.Delete(ctx, "a")
		require.NoError(t, err)
		synctest.Wait()
		require.NoError(t, c.RelistNow(ctx)) // finds nothing to repair
		require.Equal(t, []string{
			"h1 a listed=true",  // the first listing
			"h1 b listed=false", // the watch
			"h2 a listed=true",  // AddHandler's replay
			"h2 b listed=true",
			"h1 a listed=false", // the watch's deletion
			"h2 a listed=false",
		}, seen)
	})
}
