package cache_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// The functions a Cache calls for its user (handlers, index functions, the
// error handler, a ListWatcher's List and Watch) run under recovery: a panic in one is logged at Error
// with the stack, passed to the error handler, counted in Panics, and the
// Cache goes on. Each test here covers one place.

// nilDeref is an error whose Error dereferences its receiver.
type nilDeref struct{ msg string }

func (e *nilDeref) Error() string { return e.msg }

// syncBuffer is a log destination safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A handler that panics (with a typed nil error, whose Error panics too)
// on every change: the other handlers still get every change, in order,
// and the Cache keeps following its source.
func TestHandlerThatPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs syncBuffer
		var errs []error
		var mu sync.Mutex
		src := newScripted(10, mkObj("a", "ua", 3, nil))
		c := cache.New(src, cache.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
			cache.WithErrorHandler(func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }))
		c.AddHandler(func(_, _ *cobj) {
			var e *nilDeref
			panic(e)
		})
		var rec recorder
		c.AddHandler(rec.handle)
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		w := <-src.streams
		a, _ := c.Get("a")
		w.send(evModified(a, mkObj("a", "ua", 11, nil)))
		synctest.Wait()
		require.NoError(t, c.WaitFor(t.Context(), 11))
		require.Equal(t, []string{"add a@3", "mod a@3->11"}, rec.take(), "the next handler got every change")
		require.Equal(t, int64(2), c.Panics())
		require.Contains(t, logs.String(), `level=ERROR msg="cache: handler panicked" handler=0`)
		mu.Lock()
		require.Len(t, errs, 2)
		require.ErrorContains(t, errs[0], "cache: handler 0 panicked: *cache_test.nilDeref")
		mu.Unlock()
		// A handler added late replays under recovery too.
		c.AddHandler(func(_, _ *cobj) { panic("late") })
		require.Equal(t, int64(3), c.Panics())
	})
}

// An index function that panics on one object: that object is filed under
// no value (and taken out of the values it was filed under), the others
// are indexed, and the Cache goes on.
func TestIndexFuncThatPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs syncBuffer
		src := newScripted(10, mkObj("a", "ua", 3, nil), mkObj("b", "ub", 4, nil))
		c := cache.New(src, cache.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		byImage := func(o *cobj) []string {
			if o.Spec.Image == "bad" {
				panic("index")
			}
			return []string{"img:" + o.Spec.Image}
		}
		require.NoError(t, c.AddIndex("image", byImage))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		require.Equal(t, []string{"a", "b"}, objNames(c.ByIndex("image", "img:")))

		w := <-src.streams
		a, _ := c.Get("a")
		bad := mkObj("a", "ua", 11, nil)
		bad.Spec.Image = "bad"
		w.send(evModified(a, bad))
		synctest.Wait()
		require.NoError(t, c.WaitFor(t.Context(), 11))
		got, _ := c.Get("a")
		require.Equal(t, "bad", got.Spec.Image, "the Cache holds the change")
		require.Equal(t, []string{"b"}, objNames(c.ByIndex("image", "img:")), "a left its old value")

		// The old value panics now: a is taken out of every value anyway.
		good := mkObj("a", "ua", 12, nil)
		good.Spec.Image = "nginx"
		w.send(evModified(bad, good))
		synctest.Wait()
		require.NoError(t, c.WaitFor(t.Context(), 12))
		require.Equal(t, []string{"a"}, objNames(c.ByIndex("image", "img:nginx")))
		require.Equal(t, int64(2), c.Panics())
		require.Equal(t, 2, strings.Count(logs.String(), `level=ERROR msg="cache: index function panicked" index=image object=a`))

		// An index added over the contents with a function that panics.
		require.NoError(t, c.AddIndex("panics", func(*cobj) []string { panic("always") }))
		require.Equal(t, int64(4), c.Panics())
	})
}

// An error handler that panics: logged and counted, and the Cache relists
// as it would have.
func TestErrorHandlerThatPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScripted(10, mkObj("a", "ua", 3, nil))
		c := cache.New(src, cache.WithErrorHandler(func(error) { panic("onError") }))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		w := <-src.streams
		w.send(evExpired(10))
		w = <-src.streams // the relist's watch: Run went on
		require.Equal(t, int64(1), c.Panics())
		require.Equal(t, int64(1), c.Relists())
		_ = w
	})
}

// panickySource panics in its first List and its first Watch.
type panickySource struct {
	*scriptedSource
	lists, watches atomic.Int32
}

func (s *panickySource) List(ctx context.Context, opts store.ListOptions) (*store.List[cacheSpec, cacheStatus], error) {
	if s.lists.Add(1) == 1 {
		panic("List")
	}
	return s.scriptedSource.List(ctx, opts)
}

func (s *panickySource) Watch(ctx context.Context, from int64) (<-chan store.Event[cacheSpec, cacheStatus], error) {
	if s.watches.Add(1) == 1 {
		var e *nilDeref
		panic(e)
	}
	return s.scriptedSource.Watch(ctx, from)
}

// A ListWatcher (a user's wrapper) whose List or Watch panics fails like
// one that returned an error: reported, and retried with the relist
// backoff.
func TestListWatcherThatPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &panickySource{scriptedSource: newScripted(10, mkObj("a", "ua", 3, nil))}
		errs := make(chan error, 10)
		c := cache.New(src, cache.WithErrorHandler(func(err error) { errs <- err }))
		stop := startCache(t, c)
		defer stop()
		require.ErrorContains(t, <-errs, "cache: list: panicked: string: List")
		require.ErrorContains(t, <-errs, "cache: watch from revision 10: panicked: *cache_test.nilDeref")
		require.NoError(t, c.WaitForSync(t.Context()))
		<-src.streams // the second Watch
		_, ok := c.Get("a")
		require.True(t, ok)
		require.Equal(t, int64(2), c.Panics())
	})
}
