package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/metrics"
	"github.com/steady-go/steady/store"
)

// delayMetrics records WriteDelayed calls.
type delayMetrics struct {
	metrics.NopLoop
	mu     sync.Mutex
	delays []time.Duration
	panic  bool
}

func (m *delayMetrics) WriteDelayed(controller string, d time.Duration) {
	if m.panic {
		panic("WriteDelayed")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.delays = append(m.delays, d)
}

// observedApp is a new object that a condition already observed (at
// generation 1), so that the Loop writes no Reconciling on it: the writes
// these tests pace are the reconciler's.
func observedApp(name string) *app {
	return &app{Meta: store.Meta{Name: name},
		Conditions: []store.Condition{{Type: "Seen", Status: store.ConditionTrue, ObservedGeneration: 1}}}
}

// statusWriter returns a reconciler that writes each key's status once and
// records when each write landed (since start).
func pacedStatusWriter(e *env, start time.Time, mu *sync.Mutex, landed *[]time.Duration) Func[string] {
	return func(ctx context.Context, key string) (Result, error) {
		cached, _ := e.cache.Get(key)
		if cached.Status.Phase == "done" {
			return Result{}, nil
		}
		o := copyOf(cached)
		o.Status.Phase = "done"
		if _, err := e.st.As("app").UpdateStatus(ctx, o); err != nil {
			return Result{}, err
		}
		mu.Lock()
		*landed = append(*landed, time.Since(start))
		mu.Unlock()
		return Result{}, nil
	}
}

// Ten workers write at once under a bucket of 1/s, burst 2, ceiling 5s:
// two go at once, then one a second, and those that would wait past the
// ceiling wait a capped delay (4s with this Rand) instead.
func TestWriteLimitPacesTheLoopsWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		for i := range 10 {
			e.create(t, "user", observedApp(fmt.Sprintf("k%d", i)))
		}
		require.NoError(t, e.cache.WaitForSync(t.Context()))
		var mu sync.Mutex
		var landed []time.Duration
		m := &delayMetrics{}
		limit := WithWriteLimit(backoff.BucketConfig{Rate: 1, Burst: 2, Ceiling: 5 * time.Second, Rand: func() float64 { return 0 }})
		l := mustNew(t, pacedStatusWriter(e, time.Now(), &mu, &landed), FromStore(e.cache, e.st), WithFieldManager("app"), WithWorkers(10), WithMetrics(m), limit)
		stop := start(t, l)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.NoError(t, stop())
		slices.Sort(landed)
		s := time.Second
		require.Equal(t, []time.Duration{0, 0, s, 2 * s, 3 * s, 4 * s, 4 * s, 4 * s, 4 * s, 5 * s}, landed)
		slices.Sort(m.delays)
		require.Equal(t, []time.Duration{s, 2 * s, 3 * s, 4 * s, 4 * s, 4 * s, 4 * s, 5 * s}, m.delays, "the metric saw each delayed write")
	})
}

// A write waiting for a token when the Loop stops fails, and Run returns
// without waiting for the token.
func TestWriteLimitWaitEndsWithTheLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", observedApp("a"))
		e.create(t, "user", observedApp("b"))
		var mu sync.Mutex
		var landed []time.Duration
		var errs []error
		w := pacedStatusWriter(e, time.Now(), &mu, &landed)
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			res, err := w(ctx, key)
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			return res, err
		})
		limit := WithWriteLimit(backoff.BucketConfig{Rate: 0.001, Burst: 1, Ceiling: time.Hour})
		l := mustNew(t, r, FromStore(e.cache, e.st), WithFieldManager("app"), limit)
		stop := start(t, l)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Len(t, landed, 1, "the second write waits for its token")
		require.NoError(t, stop())
		require.Len(t, errs, 1)
		// The wait fails with the shutdown; a write made from the Store's
		// memory then confirms with a read, which fails with the ctx.
		require.True(t, errors.Is(errs[0], ErrShutdown) || errors.Is(errs[0], context.Canceled), "%v", errs[0])
		require.Len(t, landed, 1, "the waiting write never landed")
	})
}

// Misuse: a bad bucket fails New; a metrics hook that panics is logged and
// the write goes on.
func TestWriteLimitMisuse(t *testing.T) {
	_, err := New("test", newScript(nil), nil, WithWriteLimit(backoff.BucketConfig{Rate: -1}))
	require.ErrorIs(t, err, ErrInvalidOption)
	require.ErrorContains(t, err, "write limit")

	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", observedApp("a"))
		e.create(t, "user", observedApp("b"))
		var mu sync.Mutex
		var landed []time.Duration
		var logs logBuffer
		limit := WithWriteLimit(backoff.BucketConfig{Rate: 1, Burst: 1})
		l := mustNew(t, pacedStatusWriter(e, time.Now(), &mu, &landed), FromStore(e.cache, e.st), WithFieldManager("app"),
			WithMetrics(&delayMetrics{panic: true}), WithLogger(newLogger(&logs)), limit)
		stop := start(t, l)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.NoError(t, stop())
		require.Equal(t, []time.Duration{0, time.Second}, landed)
		require.Contains(t, logs.String(), `level=ERROR msg="metrics hook panicked" hook=WriteDelayed`)
	})
}

// One bucket on a ctx that several Loops run with (as manager.Manager.Run
// runs its Loops with its ctx) paces the writes of every one: two Loops
// over two kinds, one write each, share one token a second.
func TestWriteLimitSharedByAManagersLoops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", observedApp("a"))
		other := newEnv(t, "Other", e.b)
		defer other.stop()
		other.create(t, "user", observedApp("o"))
		var mu sync.Mutex
		var landed []time.Duration
		t0 := time.Now()
		var loops []*Loop[string]
		for i, env := range []*env{e, other} {
			l, err := New(fmt.Sprintf("loop%d", i), pacedStatusWriter(env, t0, &mu, &landed), FromStore(env.cache, env.st), WithFieldManager("app"))
			require.NoError(t, err)
			loops = append(loops, l)
		}
		bucket, err := backoff.NewBucket[string](backoff.BucketConfig{Rate: 1, Burst: 1})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(storeaccess.WithWriteLimit(context.Background(), bucket.Wait))
		done := make(chan error, len(loops))
		for _, l := range loops {
			go func() { done <- l.Run(ctx) }()
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		cancel()
		for range loops {
			require.NoError(t, <-done)
		}
		slices.Sort(landed)
		require.Equal(t, []time.Duration{0, time.Second}, landed)
	})
}
