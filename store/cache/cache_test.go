package cache_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// fixedBackoff makes relist delays exact: 1s, 2s, 4s, ... up to 1m.
var fixedBackoff = backoff.Policy{Base: time.Second, Factor: 2, Cap: time.Minute}

// startCache runs c until the returned stop is called; stop checks that Run
// returned nil.
func startCache(t *testing.T, c *cache.Cache[cacheSpec, cacheStatus]) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	return func() {
		cancel()
		require.NoError(t, <-done)
	}
}

// recorder collects handler calls as "add a@3", "mod a@3->5", "del a@5".
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) handle(old, new *cobj) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case old == nil:
		r.calls = append(r.calls, fmt.Sprintf("add %s@%d", new.Meta.Name, new.Meta.Revision))
	case new == nil:
		r.calls = append(r.calls, fmt.Sprintf("del %s@%d", old.Meta.Name, old.Meta.Revision))
	default:
		r.calls = append(r.calls, fmt.Sprintf("mod %s@%d->%d", new.Meta.Name, old.Meta.Revision, new.Meta.Revision))
	}
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

func objNames(objs []*cobj) []string {
	out := []string{}
	for _, o := range objs {
		out = append(out, o.Meta.Name)
	}
	return out
}

func TestCacheListsThenWatchesFromTheListRevision(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScripted(10, mkObj("a", "ua", 3, nil), mkObj("b", "ub", 5, nil), mkObj("c", "uc", 7, nil))
		c := cache.New(src, cache.WithPageSize(2), cache.WithMutationDetector(func(err error) { t.Error(err) }))
		var rec recorder
		c.AddHandler(rec.handle)
		require.False(t, c.HasSynced())
		stop := startCache(t, c)
		defer stop()

		require.NoError(t, c.WaitForSync(t.Context()))
		require.True(t, c.HasSynced())
		require.Equal(t, int64(10), c.Revision())
		require.Equal(t, []string{"a", "b", "c"}, c.Keys())
		require.Equal(t, 2, src.listCount(), "three objects in pages of two")
		require.Equal(t, []string{"add a@3", "add b@5", "add c@7"}, rec.take())

		w := <-src.streams
		require.Equal(t, int64(10), w.from, "the watch starts at the list revision")

		a, _ := c.Get("a")
		a2 := mkObj("a", "ua", 11, map[string]string{"app": "web"})
		w.send(evModified(a, a2))
		w.send(evAdded(mkObj("d", "ud", 12, nil)))
		b, _ := c.Get("b")
		w.send(evDeleted(b, 13))
		w.send(evProgress(20))
		synctest.Wait()

		require.Equal(t, []string{"mod a@3->11", "add d@12", "del b@5"}, rec.take())
		require.Equal(t, int64(20), c.Revision(), "a progress event advances the revision")
		got, ok := c.Get("a")
		require.True(t, ok)
		require.Same(t, a2, got, "the cache serves the watched object itself")
		_, ok = c.Get("b")
		require.False(t, ok)
		require.Equal(t, []string{"a", "c", "d"}, objNames(c.List(nil)))
		require.Equal(t, []string{"a"}, objNames(c.List(labelIs{"app", "web"})))
		require.Equal(t, 3, c.Len())
	})
}

// labelIs is a one-label selector for tests.
type labelIs struct{ k, v string }

func (l labelIs) Matches(labels map[string]string) bool { return labels[l.k] == l.v }
func (l labelIs) String() string                        { return l.k + "=" + l.v }

func TestCacheRelistEmitsWhatChangedWhileBlind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScripted(10,
			mkObj("a", "ua", 3, nil), mkObj("b", "ub", 4, nil), mkObj("c", "uc", 5, nil), mkObj("e", "ue", 6, nil))
		c := cache.New(src, cache.WithRelistBackoff(fixedBackoff),
			cache.WithMutationDetector(func(err error) { t.Error(err) }))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		var rec recorder
		c.AddHandler(rec.handle)
		rec.take()
		eBefore, _ := c.Get("e")
		w := <-src.streams

		// While the cache is blind: a is modified, b deleted, c deleted and
		// recreated (new UID), d added, e untouched.
		src.set(30, mkObj("a", "ua", 21, nil), mkObj("c", "uc2", 23, nil), mkObj("d", "ud", 24, nil), mkObj("e", "ue", 6, nil))
		start := time.Now()
		w.send(evExpired(10))
		w2 := <-src.streams
		require.Equal(t, time.Second, time.Since(start), "the first relist waits Delay(0) of the backoff")
		require.Equal(t, int64(30), w2.from, "the new watch starts at the relist's revision")

		require.Equal(t, []string{"del b@4", "del c@5", "mod a@3->21", "add c@23", "add d@24"}, rec.take(),
			"deletions first, then changes, each in name order; a recreated object is a delete and an add")
		require.Equal(t, []string{"a", "c", "d", "e"}, c.Keys())
		require.Equal(t, int64(30), c.Revision())
		eAfter, _ := c.Get("e")
		require.Same(t, eBefore, eAfter, "an unchanged object keeps its cached value")
	})
}

func TestCacheRelistsAfterABrokenWatchWithGrowingBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScripted(10, mkObj("a", "ua", 3, nil))
		c := cache.New(src, cache.WithRelistBackoff(fixedBackoff))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		w := <-src.streams

		src.failLists(errors.New("backend down"))
		start := time.Now()
		close(w.ch) // the watch breaks without an error event
		// Lists fail at 1s, then 1+2=3s, then 3+4=7s after the break.
		for _, at := range []time.Duration{time.Second, 3 * time.Second, 7 * time.Second} {
			time.Sleep(at - time.Since(start) - time.Millisecond)
			synctest.Wait()
			before := src.listCount()
			time.Sleep(time.Millisecond)
			synctest.Wait()
			require.Equal(t, before+1, src.listCount(), "a relist at %v", at)
		}
		a, ok := c.Get("a")
		require.True(t, ok, "a failing relist keeps the last contents")
		require.Equal(t, int64(3), a.Meta.Revision)

		src.failLists(nil)
		src.set(40, mkObj("a", "ua", 33, nil))
		w2 := <-src.streams
		require.Equal(t, int64(40), w2.from)
		w2.send(evProgress(41))
		synctest.Wait()
		// A watch that delivered something resets the backoff: next relist
		// after 1s again.
		start = time.Now()
		w2.send(evExpired(41))
		<-src.streams
		require.Equal(t, time.Second, time.Since(start))
	})
}

func TestCacheWaitFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScripted(10, mkObj("a", "ua", 3, nil))
		c := cache.New(src)
		stop := startCache(t, c)
		defer stop()

		require.NoError(t, c.WaitFor(t.Context(), 0), "revision 0 needs nothing")
		require.NoError(t, c.WaitFor(t.Context(), 10), "the listing reflects 10")
		w := <-src.streams

		done := make(chan error, 1)
		go func() { done <- c.WaitFor(t.Context(), 15) }()
		w.send(evAdded(mkObj("b", "ub", 12, nil)))
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("WaitFor(15) returned %v at revision 12", err)
		default:
		}
		w.send(evProgress(15))
		require.NoError(t, <-done, "a progress event reaching 15 releases the waiter")

		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		require.ErrorIs(t, c.WaitFor(ctx, 100), context.DeadlineExceeded)
		require.Zero(t, c.Waiters(), "a WaitFor whose ctx ended leaves nothing behind")

		// Waiters at several revisions are released in revision order,
		// each once the Cache reaches its own.
		released := make(chan int64, 3)
		for _, rev := range []int64{30, 20, 25} {
			go func() {
				require.NoError(t, c.WaitFor(t.Context(), rev))
				released <- rev
			}()
		}
		synctest.Wait()
		require.Equal(t, 3, c.Waiters())
		w.send(evProgress(22))
		require.Equal(t, int64(20), <-released)
		synctest.Wait()
		require.Empty(t, released, "25 and 30 still wait at 22")
		w.send(evProgress(30))
		require.ElementsMatch(t, []int64{25, 30}, []int64{<-released, <-released})
		require.Zero(t, c.Waiters())
	})
}

// brokenClock is a clock whose nil pointer panics when read.
type brokenClock struct{ clock.Real }

func TestCacheRunContract(t *testing.T) {
	t.Run("nil source", func(t *testing.T) {
		c := cache.New[cacheSpec, cacheStatus](nil)
		require.ErrorIs(t, c.Run(t.Context()), store.ErrInvalid)
	})
	t.Run("typed nil source", func(t *testing.T) {
		// A nil *Store passed the nil check and panicked in Run.
		c := cache.New[cacheSpec, cacheStatus]((*store.Store[cacheSpec, cacheStatus])(nil))
		require.ErrorIs(t, c.Run(t.Context()), store.ErrInvalid)
	})
	t.Run("bad options", func(t *testing.T) {
		for _, opt := range []cache.Option{
			cache.WithPageSize(-1),
			cache.WithRelistBackoff(backoff.Policy{}),
			cache.WithRelistPeriod(-time.Second),
			cache.WithClock((*brokenClock)(nil)), // a typed nil: it would panic in the relist backoff
		} {
			c := cache.New(newScripted(1), opt)
			require.ErrorIs(t, c.Run(t.Context()), store.ErrInvalid)
		}
	})
	t.Run("second Run", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := cache.New(newScripted(1))
			stop := startCache(t, c)
			require.NoError(t, c.WaitForSync(t.Context()))
			require.ErrorIs(t, c.Run(t.Context()), cache.ErrRunning)
			stop()
			require.Equal(t, int64(1), c.Revision(), "after Run ends the cache keeps serving")
		})
	})
	t.Run("WaitForSync on cancellation", func(t *testing.T) {
		c := cache.New(newScripted(1))
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		require.ErrorIs(t, c.WaitForSync(ctx), context.Canceled)
	})
}

func TestCacheHandlerAddedLateReplaysCurrentObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScripted(10, mkObj("b", "ub", 4, nil), mkObj("a", "ua", 3, nil))
		c := cache.New(src)
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		var rec recorder
		c.AddHandler(rec.handle)
		c.AddHandler(nil) // ignored
		require.Equal(t, []string{"add a@3", "add b@4"}, rec.take())
		w := <-src.streams
		a, _ := c.Get("a")
		w.send(evDeleted(a, 11))
		synctest.Wait()
		require.Equal(t, []string{"del a@3"}, rec.take())
	})
}

func TestCacheGetDoesNotAllocate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cache.New(newScripted(10, mkObj("a", "ua", 3, nil)))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		allocs := testing.AllocsPerRun(100, func() {
			if _, ok := c.Get("a"); !ok {
				t.Fatal("a missing")
			}
		})
		require.Zero(t, allocs)
	})
}

func TestCacheReportsWhyItRelists(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScripted(10)
		errs := make(chan error, 10)
		c := cache.New(src, cache.WithErrorHandler(func(err error) { errs <- err }))
		require.ErrorIs(t, c.LastError(), cache.ErrNotRunning, "not run yet")
		stop := startCache(t, c)
		defer stop()
		synctest.Wait()
		require.NoError(t, c.LastError(), "nothing has failed yet")

		w := <-src.streams
		w.send(evExpired(10))
		require.ErrorIs(t, <-errs, store.ErrExpired)
		require.ErrorIs(t, c.LastError(), store.ErrExpired, "LastError keeps the last one")

		w = <-src.streams
		close(w.ch)
		require.ErrorContains(t, <-errs, "without an error event")

		w = <-src.streams
		src.failLists(errors.New("backend down"))
		close(w.ch)
		<-errs
		require.ErrorContains(t, <-errs, "backend down")
	})
}
