package queue_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/internal/queuetest"
	"github.com/steady-go/steady/queue"
	"github.com/stretchr/testify/require"
)

func TestMetricsHooksReportEveryMeasurement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &queuetest.Recorder{}
		q := queue.NewRateLimited[string](&fixedLimiter{d: time.Second},
			queue.WithMetrics(r), queue.WithName("things"))
		require.Equal(t, "things", q.Name())
		ctx := context.Background()

		q.Add("a")
		q.Add("a") // deduplicated: not an add
		q.Add("b")
		time.Sleep(time.Second)
		a, _ := q.Get(ctx)
		time.Sleep(2 * time.Second)
		q.Done(a)
		b, _ := q.Get(ctx) // at 3s
		time.Sleep(250 * time.Millisecond)
		q.Add("c")
		c, _ := q.Get(ctx)                 // at 3.25s
		time.Sleep(300 * time.Millisecond) // past the 3.5s report
		got := r.Snapshot()
		require.Equal(t, []int{1, 2, 1, 0, 1, 0}, got.Depths)
		require.Equal(t, 3, got.Added)
		require.Equal(t, []time.Duration{time.Second, 3 * time.Second, 0}, got.Latencies)
		require.Equal(t, []time.Duration{2 * time.Second}, got.Works)
		require.Equal(t, 7, got.Reports, "every 500ms")
		require.Equal(t, 750*time.Millisecond, got.Unfinished, "b for 500ms plus c for 250ms")
		require.Equal(t, 500*time.Millisecond, got.Longest)

		q.Done(b)
		q.Done(c)
		q.AddRateLimited("a")
		q.AddRateLimited("a")
		require.Equal(t, 2, r.Snapshot().Retries)
		require.Equal(t, 3, r.Snapshot().Added, "a delayed add counts when it becomes ready")
		time.Sleep(time.Second)
		require.Equal(t, 1, q.Len())
		require.Equal(t, 4, r.Snapshot().Added)

		q.ShutDown() // ends the reporting goroutine before returning
		reports := r.Snapshot().Reports
		time.Sleep(time.Hour)
		require.Equal(t, reports, r.Snapshot().Reports)
	})
}

func TestNopMetricsCanBeEmbedded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var retries atomic.Int32
		q := queue.New[string](queue.WithMetrics(retryCounter{n: &retries}))
		defer q.ShutDown()
		q.AddRateLimited("a")
		require.Equal(t, int32(1), retries.Load())
	})
}

type retryCounter struct {
	queue.NopMetrics
	n *atomic.Int32
}

func (c retryCounter) Retry() { c.n.Add(1) }

func TestTimestampsAreTakenOnlyWhenHooksAreSet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, withHooks := range []bool{false, true} {
			c := &queuetest.CountingClock{}
			opts := []queue.Option{queue.WithClock(c)}
			if withHooks {
				opts = append(opts, queue.WithMetrics(queue.NopMetrics{}))
			}
			q := queue.New[string](opts...)
			c.Nows.Store(0)
			for range 10 {
				q.Add("a")
				q.AddLow("b")
				k, _ := q.Get(context.Background())
				q.Done(k)
				k, _ = q.Get(context.Background())
				q.Done(k)
			}
			if withHooks {
				require.Positive(t, c.Nows.Load())
			} else {
				require.Zero(t, c.Nows.Load(), "no clock read without hooks")
			}
			q.ShutDown()
		}
	})
}

// New has no error result: a typed nil clock, metrics or limiter (a nil
// pointer behind the interface) means what nil means, the default, instead
// of a panic at the first Add.
func TestTypedNilsMeanTheDefaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.NewRateLimited[string]((*backoff.PerKey[string])(nil),
			queue.WithClock((*queuetest.CountingClock)(nil)), queue.WithMetrics((*queuetest.Recorder)(nil)))
		defer q.ShutDown()
		q.Add("a")
		k, ok := q.Get(t.Context())
		require.True(t, ok)
		require.Equal(t, "a", k)
		q.AddRateLimited("a")
		q.Done("a")
		require.Equal(t, 1, q.NumRequeues("a"), "the queue's own failure counts")
	})
}

// panickyUnfinished is a hook set whose Unfinished panics.
type panickyUnfinished struct {
	queue.NopMetrics
	calls atomic.Int32
}

func (m *panickyUnfinished) Unfinished(total, longest time.Duration) {
	m.calls.Add(1)
	panic("Unfinished")
}

// Unfinished is the one hook the queue calls from a goroutine of its own
// (every UnfinishedInterval). One that panics is logged and not called
// again; it does not crash the process, and the queue works on.
func TestUnfinishedHookThatPanicsIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &panickyUnfinished{}
		q := queue.New[string](queue.WithMetrics(m))
		defer q.ShutDown()
		q.Add("a")
		k, _ := q.Get(context.Background())
		time.Sleep(5 * queue.UnfinishedInterval)
		synctest.Wait()
		require.Equal(t, int32(1), m.calls.Load(), "called once, then dropped")
		q.Done(k)
		q.Add("b")
		k, _ = q.Get(context.Background())
		require.Equal(t, "b", k)
		q.Done(k)
	})
}

// panickyHooks is a hook set whose method named panics panics. It counts
// the panics in boomed, and in late the calls of any method after one.
type panickyHooks struct {
	panics       string
	boomed, late atomic.Int32
}

func (m *panickyHooks) call(name string) {
	if m.boomed.Load() > 0 {
		m.late.Add(1)
	}
	if name == m.panics {
		m.boomed.Add(1)
		panic(name)
	}
}
func (m *panickyHooks) Depth(int)                               { m.call("Depth") }
func (m *panickyHooks) Added()                                  { m.call("Added") }
func (m *panickyHooks) QueueLatency(time.Duration)              { m.call("QueueLatency") }
func (m *panickyHooks) WorkDuration(time.Duration)              { m.call("WorkDuration") }
func (m *panickyHooks) Unfinished(total, longest time.Duration) { m.call("Unfinished") }
func (m *panickyHooks) Retry()                                  { m.call("Retry") }

// Most hooks run with the queue's lock held. One that panics must neither
// escape into the caller (Add, Get, Done, AddRateLimited, ShutDown) nor
// leave the lock held: the queue logs the panic once, calls none of that
// Metrics' hooks again, and works on.
func TestHooksThatPanicAreDropped(t *testing.T) {
	for _, hook := range []string{"Depth", "Added", "QueueLatency", "WorkDuration", "Unfinished", "Retry"} {
		t.Run(hook, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				logs := captureErrors(t)
				m := &panickyHooks{panics: hook}
				q := queue.New[string](queue.WithMetrics(m))
				require.NotPanics(t, func() {
					for _, key := range []string{"a", "b", "c"} {
						q.Add(key)
						k, ok := q.Get(t.Context())
						require.True(t, ok)
						require.Equal(t, key, k)
						time.Sleep(2 * queue.UnfinishedInterval)
						q.AddRateLimited(k)
						q.Done(k)
						time.Sleep(time.Minute)
						k, ok = q.Get(t.Context())
						require.True(t, ok, "the retry is handed out")
						require.Equal(t, key, k)
						q.Forget(k)
						q.Done(k)
					}
					q.ShutDown()
				})
				require.Equal(t, int32(1), m.boomed.Load(), "%s: called until it panicked", hook)
				require.Zero(t, m.late.Load(), "no hook is called after one panicked")
				require.Equal(t, 0, q.Len())
				out := logs()
				require.Equal(t, 1, strings.Count(out, "\n"), "logged exactly once: %s", out)
				require.Contains(t, out, "level=ERROR msg=\"queue: metrics hook "+hook+" panicked; no hook of this queue is called again\" hook="+hook+" ")
			})
		})
	}
}
