package asuser

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

type appSpec struct {
	Replicas int `json:"replicas"`
}

type appStatus struct{}

// mutateAndReplace starts a cache, modifies the object it serves (the bug the
// detector exists for), then writes a new version so the cache replaces the
// modified object, which is when a detector compares it with its copy.
func mutateAndReplace(t *testing.T, opts ...cache.Option) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := store.New[appSpec, appStatus](memstore.New(), "App")
	require.NoError(t, err)
	w := st.As("user")
	obj := &store.Object[appSpec, appStatus]{Spec: appSpec{Replicas: 1}}
	obj.Meta.Name = "a"
	_, err = w.Create(ctx, obj)
	require.NoError(t, err)

	c := cache.New(st, opts...)
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.Run(ctx) })
	defer wg.Wait()
	defer cancel()
	require.NoError(t, c.WaitForSync(ctx))

	served, ok := c.Get("a")
	require.True(t, ok)
	served.Spec.Replicas = 99 // modifies the shared copy

	next := &store.Object[appSpec, appStatus]{Meta: obj.Meta, Spec: appSpec{Replicas: 2}}
	rev, err := w.Update(ctx, next)
	require.NoError(t, err)
	require.NoError(t, c.WaitFor(ctx, rev))
	got, _ := c.Get("a")
	require.Equal(t, 2, got.Spec.Replicas, "the cache went on serving after the replaced object")
}

// In a user's test binary the detector is off unless the user asks for it:
// a modified cached object is the user's bug, but it must not panic a
// background goroutine of a cache that was never told to check.
func TestMutationDetectorIsOffInAUsersTestBinary(t *testing.T) {
	t.Setenv(cache.MutationDetectorEnv, "")
	mutateAndReplace(t) // a panic on the cache's goroutine would kill the test binary
}

// Asked for, it reports the modification through the user's function.
func TestMutationDetectorReportsWhenAskedFor(t *testing.T) {
	var mu sync.Mutex
	var reported []error
	mutateAndReplace(t, cache.WithMutationDetector(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, err)
	}))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reported, 1)
	var me *cache.MutationError
	require.True(t, errors.As(reported[0], &me))
	require.Equal(t, "a", me.Name)
}
