package cache_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// Misuse from client-go habits, black-box: a Cache read or waited on
// without Run (informerFactory.Start forgotten), or after Run returned.

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
		var logs syncBuffer // userpanic_test.go
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
		// A probe polling with a short deadline logs it once, not per call.
		for range 10 {
			pctx, pcancel := context.WithTimeout(t.Context(), time.Second)
			require.ErrorIs(t, c.WaitForSync(pctx), cache.ErrNotRunning)
			pcancel()
		}
		require.Equal(t, 1, strings.Count(logs.String(), "level=WARN"))
	})
}

// LastError says a Cache nobody runs will not sync, for the health check
// or the Loop that asks it why, and stops saying so once Run is called.
func TestMisuseLastErrorOfACacheNobodyRunsSaysSo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cache.New(misuseStore(t))
		err := c.LastError()
		require.ErrorIs(t, err, cache.ErrNotRunning)
		require.ErrorContains(t, err, "Run has not been called")
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		require.NoError(t, c.WaitForSync(ctx))
		require.NoError(t, c.LastError())
		cancel()
		require.NoError(t, <-done)
		require.NoError(t, c.LastError(), "a Cache whose Run returned was run")
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

var errClosed = errors.New("backend closed")

// closable is a Backend that can be closed under a Cache: every call then
// fails, and an open watch ends with the error.
type closable struct {
	*memstore.Store
	closed atomic.Bool
	calls  atomic.Int64 // List and Watch calls
	mu     sync.Mutex
	stop   []context.CancelFunc
}

func (c *closable) List(ctx context.Context, prefix string, opts kv.ListOptions) (kv.List, error) {
	c.calls.Add(1)
	if c.closed.Load() {
		return kv.List{}, errClosed
	}
	return c.Store.List(ctx, prefix, opts)
}

// Watch checks closed and registers the watch's cancel under mu, which
// close holds too: a watch either sees the close or is ended by it. (Checked
// outside mu, a close between the check and the registration left a watch
// open for good: TestMisuseBackendClosedUnderASyncedCache then saw no error,
// 1 run in about 100 under -race.)
func (c *closable) Watch(ctx context.Context, prefix string, from int64) (<-chan kv.Event, error) {
	c.calls.Add(1)
	ctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		cancel()
		return nil, errClosed
	}
	c.stop = append(c.stop, cancel)
	c.mu.Unlock()
	return c.Store.Watch(ctx, prefix, from)
}

func (c *closable) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed.Store(true)
	for _, f := range c.stop {
		f()
	}
}

// A Cache whose backend is closed before it synced: WaitForSync with a
// deadline returns an error that carries the backend's error, and Run
// retries with backoff, not in a hot loop.
func TestMisuseCacheOverAClosedBackendSaysWhyAndBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &closable{Store: memstore.New()}
		b.close()
		st, err := store.New[cacheSpec, cacheStatus](b, "Widget")
		require.NoError(t, err)
		c := cache.New(st)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		wctx, wcancel := context.WithTimeout(t.Context(), time.Hour)
		defer wcancel()
		err = c.WaitForSync(wctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorIs(t, err, errClosed, "the error says why the Cache has not synced")
		require.NotErrorIs(t, err, cache.ErrNotRunning)
		// Default relist backoff (10ms doubling to 2m): about 14 tries to
		// reach the cap, then one every 2m, so about 45 in an hour.
		require.LessOrEqual(t, b.calls.Load(), int64(80), "Run retried a closed backend %d times in an hour", b.calls.Load())
		cancel()
		require.NoError(t, <-done)
	})
}

// A Cache that synced keeps serving its last contents when the backend is
// closed under it, retries with backoff, and says why in LastError.
func TestMisuseBackendClosedUnderASyncedCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &closable{Store: memstore.New()}
		st, err := store.New[cacheSpec, cacheStatus](b, "Widget")
		require.NoError(t, err)
		_, err = st.As("user").Create(t.Context(), &store.Object[cacheSpec, cacheStatus]{Meta: store.Meta{Name: "a"}})
		require.NoError(t, err)
		c := cache.New(st)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		require.NoError(t, c.WaitForSync(ctx))
		before := b.calls.Load()
		b.close()
		time.Sleep(time.Hour)
		synctest.Wait()
		_, ok := c.Get("a")
		require.True(t, ok, "a Cache whose backend closed dropped its contents")
		require.ErrorIs(t, c.LastError(), errClosed)
		require.LessOrEqual(t, b.calls.Load()-before, int64(80), "Run retried a closed backend %d times in an hour", b.calls.Load()-before)
		require.NoError(t, c.WaitForSync(ctx))
		cancel()
		require.NoError(t, <-done)
	})
}

// Misuse: a Cache over a typed nil Store answers its reads as a Cache over
// nothing (no kind, no objects, no Source), and Run says why, instead of
// panicking in Kind.
func TestMisuseCacheOverATypedNilStore(t *testing.T) {
	var st *store.Store[cacheSpec, cacheStatus]
	c := cache.New[cacheSpec, cacheStatus](st)
	require.Empty(t, c.Kind())
	require.Empty(t, c.Version())
	require.Nil(t, c.Source())
	_, ok := c.Get("a")
	require.False(t, ok)
	require.Empty(t, c.List(nil))
	require.ErrorIs(t, c.Run(t.Context()), store.ErrInvalid)
}
