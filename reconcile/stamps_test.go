package reconcile

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/metrics"
	"github.com/steady-go/steady/queue"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

// durations records the durations the Loop and its queue report.
type durations struct {
	metrics.NopLoop
	mu                         sync.Mutex
	reconciles, latency, works []time.Duration
}

func (d *durations) ReconcileDone(_, _ string, v time.Duration) {
	d.mu.Lock()
	d.reconciles = append(d.reconciles, v)
	d.mu.Unlock()
}

func (d *durations) QueueMetrics(string) queue.Metrics { return durationsQueue{d} }

func (d *durations) snapshot() (reconciles, latency, works []time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]time.Duration(nil), d.reconciles...), append([]time.Duration(nil), d.latency...),
		append([]time.Duration(nil), d.works...)
}

type durationsQueue struct{ d *durations }

func (q durationsQueue) Depth(int)                     {}
func (q durationsQueue) Added()                        {}
func (q durationsQueue) Retry()                        {}
func (q durationsQueue) Unfinished(_, _ time.Duration) {}
func (q durationsQueue) QueueLatency(v time.Duration) {
	q.d.mu.Lock()
	q.d.latency = append(q.d.latency, v)
	q.d.mu.Unlock()
}

func (q durationsQueue) WorkDuration(v time.Duration) {
	q.d.mu.Lock()
	q.d.works = append(q.d.works, v)
	q.d.mu.Unlock()
}

// The Loop and its queue share their clock reads (GetStamped, DoneStamped),
// and the durations stay exact: one worker, three keys listed at once, each
// reconcile taking 2s, key n waits 2n seconds.
func TestSharedStampsGiveExactDurations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &durations{}
		r := scriptFunc(func(context.Context, string) (Result, error) {
			time.Sleep(2 * time.Second)
			return Result{}, nil
		})
		l := mustNew(t, r, keySet("a", "b", "c"), WithWorkers(1), WithMetrics(m), WithResync(24*time.Hour, 0))
		stop := start(t, l)
		time.Sleep(7 * time.Second)
		require.NoError(t, stop())

		reconciles, latency, works := m.snapshot()
		two := 2 * time.Second
		require.Equal(t, []time.Duration{two, two, two}, reconciles)
		require.Equal(t, []time.Duration{two, two, two}, works)
		require.Equal(t, []time.Duration{0, two, 2 * two}, latency)
	})
}

// busyReader is a metrics.Loop that reads the busy workers itself.
type busyReader struct {
	hookCounter
	mu   sync.Mutex
	busy func() int
}

func (b *busyReader) ActiveWorkersFunc(_ string, busy func() int) {
	b.mu.Lock()
	b.busy = busy
	b.mu.Unlock()
	b.hit("ActiveWorkersFunc")
}

func (b *busyReader) read() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.busy()
}

// A Loop whose metrics.Loop is an activeWorkersReader gives it the busy count
// once, at Run, and never calls ActiveWorkers.
func TestActiveWorkersReaderReadsBusyWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &busyReader{hookCounter: hookCounter{calls: map[string]int{}}}
		r := scriptFunc(func(_ context.Context, key string) (Result, error) {
			if key == "slow" {
				time.Sleep(time.Minute)
			}
			return Result{}, nil
		})
		l := mustNew(t, r, keySet("slow", "a", "b"), WithWorkers(2), WithMetrics(m), WithResync(24*time.Hour, 0))
		stop := start(t, l)
		time.Sleep(time.Second)
		require.Equal(t, 1, m.read(), "slow is running; a and b are done")
		time.Sleep(time.Minute)
		require.Zero(t, m.read())
		require.NoError(t, stop())
		require.Zero(t, m.read(), "not leading")

		m.mu.Lock()
		defer m.mu.Unlock()
		require.Equal(t, 1, m.calls["ActiveWorkersFunc"])
		require.Zero(t, m.calls["ActiveWorkers"])
		require.Equal(t, 3, m.calls["ReconcileDone"])
	})
}

// busyAtDone is a busyReader whose queue's WorkDuration hook, which the
// queue calls from the worker inside Done, reads the busy workers.
type busyAtDone struct {
	busyReader
	seen []int
}

func (b *busyAtDone) QueueMetrics(string) queue.Metrics {
	return busyAtDoneQueue{queueHooks{&b.hookCounter}, b}
}

func (b *busyAtDone) atDone() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int(nil), b.seen...)
}

type busyAtDoneQueue struct {
	queueHooks
	b *busyAtDone
}

func (q busyAtDoneQueue) WorkDuration(time.Duration) {
	n := q.b.read()
	q.b.mu.Lock()
	q.b.seen = append(q.b.seen, n)
	q.b.mu.Unlock()
}

// A worker is busy from the queue's Get to its Done, as metrics.Loop's
// ActiveWorkersFunc says: it still counts while the queue reports its key's
// work duration, in Done. A reader that sees no busy worker thus finds
// every key's work reported and none processing; before, the worker
// counted as idle before Done, and metrics/prometheus's
// TestScrapeAfterKnownWork, scraping once Busy was 0, read 12 work
// durations of 13 (1 run in 1500 under -race, on a loaded machine).
func TestAWorkerIsBusyUntilTheQueuesDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &busyAtDone{busyReader: busyReader{hookCounter: hookCounter{calls: map[string]int{}}}}
		r := scriptFunc(func(context.Context, string) (Result, error) { return Result{}, nil })
		l := mustNew(t, r, keySet("a", "b"), WithWorkers(1), WithMetrics(m), WithResync(24*time.Hour, 0))
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, []int{1, 1}, m.atDone(), "busy while the queue reports each key's work duration")
		require.Zero(t, m.read(), "idle once Done returned")
		require.Zero(t, l.Info().Queue.Processing)
		require.NoError(t, stop())
	})
}

// slowErrors is a slog.Handler whose warnings and errors take a second to
// write (a key's first failure is logged at Warn).
type slowErrors struct{ slog.Handler }

func (slowErrors) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h slowErrors) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		time.Sleep(time.Second)
	}
	return h.Handler.Handle(ctx, r)
}

// What the Loop does after a reconcile that takes time (here, logging its
// error) counts in the key's work duration, and not in the next key's
// reconcile time or queue latency: the Loop then stamps its Done afresh.
func TestSlowWorkAfterAReconcileIsTheKeysOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &durations{}
		r := scriptFunc(func(_ context.Context, key string) (Result, error) {
			time.Sleep(2 * time.Second)
			if key == "bad" {
				return Result{}, errors.New("bad")
			}
			return Result{}, nil
		})
		log := slog.New(slowErrors{slog.DiscardHandler})
		l := mustNew(t, r, keySet("bad", "good"), WithWorkers(1), WithMetrics(m), WithLogger(log), WithResync(24*time.Hour, 0),
			WithBackoff(backoff.Policy{Base: time.Hour, Factor: 1, Cap: time.Hour}))
		stop := start(t, l)
		time.Sleep(10 * time.Second)
		require.NoError(t, stop())

		reconciles, latency, works := m.snapshot()
		require.Equal(t, []time.Duration{2 * time.Second, 2 * time.Second}, reconciles)
		require.Equal(t, []time.Duration{3 * time.Second, 2 * time.Second}, works, "bad's error log is bad's work")
		require.Equal(t, []time.Duration{0, 3 * time.Second}, latency)
	})
}

// slowStatus is a memStatus whose writes take a second.
type slowStatus struct{ *memStatus }

func (s slowStatus) WriteCondition(ctx context.Context, key string, manager string, c store.Condition) error {
	time.Sleep(time.Second)
	return s.memStatus.WriteCondition(ctx, key, manager, c)
}

// A Stalled write after a reconcile is that key's work too.
func TestAStalledWriteIsTheKeysWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemStatus("a", "b")
		st.conds["a"] = []store.Condition{{Type: conditions.Stalled, Status: store.ConditionTrue, Reason: conditions.ReasonFailing, Message: "old"}}
		st.owner[[2]string{"a", conditions.Stalled}] = "test-loop"
		m := &durations{}
		r := scriptFunc(func(context.Context, string) (Result, error) {
			time.Sleep(2 * time.Second)
			return Result{}, nil
		})
		l := mustNew(t, r, WithConditionWriter(keySet("a", "b"), slowStatus{st}), WithWorkers(1), WithMetrics(m),
			WithResync(24*time.Hour, 0))
		stop := start(t, l)
		time.Sleep(10 * time.Second)
		require.NoError(t, stop())

		require.Equal(t, 1, st.writeCount(), "a's Stalled cleared")
		reconciles, latency, works := m.snapshot()
		require.Equal(t, []time.Duration{2 * time.Second, 2 * time.Second}, reconciles)
		require.Equal(t, []time.Duration{3 * time.Second, 2 * time.Second}, works)
		require.Equal(t, []time.Duration{0, 3 * time.Second}, latency)
	})
}
