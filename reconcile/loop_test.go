package reconcile

import (
	"context"
	"errors"
	"iter"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/reconcile/oscillation"
)

func TestNewRejectsBadOptions(t *testing.T) {
	r := Func[string](func(context.Context, string) (Result, error) { return Result{}, nil })
	tests := []struct {
		name string
		opts []Option
	}{
		{"zero workers", []Option{WithWorkers(0)}},
		{"zero resync", []Option{WithResync(0, 0)}},
		{"jitter 1", []Option{WithResync(time.Minute, 1)}},
		{"negative timeout", []Option{WithTimeout(-time.Second)}},
		{"bad backoff", []Option{WithBackoff(backoff.Policy{Base: time.Second, Factor: 0.5, Cap: time.Minute})}},
		{"bad bucket", []Option{WithRetryLimit(backoff.BucketConfig{Burst: -1})}},
		{"zero stall-after", []Option{WithStallAfter(0)}},
		{"nil elector", []Option{WithElector(nil)}},
		{"nil metrics", []Option{WithMetrics(nil)}},
		{"nil logger", []Option{WithLogger(nil)}},
		{"zero drain timeout", []Option{WithDrainTimeout(0)}},
		{"nil clock", []Option{WithClock(nil)}},
		{"empty manager", []Option{WithFieldManager("")}},
		{"negative oscillation window", []Option{WithOscillation(oscillation.Config{Window: -1})}},
		{"zero read-your-writes timeout", []Option{WithReadYourWritesTimeout(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := New("x", r, nil, tt.opts...)
			require.ErrorIs(t, err, ErrInvalidOption)
			require.Nil(t, l)
		})
	}
	_, err := New("", r, nil)
	require.ErrorIs(t, err, ErrInvalidOption)
	_, err = New[string]("x", nil, nil)
	require.ErrorIs(t, err, ErrInvalidOption)
	// A Source or ConditionWriter of another key type does not compile; two
	// ConditionWriters among the sources are refused.
	_, err = New("x", r, Sources(WithConditionWriter(keySet("a"), newMemStatus()), WithConditionWriter(keySet("b"), newMemStatus())))
	require.ErrorIs(t, err, ErrInvalidOption)
	l, err := New("x", r, nil, nil, WithWorkers(3), WithFieldManager("app"))
	require.NoError(t, err)
	require.Equal(t, "app", l.Info().FieldManager)
	require.Equal(t, "app-loop", l.cfg.loopManager)
	require.Equal(t, "x", l.Name())
}

func TestSourcesJoinAndCarryOneStatusWriter(t *testing.T) {
	r := Func[string](func(context.Context, string) (Result, error) { return Result{}, nil })
	inner, outer := newMemStatus(), newMemStatus()
	l, err := New("x", r, Sources(keySet("a"), nil, WithConditionWriter(Sources(keySet("b"), WithConditionWriter(keySet("c"), inner)), outer)))
	require.NoError(t, err)
	require.Len(t, l.sources, 3, "lists and wrappers are unpacked, nil sources left out")
	require.Same(t, outer, l.sw, "WithConditionWriter replaces the writers inside the source it wraps")
}

func TestRunTwiceFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustNew(t, newScript(func(string, int) (Result, error) { return Result{}, nil }), nil)
		stop := start(t, l)
		synctest.Wait()
		require.ErrorIs(t, l.Run(context.Background()), ErrAlreadyRunning)
		require.NoError(t, stop())
	})
}

// Dedup: 10,000 changes to one object during one reconcile lead to exactly
// one further reconcile.
func TestLoopDedupDuringReconcile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hints := make(chan string)
		release := make(chan struct{})
		var calls atomic.Int64
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			if calls.Add(1) == 1 {
				<-release
			}
			return Result{}, nil
		})
		l := mustNew(t, r, FromChannel(hints), WithWorkers(4))
		stop := start(t, l)
		synctest.Wait()
		hints <- "a"
		synctest.Wait()
		require.Equal(t, int64(1), calls.Load())
		require.Equal(t, PhaseRunning, l.Inspect("a").Phase)
		for range 10000 {
			hints <- "a"
		}
		synctest.Wait() // every hint has been added
		close(release)
		synctest.Wait()
		require.Equal(t, int64(2), calls.Load(), "exactly one more reconcile")
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Equal(t, int64(2), calls.Load())
		require.NoError(t, stop())
	})
}

func TestLoopOneWorkerPerKeyAndConcurrencyBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMemMetrics()
		var mu sync.Mutex
		inFlight := map[string]bool{}
		var peak, cur int
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			mu.Lock()
			require.False(t, inFlight[key], "two workers on one key")
			inFlight[key] = true
			cur++
			peak = max(peak, cur)
			mu.Unlock()
			time.Sleep(time.Second)
			mu.Lock()
			inFlight[key] = false
			cur--
			mu.Unlock()
			return Result{}, nil
		})
		keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
		l := mustNew(t, r, keySet(keys...), append(fixedBackoff(), WithWorkers(3), WithMetrics(m))...)
		stop := start(t, l)
		for range 5 {
			for _, k := range keys {
				l.Add(k)
			}
			time.Sleep(500 * time.Millisecond)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, 3, peak)
		require.Equal(t, 3, m.PeakActiveWorkers("test"))
		require.Equal(t, 3, m.MaxConcurrencyValue("test"))
		require.Zero(t, m.ActiveWorkersNow("test"))
		require.NoError(t, stop())
	})
}

func TestLoopShutdownCancelsInFlightWithErrShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMemMetrics()
		causes := make(chan error, 1)
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return Result{}, ctx.Err()
		})
		l := mustNew(t, r, keySet("a"), WithMetrics(m))
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, PhaseRunning, l.Inspect("a").Phase)
		require.NoError(t, stop())
		require.ErrorIs(t, <-causes, ErrShutdown)
		require.Zero(t, m.Errors("test"), "a reconcile cut short by shutdown is not a failure")
		require.False(t, l.Leading())
	})
}

func TestLoopDrainTimeoutReportsStuckKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			if key == "stuck" {
				<-release // ignores ctx
			}
			return Result{}, nil
		})
		l := mustNew(t, r, keySet("ok", "stuck"), WithWorkers(2), WithDrainTimeout(5*time.Second))
		stop := start(t, l)
		synctest.Wait()
		before := time.Now()
		err := stop()
		require.ErrorIs(t, err, ErrDrainTimeout)
		require.ErrorContains(t, err, "[stuck]")
		require.Equal(t, 5*time.Second, time.Since(before), "waited exactly the drain timeout")
		close(release)
		synctest.Wait()
	})
}

// Resync adds every key low: a key in backoff keeps waiting.
func TestResyncDoesNotEraseBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(func(key string, n int) (Result, error) {
			if key == "bad" && n == 0 {
				return Result{}, RetryAfter(errBoom, 25*time.Minute)
			}
			return Result{}, nil
		})
		l := mustNew(t, s, keySet("good", "bad"), WithResync(10*time.Minute, 0), WithRetryLimit(backoff.BucketConfig{Rate: 1e9}))
		stop := start(t, l)
		time.Sleep(24 * time.Minute)
		synctest.Wait()
		require.Equal(t, 3, s.count("good"), "start plus two resyncs")
		require.Equal(t, 1, s.count("bad"), "resync did not advance the backoff")
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, 2, s.count("bad"))
		require.Equal(t, []time.Duration{25 * time.Minute}, s.gaps("bad"))
		require.NoError(t, stop())
	})
}

// A key that two sources list is reconciled once per resync, however long
// the listing takes: the Loop gathers every source's keys before it queues
// any, so no worker can finish the first source's copy of the key before
// the second source lists it again (which ran it twice, and counted a
// converged object's extra reconcile toward the write-storm budget).
func TestAKeyTwoSourcesListRunsOncePerResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		// The second listing is slow (a List call to a remote fleet): every
		// worker is idle again before it yields.
		slow := Keys(func() iter.Seq[string] {
			return func(yield func(string) bool) {
				synctest.Wait()
				yield("a")
			}
		})
		l := mustNew(t, s, Sources(keySet("a", "b"), slow), WithResync(time.Minute, 0))
		stop := start(t, l)
		// The test sleeps instead of calling synctest.Wait while a listing
		// may run (at the term's start and at each whole minute): only one
		// goroutine may wait at a time.
		time.Sleep(30 * time.Second)
		require.Equal(t, 1, s.count("a"), "the term's first listing")
		for resync := 1; resync <= 3; resync++ {
			time.Sleep(time.Minute)
			require.Equal(t, 1+resync, s.count("a"), "reconciles of a after resync %d", resync)
			require.Equal(t, 1+resync, s.count("b"), "reconciles of b after resync %d", resync)
		}
		require.NoError(t, stop())
	})
}

// fakeWaiter is a cache revision a test advances by hand.
type fakeWaiter struct {
	mu  sync.Mutex
	rev int64
	ch  chan struct{}
}

func (w *fakeWaiter) Revision() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rev
}

func (w *fakeWaiter) set(rev int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rev = rev
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
}

func (w *fakeWaiter) WaitFor(ctx context.Context, rev int64) error {
	for {
		w.mu.Lock()
		if w.rev >= rev {
			w.mu.Unlock()
			return nil
		}
		if w.ch == nil {
			w.ch = make(chan struct{})
		}
		ch := w.ch
		w.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// waitingSource is a key list that is also a cache to wait on.
type waitingSource struct {
	fakeWaiter
	keys []string
}

func (s *waitingSource) Run(ctx context.Context, _ Sink[string]) error { <-ctx.Done(); return nil }
func (s *waitingSource) Keys() iter.Seq[string]                        { return slices.Values(s.keys) }

func TestRequeueWaitsForTheCacheToHoldTheWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &waitingSource{keys: []string{"a"}}
		var fresh []bool
		var mu sync.Mutex
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			mu.Lock()
			defer mu.Unlock()
			fresh = append(fresh, FreshReadNeeded(ctx))
			switch len(fresh) {
			case 1:
				RecordWrite(ctx, 7)
				RecordWrite(ctx, 5) // the highest counts
				return Result{RequeueAfterWrite: true}, nil
			case 2:
				RecordWrite(ctx, 9)
				return Result{RequeueAfterWrite: true}, nil
			}
			return Result{}, nil
		})
		l := mustNew(t, r, src, fixedBackoff()...)
		stop := start(t, l)
		synctest.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		mu.Lock()
		require.Equal(t, []bool{false}, fresh, "waits for revision 7")
		mu.Unlock()
		src.set(6)
		synctest.Wait()
		require.Len(t, fresh, 1)
		src.set(7)
		synctest.Wait()
		mu.Lock()
		require.Equal(t, []bool{false, false}, fresh, "runs once the cache holds revision 7")
		mu.Unlock()
		// Revision 9 never shows: after 2s the key runs anyway, told to read fresh.
		time.Sleep(2 * time.Second)
		synctest.Wait()
		mu.Lock()
		require.Equal(t, []bool{false, false, true}, fresh)
		mu.Unlock()
		require.NoError(t, stop())
	})
}

func TestRecordWriteOutsideALoopIsANoop(t *testing.T) {
	RecordWrite(context.Background(), 3)
	require.False(t, FreshReadNeeded(context.Background()))
}

// A dependency index: a secret change enqueues every object that references
// it, through a custom mapper.
func TestMappedSourceDependencyIndex(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refs := map[string][]string{"db-secret": {"app1", "app2"}, "tls": {"app3"}}
		secrets := make(chan string)
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, Mapped(secrets, func(secret string) []string { return refs[secret] }))
		stop := start(t, l)
		synctest.Wait()
		secrets <- "db-secret"
		synctest.Wait()
		require.Equal(t, 1, s.count("app1"))
		require.Equal(t, 1, s.count("app2"))
		require.Zero(t, s.count("app3"))
		secrets <- "unknown"
		synctest.Wait()
		require.Equal(t, []string{"app1", "app2"}, slices.Sorted(maps.Keys(s.calls)))
		require.NoError(t, stop())
	})
}

func TestSourceErrorEndsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errBroken := errors.New("broken")
		src := SourceFunc[string](func(ctx context.Context, _ Sink[string]) error { return errBroken })
		l := mustNew(t, newScript(func(string, int) (Result, error) { return Result{}, nil }), src)
		err := l.Run(context.Background())
		require.ErrorIs(t, err, errBroken)
		require.ErrorContains(t, err, "loop test: source 0")
	})
}

func TestSinkDropsHintsWhileNotLeading(t *testing.T) {
	l := mustNew(t, newScript(func(string, int) (Result, error) { return Result{}, nil }), nil)
	l.Add("a") // not running: nothing happens, nothing panics
	l.AddLow("a")
	l.AddAfter("a", time.Second)
	require.False(t, l.Leading())
	require.Equal(t, KeyInfo{Key: "a", Phase: PhaseWaiting, Why: "runs on the next change or resync"}, l.Inspect("a"), "no state, no queue")
}

func TestInspectReportsQueueStateAndQueueMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMemMetrics()
		s := newScript(func(string, int) (Result, error) { return Result{}, errBoom })
		l := mustNew(t, s, keySet("a"), append(fixedBackoff(), WithMetrics(m))...)
		stop := start(t, l)
		synctest.Wait()
		info := l.Inspect("a")
		require.True(t, l.Leading())
		require.NotEqual(t, PhaseRunning, info.Phase)
		require.True(t, info.Queue.Delayed, "waiting out its backoff")
		require.Equal(t, time.Now().Add(time.Second), info.Queue.ReadyAt)
		require.Equal(t, info.Until, info.Queue.ReadyAt)
		require.Equal(t, 1, info.Failures)
		adds, latencies, works, _ := m.Queue("test").Counts()
		require.Equal(t, 1, adds)
		require.Equal(t, 1, latencies)
		require.Equal(t, 1, works)
		require.NoError(t, stop())
	})
}
