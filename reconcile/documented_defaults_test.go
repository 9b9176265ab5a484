package reconcile_test

import (
	"context"
	"io"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile"
)

// The package doc's defaults, from outside: with no options a Loop resyncs
// every 10 minutes ±10%, and Run waits 30s for a reconcile that ignores its
// ctx before it returns ErrDrainTimeout naming the key.
func TestDefaultResyncIsTenMinutesPlusMinusTenPercent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var at []time.Time
		r := reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) {
			mu.Lock()
			at = append(at, time.Now())
			mu.Unlock()
			return reconcile.Result{}, nil
		})
		l, err := reconcile.New("defaults", r, reconcile.Keys(func() iter.Seq[string] { return slices.Values([]string{"a"}) }),
			reconcile.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- l.Run(ctx) }()
		time.Sleep(5 * time.Hour)
		synctest.Wait()
		cancel()
		require.NoError(t, <-done)

		mu.Lock()
		defer mu.Unlock()
		require.GreaterOrEqual(t, len(at), 5*60/11, "runs in 5 hours")
		var gaps []time.Duration
		for i := 1; i < len(at); i++ {
			gap := at[i].Sub(at[i-1])
			require.GreaterOrEqual(t, gap, 9*time.Minute, "resync %d", i)
			require.LessOrEqual(t, gap, 11*time.Minute, "resync %d", i)
			gaps = append(gaps, gap)
		}
		require.NotEqual(t, slices.Min(gaps), slices.Max(gaps), "the period is jittered")
	})
}

func TestDefaultDrainTimeoutIsThirtySeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		r := reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) {
			<-release // ignores ctx
			return reconcile.Result{}, nil
		})
		l, err := reconcile.New("defaults", r, reconcile.Keys(func() iter.Seq[string] { return slices.Values([]string{"stuck"}) }),
			reconcile.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- l.Run(ctx) }()
		synctest.Wait()
		before := time.Now()
		cancel()
		err = <-done
		require.ErrorIs(t, err, reconcile.ErrDrainTimeout)
		require.ErrorContains(t, err, "stuck")
		require.Equal(t, 30*time.Second, time.Since(before))
		close(release)
		synctest.Wait()
	})
}
