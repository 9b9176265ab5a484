package reconcile_test

import (
	"context"
	"io"
	"iter"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile"
)

// runFunc is a cache as AddSource takes one.
type runFunc func(context.Context) error

func (f runFunc) Run(ctx context.Context) error { return f(ctx) }

// AddSource's doc: remove cancels the source and its caches and returns
// once every goroutine they ran has ended, even ones that take time to
// stop. (TestAddSourceToARunningLoop checks with goleak, whose retries
// wait for goroutines that are still ending.)
func TestRemoveReturnsOnlyAfterTheSourceAndItsCachesEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) { return reconcile.Result{}, nil })
		l, err := reconcile.New("added", r, reconcile.Keys(func() iter.Seq[string] { return slices.Values([]string{"a"}) }),
			reconcile.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- l.Run(ctx) }()
		synctest.Wait()

		var srcEnded, cacheEnded atomic.Bool
		src := reconcile.SourceFunc[string](func(ctx context.Context, _ reconcile.Sink[string]) error {
			<-ctx.Done()
			time.Sleep(time.Second) // slow to stop
			srcEnded.Store(true)
			return nil
		})
		c := runFunc(func(ctx context.Context) error {
			<-ctx.Done()
			time.Sleep(time.Second)
			cacheEnded.Store(true)
			return nil
		})
		remove, err := l.AddSource(src, c)
		require.NoError(t, err)
		synctest.Wait()
		remove()
		require.True(t, srcEnded.Load(), "the source's Run returned before remove did")
		require.True(t, cacheEnded.Load(), "the cache's Run returned before remove did")
		cancel()
		require.NoError(t, <-done)
	})
}
