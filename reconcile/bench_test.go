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
	"github.com/steady-go/steady/store/memstore"
)

// BenchmarkLoopNoopResync100k measures the Loop's per-reconcile cost: a
// no-op reconcile (one cache read) over 100k cached objects, one resync
// pass per iteration, 2 workers, the Stalled check included. Same shape as
// client-go's hand-rolled loop in shared/bench/loopanchors.
func BenchmarkLoopNoopResync100k(b *testing.B) {
	b.Run("timeout=off", func(b *testing.B) { benchLoop(b, 0) })
	b.Run("timeout=on", func(b *testing.B) { benchLoop(b, time.Minute) })
}

func benchLoop(b *testing.B, timeout time.Duration) {
	const n = 100_000
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bk := memstore.New()
	st, err := store.New[appSpec, appStatus](bk, "App")
	require.NoError(b, err)
	w := st.As("user")
	for i := range n {
		_, err := w.Create(ctx, &app{Meta: store.Meta{Name: "obj-" + strconv.Itoa(i)}, Spec: appSpec{Replicas: 3}, Status: appStatus{Replicas: 3}})
		require.NoError(b, err)
	}
	c := store.NewCache[appSpec, appStatus](st)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { _ = c.Run(ctx) })
	require.NoError(b, c.WaitForSync(ctx))

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
	opts := []Option{WithStore(c, st), WithWorkers(2), WithResync(24*time.Hour, 0)}
	if timeout > 0 {
		opts = append(opts, WithTimeout(timeout))
	}
	l, err := New("bench", r, opts...)
	require.NoError(b, err)
	wg.Go(func() { _ = l.Run(ctx) })
	<-pass // the first term's pass
	for !l.Leading() {
		time.Sleep(time.Millisecond)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		l.resync()
		<-pass
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/reconcile")
	cancel()
}
