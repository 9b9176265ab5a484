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

// oldSpec is an older version of cacheSpec, whose conversion to it panics
// on one value.
type oldSpec struct {
	Img string `json:"img"`
}

// A version conversion that panics on one value, in the relist or in a
// watch event, quarantines that value as any undecodable one: the cache
// syncs, serves every other object and lists the bad key in Quarantined.
// It used to crash the process from the cache's goroutine.
func TestCacheQuarantinesAValueWhoseConversionPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		v1 := store.VersionOf("v1", store.Conversion[oldSpec, cacheStatus, cacheSpec, cacheStatus]{
			ToHub: func(s oldSpec, st cacheStatus) (cacheSpec, cacheStatus, error) {
				if s.Img == "bomb" {
					var p *cacheSpec
					return *p, st, nil // a nil dereference on this one value
				}
				return cacheSpec{Image: s.Img}, st, nil
			},
			FromHub: func(s cacheSpec, st cacheStatus) (oldSpec, cacheStatus, error) {
				return oldSpec{Img: s.Image}, st, nil
			},
		})
		v2 := store.VersionOf("v2", store.Conversion[cacheSpec, cacheStatus, cacheSpec, cacheStatus]{})
		vs, err := store.NewVersions("v1", v1, v2)
		require.NoError(t, err)
		b := memstore.New()
		old, err := store.New[oldSpec, cacheStatus](b, "Widget", store.WithVersion("v1", vs))
		require.NoError(t, err)
		st, err := store.New[cacheSpec, cacheStatus](b, "Widget", store.WithVersion("v2", vs))
		require.NoError(t, err)
		create := func(name, img string) int64 {
			o := &store.Object[oldSpec, cacheStatus]{Meta: store.Meta{Name: name}, Spec: oldSpec{Img: img}}
			_, err := old.As("alice").Create(ctx, o)
			require.NoError(t, err)
			return o.Meta.Revision
		}
		create("a", "img:a")
		create("b", "bomb")

		c := cache.New(st)
		stop := startCache(t, c)
		defer stop()
		syncCtx, cancel := context.WithTimeout(ctx, time.Hour) // virtual time
		defer cancel()
		require.NoError(t, c.WaitForSync(syncCtx), "a panicking conversion does not keep the cache from syncing")
		got, ok := c.Get("a")
		require.True(t, ok)
		require.Equal(t, "img:a", got.Spec.Image)
		require.Equal(t, []string{"Widget/b"}, quarantinedKeys(c))
		require.ErrorContains(t, c.Quarantined()[0], `converting version "v1" to the hub: panicked: runtime.errorString: runtime error: invalid memory address or nil pointer dereference`)

		// In watch events too.
		create("d", "bomb")
		rev := create("e", "img:e")
		require.NoError(t, c.WaitFor(syncCtx, rev))
		got, ok = c.Get("e")
		require.True(t, ok, "the value after a panicking one is served")
		require.Equal(t, "img:e", got.Spec.Image)
		require.Equal(t, []string{"Widget/b", "Widget/d"}, quarantinedKeys(c))
	})
}
