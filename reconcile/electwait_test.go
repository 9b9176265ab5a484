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
