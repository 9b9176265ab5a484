package reconcile_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile"
)

// gatedSource is a source that needs warming: it is warm once synced is
// closed.
type gatedSource struct{ synced chan struct{} }

func (gatedSource) Run(ctx context.Context, _ reconcile.Sink[string]) error {
	<-ctx.Done()
	return nil
}

func (g gatedSource) WaitForSync(ctx context.Context) error {
	select {
	case <-g.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// The package doc: keys added (Add, AddLow) while no term runs are kept and
// run in the next term, once each; AddAfter does nothing while no term
// runs.
func TestBeforeTheFirstTermAddsAreKeptAndAddAfterDoesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		runs := map[string]int{}
		r := reconcile.Func[string](func(_ context.Context, key string) (reconcile.Result, error) {
			mu.Lock()
			runs[key]++
			mu.Unlock()
			return reconcile.Result{}, nil
		})
		gate := gatedSource{synced: make(chan struct{})}
		l, err := reconcile.New("noterm", r, gate, reconcile.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- l.Run(ctx) }()
		synctest.Wait()
		l.Add("added")
		l.Add("added")
		l.AddLow("low")
		l.AddAfter("delayed", time.Second)
		l.AddAfter("added", time.Second)
		time.Sleep(time.Minute)
		synctest.Wait()
		mu.Lock()
		require.Empty(t, runs, "no term: nothing runs")
		mu.Unlock()

		close(gate.synced)
		time.Sleep(time.Minute)
		synctest.Wait()
		cancel()
		require.NoError(t, <-done)
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, map[string]int{"added": 1, "low": 1}, runs, "AddAfter while no term ran did nothing")
	})
}
