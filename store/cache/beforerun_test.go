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

// Refilter and Prune called before Run, as their documentation states:
// they do not fail with ErrNotRunning but wait for Run's first listing,
// which serves them; a ctx that ends before Run is called gives an error
// wrapping both its error and ErrNotRunning (it was a bare
// context.DeadlineExceeded, and ErrNotRunning's doc said a Cache never run
// returned ErrNotRunning); a Cache given bad arguments returns New's error
// at once (it waited for ctx).
func TestRefilterAndPruneBeforeRun(t *testing.T) {
	for _, call := range []struct {
		name string
		f    func(*cache.Cache[cacheSpec, cacheStatus], context.Context) error
	}{
		{"Refilter", (*cache.Cache[cacheSpec, cacheStatus]).Refilter},
		{"Prune", (*cache.Cache[cacheSpec, cacheStatus]).Prune},
	} {
		t.Run(call.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
				require.NoError(t, err)
				_, err = st.As("user").Create(t.Context(), &store.Object[cacheSpec, cacheStatus]{Meta: store.Meta{Name: "a"}})
				require.NoError(t, err)
				_, err = st.As("user").Create(t.Context(), &store.Object[cacheSpec, cacheStatus]{Meta: store.Meta{Name: "b"}})
				require.NoError(t, err)
				c := cache.New[cacheSpec, cacheStatus](st, cache.WithKeep(func(name string) bool { return name == "a" }))

				ctx, cancel := context.WithTimeout(t.Context(), time.Second)
				defer cancel()
				err = call.f(c, ctx)
				require.ErrorIs(t, err, context.DeadlineExceeded)
				require.ErrorIs(t, err, cache.ErrNotRunning)
				require.ErrorContains(t, err, "Run has not been called")

				done := make(chan error, 1)
				go func() { done <- call.f(c, t.Context()) }()
				synctest.Wait()
				select {
				case err := <-done:
					t.Fatalf("returned %v before Run", err)
				default:
				}
				stop := startCache(t, c)
				require.NoError(t, <-done, "served by Run's first listing")
				require.Equal(t, []string{"a"}, c.Keys())
				stop()
				require.ErrorIs(t, call.f(c, t.Context()), cache.ErrNotRunning, "after Run returned")

				bad := cache.New[cacheSpec, cacheStatus](st, cache.WithKeep(func(string) bool { return true }), cache.WithPageSize(-1))
				require.ErrorIs(t, call.f(bad, t.Context()), store.ErrInvalid, "at once: New's error")
			})
		})
	}
}
