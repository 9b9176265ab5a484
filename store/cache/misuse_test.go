package cache_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// Misuse from client-go habits, black-box: a Cache read or waited on
// without Run (informerFactory.Start forgotten), or after Run returned.

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func misuseStore(t *testing.T) *store.Store[cacheSpec, cacheStatus] {
	st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
	require.NoError(t, err)
	_, err = st.As("user").Create(t.Context(), &store.Object[cacheSpec, cacheStatus]{Meta: store.Meta{Name: "a"}})
	require.NoError(t, err)
	return st
}

// Reading a Cache before Run is safe and empty: no panic, no block.
func TestMisuseReadsBeforeRunAreEmpty(t *testing.T) {
	c := cache.New(misuseStore(t))
	_, ok := c.Get("a")
	require.False(t, ok)
	require.Empty(t, c.List(nil))
	require.Empty(t, c.Keys())
	require.False(t, c.HasSynced())
	require.Zero(t, c.Revision())
}

// WaitForSync on a Cache nobody runs: with a deadline it returns, and both
// the error and the log say why (Run has not been called), not just
// "context deadline exceeded".
func TestMisuseWaitForSyncWithoutRunSaysRunWasNeverCalled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs lockedBuf
		c := cache.New(misuseStore(t), cache.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		err := c.WaitForSync(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorIs(t, err, cache.ErrNotRunning)
		require.Contains(t, err.Error(), "Run has not been called")
		require.Contains(t, err.Error(), "Widget", "the error names the kind")
		require.Contains(t, logs.String(), "level=WARN")
		require.Contains(t, logs.String(), "Run has not been called")
	})
}

// Run that returned before its first listing (its ctx ended early): a
// WaitForSync, even without a deadline, returns ErrNotRunning rather than
// blocking forever.
func TestMisuseWaitForSyncAfterRunReturnedUnsyncedDoesNotHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cache.New(misuseStore(t))
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		require.NoError(t, c.Run(ctx))
		// A safety net so the test fails rather than deadlocks.
		wctx, wcancel := context.WithTimeout(t.Context(), time.Hour)
		defer wcancel()
		err := c.WaitForSync(wctx)
		require.ErrorIs(t, err, cache.ErrNotRunning)
		require.NotErrorIs(t, err, context.DeadlineExceeded, "WaitForSync waited out the safety net")
		require.Contains(t, err.Error(), "Widget")
	})
}

// A Cache that synced and then stopped keeps serving: WaitForSync is nil.
func TestMisuseWaitForSyncAfterASyncedRunReturnedIsNil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cache.New(misuseStore(t))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		require.NoError(t, c.WaitForSync(t.Context()))
		cancel()
		require.NoError(t, <-done)
		require.NoError(t, c.WaitForSync(t.Context()))
		_, ok := c.Get("a")
		require.True(t, ok)
	})
}

// Two caches over one store both sync and see the same writes; a second
// Run of either is refused.
func TestMisuseTwoCachesOnOneStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := misuseStore(t)
		c1, c2 := cache.New(st), cache.New(st)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		wg.Go(func() { _ = c1.Run(ctx) })
		wg.Go(func() { _ = c2.Run(ctx) })
		require.NoError(t, c1.WaitForSync(ctx))
		require.NoError(t, c2.WaitForSync(ctx))
		require.True(t, errors.Is(c1.Run(ctx), cache.ErrRunning))
		_, err := st.As("user").Create(ctx, &store.Object[cacheSpec, cacheStatus]{Meta: store.Meta{Name: "b"}})
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, []string{"a", "b"}, c1.Keys())
		require.Equal(t, []string{"a", "b"}, c2.Keys())
		cancel()
		wg.Wait()
	})
}
