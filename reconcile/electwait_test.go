package reconcile

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/lease"
	"github.com/steady-go/steady/store/memstore"
)

// slowDeletes delays every delete by a second, as a slow store does.
type slowDeletes struct{ kv.Backend }

func (s slowDeletes) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	if w.Kind == kv.WriteDelete {
		time.Sleep(time.Second)
	}
	return s.Backend.Txn(ctx, conds, w)
}

// A StoreElector's term ends before its release's write is done; Run
// returns only once that write is, so a process that exits after Run
// leaves no leader key for the next leader to wait out.
func TestRunReturnsOnceTheElectorReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New()
		el, err := lease.New(slowDeletes{mem}, "_leases/app", "a")
		require.NoError(t, err)
		l := mustNew(t, Func[string](func(context.Context, string) (Result, error) { return Result{}, nil }),
			keySet("a"), WithElector(el))
		stop := start(t, l)
		synctest.Wait()
		require.True(t, l.Leading())
		require.NoError(t, stop())
		_, err = el.Holder(context.Background())
		require.ErrorIs(t, err, store.ErrNotFound, "released by the time Run returned")
	})
}

// waitingElector leads at once; its Wait blocks until release is closed,
// or panics if it is nil.
type waitingElector struct{ release chan struct{} }

func (e waitingElector) Campaign(ctx context.Context) (context.Context, store.Fence, error) {
	return ctx, store.Fence{}, nil
}

func (e waitingElector) Wait() {
	if e.release == nil {
		panic("wait broke")
	}
	<-e.release
}

// An elector's Wait is the user's code: one that does not return holds
// Run for 30 seconds, logged at Error; one that panics is reported. Run
// returns nil either way: the Loop itself stopped cleanly.
func TestRunBoundsTheElectorsWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		release := make(chan struct{})
		l := mustNew(t, Func[string](func(context.Context, string) (Result, error) { return Result{}, nil }),
			keySet("a"), WithElector(waitingElector{release}), WithLogger(newLogger(&logs)))
		stop := start(t, l)
		synctest.Wait()
		began := time.Now()
		require.NoError(t, stop())
		require.Equal(t, 30*time.Second, time.Since(began))
		require.Contains(t, logs.String(), `level=ERROR msg="elector's Wait did not return; Run returns without it" controller=test waited=30s`)
		close(release)
	})
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		l := mustNew(t, Func[string](func(context.Context, string) (Result, error) { return Result{}, nil }),
			keySet("a"), WithElector(waitingElector{}), WithLogger(newLogger(&logs)))
		stop := start(t, l)
		synctest.Wait()
		require.NoError(t, stop())
		require.Contains(t, logs.String(), "Elector.Wait")
		require.Contains(t, logs.String(), "wait broke")
	})
}

// Two Loops may share one StoreElector (it is safe for concurrent use;
// their campaigns take turns): the one that stops waits for its own
// release, not for the other's live term.
func TestRunDoesNotWaitForAnotherLoopsTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		el, err := lease.New(memstore.New(), "_leases/app", "a")
		require.NoError(t, err)
		var logs logBuffer
		r := Func[string](func(context.Context, string) (Result, error) { return Result{}, nil })
		// The first drains for two seconds after its term ends: the second
		// takes the term over meanwhile, before the first's Run waits.
		draining := Func[string](func(ctx context.Context, _ string) (Result, error) {
			<-ctx.Done()
			time.Sleep(2 * time.Second)
			return Result{}, nil
		})
		first := mustNew(t, draining, keySet("a"), WithElector(el), WithLogger(newLogger(&logs)))
		stopFirst := start(t, first)
		synctest.Wait()
		require.True(t, first.Leading())
		second, err := New("second", r, keySet("b"), WithElector(el), WithLogger(newLogger(&logs)))
		require.NoError(t, err)
		stopSecond := start(t, second)
		synctest.Wait()
		began := time.Now()
		require.NoError(t, stopFirst())
		require.Equal(t, 2*time.Second, time.Since(began), "the drain, and no wait for the second's term")
		require.True(t, second.Leading(), "the second took the term over")
		require.NotContains(t, logs.String(), "did not return")
		require.NoError(t, stopSecond())
		_, err = el.Holder(context.Background())
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}
