package queue_test

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/queue"
)

// captureErrors makes slog.Default write to a buffer for the rest of the
// test, and returns a function that reads what was written.
func captureErrors(t *testing.T) func() string {
	var (
		mu  sync.Mutex
		buf bytes.Buffer
	)
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return buf.String()
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// whenCounter counts the calls of When: a limiter keeps a failure
// count per key it is asked about.
type whenCounter[K comparable] struct {
	backoff.Limiter[K]
	whens int
}

func (l *whenCounter[K]) When(k K) time.Duration {
	l.whens++
	return l.Limiter.When(k)
}

// requireRefusesSelfUnequalKeys adds key, which is not equal to itself,
// many times by every kind of add, and requires that the queue held none
// of them (a key it held could never be found, so never be Done, and every
// add would hold another), logged the first refusal once, and still works.
func requireRefusesSelfUnequalKeys[K comparable](t *testing.T, key, good K) {
	t.Helper()
	logged := captureErrors(t)
	l := &whenCounter[K]{Limiter: backoff.NewDefault[K]()}
	for _, q := range []*queue.Queue[K]{
		queue.New[K](queue.WithName("q")),
		queue.NewRateLimited[K](l, queue.WithName("q")),
	} {
		for range 1000 {
			q.Add(key)
			q.AddLow(key)
			q.AddAfter(key, time.Hour)
			q.AddAfter(key, 0)
			q.AddRateLimited(key)
		}
		require.Equal(t, queue.Counts{}, q.Counts(), "no entry for %v", key)
		require.Zero(t, q.Delayed())
		for k := range q.All() {
			require.Fail(t, "the queue holds a key", "%v", k)
		}
		require.Zero(t, q.NumRequeues(key))

		q.Add(good)
		k, ok := q.Get(context.Background())
		require.True(t, ok)
		require.Equal(t, good, k)
		q.Done(k)
		q.ShutDown()
	}
	require.Zero(t, l.whens, "the limiter keeps no count for a refused key")
	require.Equal(t, 2, strings.Count(logged(), "not equal to itself"), "logged once per queue: %s", logged())
	require.Contains(t, logged(), "level=ERROR")
	require.Contains(t, logged(), "queue=q")
}

// A key that is not equal to itself (a NaN float, or a struct, array or
// interface holding one) is refused by every add: dropped and logged once
// per queue, never held.
func TestKeysNotEqualToThemselvesAreRefused(t *testing.T) {
	nan := math.NaN()
	t.Run("float", func(t *testing.T) { requireRefusesSelfUnequalKeys(t, nan, 1.5) })
	t.Run("struct", func(t *testing.T) {
		type k struct {
			name string
			x    float64
		}
		requireRefusesSelfUnequalKeys(t, k{"a", nan}, k{"a", 1})
	})
	t.Run("array", func(t *testing.T) { requireRefusesSelfUnequalKeys(t, [2]float32{1, float32(nan)}, [2]float32{1, 2}) })
	t.Run("interface", func(t *testing.T) { requireRefusesSelfUnequalKeys[any](t, nan, "ok") })
	t.Run("complex", func(t *testing.T) { requireRefusesSelfUnequalKeys(t, complex(1, nan), complex(1, 1)) })
}
