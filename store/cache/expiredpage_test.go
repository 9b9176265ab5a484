package cache_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// expiringPages lists and watches a Store, but every page of a listing
// after its first fails with ErrExpired: what a paged listing gets when
// more writes land while it is read than the backend keeps history for
// (memstore's WithHistorySize, etcd's compaction), since every page is
// pinned to the revision of the first. A writer that keeps running ahead
// of a kind of 1M objects does that to every paged listing of it.
type expiringPages struct {
	st    *store.Store[cacheSpec, cacheStatus]
	mu    sync.Mutex
	lists []int // the Limit of each List call, in order
	// expiring, when not nil, is called before a page after the first
	// expires.
	expiring func()
}

// limits returns the Limit of each List call since the last call.
func (e *expiringPages) limits() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	l := e.lists
	e.lists = nil
	return l
}

func (e *expiringPages) List(ctx context.Context, opts store.ListOptions) (*store.List[cacheSpec, cacheStatus], error) {
	e.mu.Lock()
	e.lists = append(e.lists, opts.Limit)
	e.mu.Unlock()
	if opts.Continue != "" {
		if e.expiring != nil {
			e.expiring()
		}
		return nil, fmt.Errorf("injected: page after the first: %w", store.ErrExpired)
	}
	return e.st.List(ctx, opts)
}

func (e *expiringPages) Watch(ctx context.Context, rev int64) (<-chan store.Event[cacheSpec, cacheStatus], error) {
	return e.st.Watch(ctx, rev)
}

// A listing whose later pages expire falls back to listing the kind in
// one page, which cannot expire, as client-go's pager does: the first
// listing and a relist each complete in one attempt instead of failing
// (and being retried, from the first page, after a backoff) for as long as
// the writer keeps ahead. The relist still applies what changed while the
// Cache was blind, deletions included.
func TestListingWhosePagesExpireFallsBackToOnePage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, window = 10, 4
		ctx := t.Context()
		mem := memstore.New(memstore.WithHistorySize(window), memstore.WithWatchBuffer(1))
		st, err := store.New[cacheSpec, cacheStatus](mem, "Widget")
		require.NoError(t, err)
		w := st.As("writer")
		for i := range n {
			_, err := w.Create(ctx, &cobj{Meta: store.Meta{Name: fmt.Sprintf("w%02d", i)}, Spec: cacheSpec{Image: "v1"}})
			require.NoError(t, err)
		}
		src := &expiringPages{st: st}
		c := cache.New(src, cache.WithPageSize(3), cache.WithRelistPeriod(0), cache.WithRelistBackoff(fixedBackoff))
		var hold atomic.Bool
		release := make(chan struct{})
		c.AddHandler(func(_, _ *cobj) {
			if hold.Load() {
				<-release
			}
		})
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- c.Run(runCtx) }()

		syncCtx, syncCancel := context.WithTimeout(ctx, time.Minute)
		defer syncCancel()
		require.NoError(t, c.WaitForSync(syncCtx), "the first listing completes though its second page expires")
		require.Equal(t, n, c.Len())
		require.Equal(t, []int{3, 3, 0}, src.limits(), "a page of 3, the next (expired), then the whole kind in one page")

		// While a handler holds the Cache up: 3 windows of updates to w00,
		// w09 deleted and w10 created; the watch expires.
		hold.Store(true)
		for i := range 3 * window {
			o, err := st.Get(ctx, "w00")
			require.NoError(t, err)
			o.Spec.Image = fmt.Sprintf("v%d", i+2)
			_, err = w.Update(ctx, o)
			require.NoError(t, err)
		}
		_, err = w.Delete(ctx, "w09")
		require.NoError(t, err)
		_, err = w.Create(ctx, &cobj{Meta: store.Meta{Name: "w10"}, Spec: cacheSpec{Image: "v1"}})
		require.NoError(t, err)
		_, err = w.Create(ctx, &cobj{Meta: store.Meta{Name: "a00"}, Spec: cacheSpec{Image: "v1"}})
		require.NoError(t, err)
		src.expiring = func() { // a00, added by the first page, is deleted
			if _, err := w.Delete(ctx, "a00"); err != nil {
				t.Error(err)
			}
			src.expiring = nil
		}
		synctest.Wait()
		relists := c.Relists()
		hold.Store(false)
		close(release)
		time.Sleep(2 * time.Second) // the watch expires; the Cache relists after 1s
		synctest.Wait()
		require.Equal(t, relists+1, c.Relists(), "one relist, which completed")
		require.Equal(t, []int{3, 3, 0}, src.limits(), "a page of 3, the next (expired), then the whole kind in one page")
		require.Equal(t, mem.Revision(), c.Revision())
		o, ok := c.Get("w00")
		require.True(t, ok)
		require.Equal(t, fmt.Sprintf("v%d", 3*window+1), o.Spec.Image)
		_, ok = c.Get("w09")
		require.False(t, ok, "deleted while the Cache was blind")
		_, ok = c.Get("w10")
		require.True(t, ok, "created while the Cache was blind")
		_, ok = c.Get("a00")
		require.False(t, ok, "created while the Cache was blind, listed by the first page, deleted before the whole listing")
		require.Equal(t, n, c.Len())
		cancel()
		require.NoError(t, <-done)
	})
}
