package reconcile

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// A resync pass of a converged Loop over a cache (a no-op reconcile that
// reads the cache, as BenchmarkLoopNoopResync100k) allocates a constant
// few times per pass, nothing per reconcile: a pass struct moved to the
// heap (a pointer into it passed through an interface call) would cost
// one allocation per key.
func TestAResyncPassAllocatesNothingPerReconcile(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const n = 2000
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := store.New[appSpec, appStatus](memstore.New(), "App")
	require.NoError(t, err)
	for i := range n {
		_, err := st.As("user").Create(ctx, &app{Meta: store.Meta{Name: "obj-" + strconv.Itoa(i)}, Spec: appSpec{Replicas: 3}, Status: appStatus{Replicas: 3}})
		require.NoError(t, err)
	}
	c := cache.New[appSpec, appStatus](st)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { _ = c.Run(ctx) })
	require.NoError(t, c.WaitForSync(ctx))
	var done atomic.Int64
	pass := make(chan struct{}, 1)
	r := Func[string](func(ctx context.Context, key string) (Result, error) {
		if o, ok := c.Get(key); ok && o.Spec.Replicas != o.Status.Replicas {
			return Result{}, errBoom
		}
		if done.Add(1)%n == 0 {
			pass <- struct{}{}
		}
		return Result{}, nil
	})
	l, err := New("allocs", r, FromStore(c, st), WithWorkers(2), WithResync(24*time.Hour, 0), quiet())
	require.NoError(t, err)
	wg.Go(func() { _ = l.Run(ctx) })
	<-pass
	allocs := testing.AllocsPerRun(3, func() {
		l.resync()
		<-pass
	})
	require.Less(t, allocs, float64(n)/10, "allocations per pass of %d reconciles", n)
}
