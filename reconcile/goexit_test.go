package reconcile

import (
	"context"
	"iter"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/guard"
)

// A reconcile that calls runtime.Goexit (as t.FailNow, t.Fatal or
// t.SkipNow do when a test's reconciler calls them): no recover stops it,
// and it used to end the worker's goroutine for good with its key in
// hand, never Done: the key was lost (its next hint only marked it dirty)
// and the Loop had one worker less; with one worker it did nothing more.
// Now the key is finished as after a panic (logged loudly, counted,
// retried with backoff), and a new worker takes the dead one's place:
// the other keys run, the key runs again, and the Loop stops cleanly
// (goleak checks in TestMain). Each way a worker runs a reconcile: bare,
// with metrics (stamped) and wrapped (a timeout, counted active workers).
func TestReconcileThatCallsGoexit(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts func(*MemMetrics) []Option
	}{
		{"bare", func(*MemMetrics) []Option { return nil }},
		{"metrics", func(m *MemMetrics) []Option { return []Option{WithMetrics(m)} }},
		{"timeout and metrics", func(m *MemMetrics) []Option { return []Option{WithMetrics(m), WithTimeout(time.Minute)} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs logBuffer
				m := NewMemMetrics()
				s := newScript(func(key string, n int) (Result, error) {
					if key == "a" && n < 2 {
						runtime.Goexit()
					}
					return Result{}, nil
				})
				opts := append(fixedBackoff(), WithWorkers(1), WithLogger(newLogger(&logs)))
				l := mustNew(t, s, keySet("a", "b", "c"), append(opts, tt.opts(m)...)...)
				stop := start(t, l)
				synctest.Wait()
				require.Equal(t, 1, s.count("a"))
				require.Equal(t, 1, s.count("b"), "the one worker was replaced")
				require.Equal(t, 1, s.count("c"))
				info := l.Inspect("a")
				require.Equal(t, 1, info.Failures)
				require.ErrorContains(t, info.Err, "runtime.Goexit called")
				require.ErrorIs(t, info.Err, guard.ErrGoexit, "the Value guard.CallIsolated gives a Goexit")
				require.Equal(t, PhaseBackingOff, info.Phase)
				time.Sleep(time.Second) // the first backoff
				synctest.Wait()
				require.Equal(t, 2, s.count("a"), "retried after 1s")
				time.Sleep(2 * time.Second) // the second
				synctest.Wait()
				require.Equal(t, 3, s.count("a"), "retried after 2s, and succeeded")
				require.Zero(t, l.Inspect("a").Failures)
				l.Add("b")
				synctest.Wait()
				require.Equal(t, 2, s.count("b"))
				require.NoError(t, stop())
				out := logs.String()
				require.Equal(t, 2, strings.Count(out, `level=ERROR msg="reconcile called runtime.Goexit: its worker is replaced, and the key is retried as after a panic" controller=test key=a`), out)
				require.Contains(t, out, "goexit_test.go:", "with the stack")
				if tt.name != "bare" {
					require.Equal(t, 2, m.Panics("test"))
					require.Zero(t, m.ActiveWorkersNow("test"), "no worker left counted active")
				}
			})
		})
	}
}

// A reconcile that calls runtime.Goexit as the Loop stops: as for a
// reconcile cut short, the key takes no failure (so no retry with
// backoff), and Run returns at once.
func TestReconcileThatCallsGoexitAsTheLoopStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		s := scriptFunc(func(ctx context.Context, key string) (Result, error) {
			<-ctx.Done()
			<-release
			runtime.Goexit()
			return Result{}, nil
		})
		l := mustNew(t, s, keySet("a"), WithWorkers(2), WithLogger(newLogger(&logBuffer{})))
		stop := start(t, l)
		synctest.Wait()
		done := make(chan error)
		go func() { done <- stop() }()
		synctest.Wait()
		close(release)
		require.NoError(t, <-done)
		require.Equal(t, 1, s.count("a"))
		info := l.Inspect("a")
		require.Zero(t, info.Failures, "cut short by the stop: not a failure, so no retry with backoff")
		require.NoError(t, info.Err)
	})
}

// goexitSource is a Source whose Run calls runtime.Goexit.
type goexitSource struct{}

func (goexitSource) Run(context.Context, Sink[string]) error {
	runtime.Goexit()
	return nil
}

// A Source whose Run calls runtime.Goexit: it used to end the source's
// goroutine without a word, and the Loop ran on without that source's
// hints (Sources' Run, and a stop of Loop.AddSource, waited for it for
// ever). Now it fails like a Run that panicked: reported, and Run ends
// with the error; and Sources' Run returns it.
func TestSourceThatCallsGoexit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, Sources(keySet("a"), goexitSource{}), WithLogger(newLogger(&logs)))
		done := make(chan error, 1)
		go func() { done <- l.Run(t.Context()) }()
		synctest.Wait()
		select {
		case err := <-done:
			require.ErrorContains(t, err, "source 1")
			require.ErrorContains(t, err, "runtime.Goexit called")
		default:
			t.Fatal("Run goes on without its source")
		}
		require.Contains(t, logs.String(), `level=ERROR msg="Source panicked"`)

		err := Sources[string](keySet("a"), goexitSource{}).Run(t.Context(), l)
		require.ErrorContains(t, err, "runtime.Goexit called")
	})
}

// goexitCache is a cache for AddSource whose Run calls runtime.Goexit.
type goexitCache struct{}

func (goexitCache) Run(context.Context) error {
	runtime.Goexit()
	return nil
}

// An added source, or an added source's cache, whose Run calls
// runtime.Goexit fails like one that panicked: logged, stopped, and the
// Loop goes on; remove and the Loop's Run return (remove used to wait for
// the source's Run for ever).
func TestAddedSourceThatCallsGoexit(t *testing.T) {
	for _, tt := range []struct {
		name   string
		src    Source[string]
		caches []interface{ Run(context.Context) error }
		want   string
	}{
		{"source", goexitSource{}, nil, `level=ERROR msg="added source failed"`},
		{"cache", keySet("b"), []interface{ Run(context.Context) error }{goexitCache{}}, `level=ERROR msg="added source's cache failed"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs logBuffer
				s := newScript(func(string, int) (Result, error) { return Result{}, nil })
				l := mustNew(t, s, keySet("a"), WithLogger(newLogger(&logs)))
				stop := start(t, l)
				synctest.Wait()
				remove, err := l.AddSource(tt.src, tt.caches...)
				require.NoError(t, err)
				synctest.Wait()
				remove()
				l.Add("a")
				synctest.Wait()
				require.Equal(t, 2, s.count("a"), "the Loop goes on")
				require.NoError(t, stop())
				require.Contains(t, logs.String(), tt.want)
				require.Contains(t, logs.String(), "runtime.Goexit called")
			})
		})
	}
}

// A key lister that calls runtime.Goexit at a resync: it used to end the
// resync goroutine without a word, and no key was resynced again. Now the
// pass ends, reported, and the next resync runs.
func TestKeyListerThatCallsGoexitAtResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		var lists atomic.Int32
		keys := Keys(func() iter.Seq[string] {
			return func(yield func(string) bool) {
				if lists.Add(1) == 2 { // the first resync's listing
					runtime.Goexit()
				}
				yield("a")
			}
		})
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, keys, WithResync(time.Minute, 0), WithLogger(newLogger(&logs)))
		stop := start(t, l)
		time.Sleep(3*time.Minute + time.Second)
		synctest.Wait()
		require.NoError(t, stop())
		require.Equal(t, 3, s.count("a"), "at the start, and at the 2nd and 3rd resyncs")
		require.Contains(t, logs.String(), `level=ERROR msg="resync (a key lister?) panicked"`)
		require.Contains(t, logs.String(), "runtime.Goexit called")
	})
}

// goexitWaiter is a Source listing "a" that can wait for a revision, and
// whose WaitFor calls runtime.Goexit.
type goexitWaiter struct{}

func (goexitWaiter) Run(ctx context.Context, _ Sink[string]) error { <-ctx.Done(); return nil }
func (goexitWaiter) Keys() iter.Seq[string]                        { return slices.Values([]string{"a"}) }
func (goexitWaiter) Revision() int64                               { return 0 }
func (goexitWaiter) WaitFor(context.Context, int64) error {
	runtime.Goexit()
	return nil
}

// A RequeueAfterWrite whose wait for the source's revision ends by a
// runtime.Goexit in the source's WaitFor: it used to end the wait's
// goroutine with the key, which was lost until the next hint or resync.
// Now it is reported, and the key runs again, marked for a fresh read, as
// after a WaitFor that failed.
func TestWaitForThatCallsGoexit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		var s *script
		var fresh atomic.Bool
		s = scriptFunc(func(ctx context.Context, key string) (Result, error) {
			if s.count(key) > 1 {
				fresh.Store(FreshReadNeeded(ctx))
				return Result{}, nil
			}
			RecordWrite(ctx, 5)
			return Result{RequeueAfterWrite: true}, nil
		})
		l := mustNew(t, s, goexitWaiter{}, append(fixedBackoff(), WithLogger(newLogger(&logs)))...)
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 2, s.count("a"), "the key ran again")
		require.True(t, fresh.Load(), "marked for a fresh read")
		require.NoError(t, stop())
		require.Contains(t, logs.String(), `level=ERROR msg="revisionWaiter.WaitFor panicked"`)
		require.Contains(t, logs.String(), "runtime.Goexit called")
	})
}
