package queue_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/queue"
	"github.com/stretchr/testify/require"
)

// recorder keeps every measurement a queue reports.
type recorder struct {
	mu                  sync.Mutex
	depths              []int
	added, retries      int
	latencies, works    []time.Duration
	unfinished, longest time.Duration
	reports             int
}

func (r *recorder) Depth(n int) { r.mu.Lock(); r.depths = append(r.depths, n); r.mu.Unlock() }
func (r *recorder) Added()      { r.mu.Lock(); r.added++; r.mu.Unlock() }
func (r *recorder) Retry()      { r.mu.Lock(); r.retries++; r.mu.Unlock() }
func (r *recorder) QueueLatency(d time.Duration) {
	r.mu.Lock()
	r.latencies = append(r.latencies, d)
	r.mu.Unlock()
}
func (r *recorder) WorkDuration(d time.Duration) {
	r.mu.Lock()
	r.works = append(r.works, d)
	r.mu.Unlock()
}
func (r *recorder) Unfinished(total, longest time.Duration) {
	r.mu.Lock()
	r.unfinished, r.longest = total, longest
	r.reports++
	r.mu.Unlock()
}

func (r *recorder) snapshot() recorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	return recorder{
		depths: append([]int(nil), r.depths...), added: r.added, retries: r.retries,
		latencies: append([]time.Duration(nil), r.latencies...), works: append([]time.Duration(nil), r.works...),
		unfinished: r.unfinished, longest: r.longest, reports: r.reports,
	}
}

func TestMetricsHooksReportEveryMeasurement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
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
		got := r.snapshot()
		require.Equal(t, []int{1, 2, 1, 0, 1, 0}, got.depths)
		require.Equal(t, 3, got.added)
		require.Equal(t, []time.Duration{time.Second, 3 * time.Second, 0}, got.latencies)
		require.Equal(t, []time.Duration{2 * time.Second}, got.works)
		require.Equal(t, 7, got.reports, "every 500ms")
		require.Equal(t, 750*time.Millisecond, got.unfinished, "b for 500ms plus c for 250ms")
		require.Equal(t, 500*time.Millisecond, got.longest)

		q.Done(b)
		q.Done(c)
		q.AddRateLimited("a")
		q.AddRateLimited("a")
		require.Equal(t, 2, r.snapshot().retries)
		require.Equal(t, 3, r.snapshot().added, "a delayed add counts when it becomes ready")
		time.Sleep(time.Second)
		require.Equal(t, 1, q.Len())
		require.Equal(t, 4, r.snapshot().added)

		q.ShutDown() // ends the reporting goroutine before returning
		reports := r.snapshot().reports
		time.Sleep(time.Hour)
		require.Equal(t, reports, r.snapshot().reports)
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

// countingClock is the real clock, counting calls of Now.
type countingClock struct {
	clock.Real
	nows atomic.Int64
}

func (c *countingClock) Now() time.Time { c.nows.Add(1); return c.Real.Now() }

func TestTimestampsAreTakenOnlyWhenHooksAreSet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, withHooks := range []bool{false, true} {
			c := &countingClock{}
			opts := []queue.Option{queue.WithClock(c)}
			if withHooks {
				opts = append(opts, queue.WithMetrics(queue.NopMetrics{}))
			}
			q := queue.New[string](opts...)
			c.nows.Store(0)
			for range 10 {
				q.Add("a")
				q.AddLow("b")
				k, _ := q.Get(context.Background())
				q.Done(k)
				k, _ = q.Get(context.Background())
				q.Done(k)
			}
			if withHooks {
				require.Positive(t, c.nows.Load())
			} else {
				require.Zero(t, c.nows.Load(), "no clock read without hooks")
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
			queue.WithClock((*countingClock)(nil)), queue.WithMetrics((*recorder)(nil)))
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
