package reconcile

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// A kind that appears later: its source and cache are added to the running
// Loop, hint it, and stop, every goroutine with them, when removed.
func TestAddSourceToARunningLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}})
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, FromStore(e.cache, e.st), WithFieldManager("app"), WithResync(time.Hour, 0))
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"))

		parts, err := store.New[appSpec, appStatus](e.b, "Part")
		require.NoError(t, err)
		before := goleak.IgnoreCurrent()
		partCache := cache.New[appSpec, appStatus](parts)
		byApp := func(o *app) []string { return []string{o.Meta.Labels["app"]} }
		remove, err := l.AddSource(FromCacheMapped(partCache, byApp), partCache)
		require.NoError(t, err)

		_, err = parts.As("user").Create(t.Context(), &app{Meta: store.Meta{Name: "p1", Labels: map[string]string{"app": "a"}}})
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 2, s.count("a"), "the added source's hint")

		remove()
		remove() // again: nothing
		require.NoError(t, goleak.Find(before), "removing stopped the source's and its cache's goroutines")
		_, err = parts.As("user").Create(t.Context(), &app{Meta: store.Meta{Name: "p2", Labels: map[string]string{"app": "a"}}})
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 2, s.count("a"), "no hint after remove")
		require.NoError(t, stop())
	})
}

// A source added before Run starts with it, queues its keys once when
// synced, and stops when Run returns.
func TestAddSourceBeforeRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, nil)
		hints := make(chan string)
		_, err := l.AddSource(Sources(FromChannel(hints), keySet("k1", "k2")))
		require.NoError(t, err)
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, s.count("k1"), "a keyLister's keys are queued once")
		require.Equal(t, 1, s.count("k2"))
		hints <- "k3"
		synctest.Wait()
		require.Equal(t, 1, s.count("k3"))
		require.NoError(t, stop())
		_, err = l.AddSource(FromChannel(hints))
		require.ErrorIs(t, err, ErrInvalidOption, "after Run returned")
	})
}

// Misuse: nil sources and caches, a ConditionWriter, a failing or panicking
// source: refused, or logged and stopped while the Loop goes on.
func TestAddSourceMisuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		var logs logBuffer
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, nil, WithLogger(newLogger(&logs)))
		stop := start(t, l)
		synctest.Wait()

		_, err := l.AddSource(nil)
		require.ErrorIs(t, err, ErrInvalidOption)
		var nilFunc SourceFunc[string]
		_, err = l.AddSource(nilFunc)
		require.ErrorIs(t, err, ErrInvalidOption)
		_, err = l.AddSource(FromChannel(make(chan string)), (*cache.Cache[appSpec, appStatus])(nil))
		require.ErrorIs(t, err, ErrInvalidOption)
		_, err = l.AddSource(FromStore(e.cache, e.st))
		require.ErrorContains(t, err, "ConditionWriter")
		_, err = l.AddSource(FromOwned(e.cache, ""))
		require.ErrorIs(t, err, ErrInvalidOption)

		failing := SourceFunc[string](func(ctx context.Context, sink Sink[string]) error {
			sink.Add("x")
			return errors.New("gone")
		})
		panicking := SourceFunc[string](func(context.Context, Sink[string]) error { panic("source") })
		for _, src := range []Source[string]{failing, panicking} {
			remove, err := l.AddSource(src)
			require.NoError(t, err)
			synctest.Wait()
			remove()
		}
		require.Equal(t, 1, s.count("x"))
		require.Contains(t, logs.String(), `level=ERROR msg="added source failed"`)
		require.Contains(t, logs.String(), `error=gone`)
		require.Contains(t, logs.String(), `level=ERROR msg="Source panicked"`)

		hints := make(chan string)
		_, err = l.AddSource(FromChannel(hints))
		require.NoError(t, err)
		hints <- "y"
		synctest.Wait()
		require.Equal(t, 1, s.count("y"), "the Loop went on")
		require.NoError(t, stop())
	})
}
