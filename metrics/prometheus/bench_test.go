package prometheus_test

import (
	"context"
	"errors"
	"iter"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/metrics"
	steadyprom "github.com/steady-go/steady/metrics/prometheus"
	"github.com/steady-go/steady/queue"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// BenchmarkLoopPerReconcile measures a Loop of 2 workers reconciling
// 10,000 keys with a no-op reconciler, per reconcile: without metrics
// (plain), with hooks that do nothing but make the Loop and its queue take
// the timestamps every metrics sink needs (timestamps: the floor, set by the
// cost of reading the clock), with the Prometheus adapter (prometheus), and
// with its native histograms on (prometheus-native). The bar: the adapter
// costs at most 1.3× the plain Loop per reconcile. Measured on a loaded
// 2-core VM (medians of cpu-ns/reconcile, 9 interleaved runs): plain 220,
// timestamps 298 (1.35×), prometheus 367 (1.67×), prometheus-native 482;
// before the Loop and its queue shared their stamps and the adapter had its
// own histograms, prometheus was 650 (2.99×). The bar is not met: the floor
// alone exceeds it, at two monotonic clock reads per reconcile (the add,
// and the reconcile's end, which also ends the queue's work duration and
// starts the worker's next one) of ~35–40 ns each here. The adapter's own
// share (prometheus minus timestamps, ~70 ns) is ten atomic updates per
// reconcile, on cache lines the adder and both workers write: the three
// histogram observations (two each), adds_total, reconcile_total and the
// depth gauge (twice).
func BenchmarkLoopPerReconcile(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchLoop(b, nil) })
	b.Run("timestamps", func(b *testing.B) { benchLoop(b, stampsOnly{}) })
	b.Run("prometheus", func(b *testing.B) {
		m, err := steadyprom.New(prom.NewRegistry())
		require.NoError(b, err)
		benchLoop(b, m)
	})
	b.Run("prometheus-native", func(b *testing.B) {
		m, err := steadyprom.New(prom.NewRegistry(), steadyprom.WithNativeHistograms())
		require.NoError(b, err)
		benchLoop(b, m)
	})
}

// BenchmarkStoreLoopPerReconcile is the same with the shape of a real
// controller: keys from a cache over a memstore (FromStore), a reconcile
// that reads its object from the cache. The adapter's cost per reconcile
// is the same as above; what changes is the work it is measured against.
// Measured on a quiet 2-core VM (3 runs, cpu-ns/reconcile): plain 238–298,
// prometheus 403–407 (1.4–1.7×): a cache read does not dilute the adapter's
// share much, since the Loop's own work per reconcile stays small.
func BenchmarkStoreLoopPerReconcile(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchStoreLoop(b, nil) })
	b.Run("prometheus", func(b *testing.B) {
		m, err := steadyprom.New(prom.NewRegistry())
		require.NoError(b, err)
		benchStoreLoop(b, m)
	})
}

type benchSpec struct {
	Replicas int `json:"replicas"`
}

func benchStoreLoop(b *testing.B, m metrics.Loop) {
	const n = 10_000
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := store.New[benchSpec, benchSpec](memstore.New(), "App")
	require.NoError(b, err)
	w := st.As("user")
	names := make([]string, n)
	for i := range names {
		names[i] = "obj-" + strconv.Itoa(i)
		_, err := w.Create(ctx, &store.Object[benchSpec, benchSpec]{Meta: store.Meta{Name: names[i]},
			Spec: benchSpec{Replicas: 3}, Status: benchSpec{Replicas: 3}})
		require.NoError(b, err)
	}
	c := cache.New[benchSpec, benchSpec](st)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { _ = c.Run(ctx) })
	require.NoError(b, c.WaitForSync(ctx))
	var done atomic.Int64
	pass := make(chan struct{}, 1)
	r := reconcile.Func[string](func(_ context.Context, key string) (reconcile.Result, error) {
		if o, ok := c.Get(key); ok && o.Spec.Replicas != o.Status.Replicas {
			return reconcile.Result{}, errors.New("not converged")
		}
		if done.Add(1)%n == 0 {
			pass <- struct{}{}
		}
		return reconcile.Result{}, nil
	})
	opts := []reconcile.Option{reconcile.WithWorkers(2), reconcile.WithResync(24*time.Hour, 0)}
	if m != nil {
		opts = append(opts, reconcile.WithMetrics(m))
	}
	l, err := reconcile.New("bench", r, reconcile.FromStore(c, st), opts...)
	require.NoError(b, err)
	wg.Go(func() { _ = l.Run(ctx) })
	measurePasses(b, l, names, pass)
}

func benchLoop(b *testing.B, m metrics.Loop) {
	const n = 10_000
	names := make([]string, n)
	for i := range names {
		names[i] = "obj-" + strconv.Itoa(i)
	}
	var done atomic.Int64
	pass := make(chan struct{}, 1)
	r := reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) {
		if done.Add(1)%n == 0 {
			pass <- struct{}{}
		}
		return reconcile.Result{}, nil
	})
	opts := []reconcile.Option{reconcile.WithWorkers(2), reconcile.WithResync(24*time.Hour, 0)}
	if m != nil {
		opts = append(opts, reconcile.WithMetrics(m))
	}
	l, err := reconcile.New("bench", r, reconcile.Keys(func() iter.Seq[string] { return slices.Values(names) }), opts...)
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = l.Run(ctx) })
	measurePasses(b, l, names, pass)
	cancel()
	wg.Wait()
}

// measurePasses waits for l's first pass over names, then times passes
// of adding every name, each ended by a value on pass, and reports wall and
// CPU time per reconcile.
func measurePasses(b *testing.B, l *reconcile.Loop[string], names []string, pass <-chan struct{}) {
	<-pass // the first term's pass over every key
	runtime.GC()
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		for _, k := range names {
			l.Add(k)
		}
		<-pass
	}
	n := float64(b.N * len(names))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/reconcile")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/n, "cpu-ns/reconcile")
}

// cpuTime is the process's CPU time, user and system. On a shared machine
// CPU time per reconcile is the steadier figure; wall time counts the
// waits for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// stampsOnly is a metrics.Loop whose hooks do nothing; unlike NopLoop it makes
// the Loop and its queue take their timestamps. Like the adapter, it reads
// the busy workers itself (ActiveWorkersFunc), so the Loop counts none.
type stampsOnly struct{ metrics.NopLoop }

func (stampsOnly) QueueMetrics(string) queue.Metrics    { return queue.NopMetrics{} }
func (stampsOnly) ActiveWorkersFunc(string, func() int) {}

// BenchmarkHooksPerReconcile is the adapter's own cost per reconcile: the
// hooks a Loop and its queue call for one successful reconcile, without
// the clock reads around them, on one goroutine (no cache line shared with
// another core). The Loop calls no ActiveWorkers: the adapter is an
// reader of busy workers (ActiveWorkersFunc).
func BenchmarkHooksPerReconcile(b *testing.B) {
	m, err := steadyprom.New(prom.NewRegistry())
	require.NoError(b, err)
	q := m.QueueMetrics("bench")
	m.MaxConcurrency("bench", 2) // as a Loop's Run does: binds its series before timing
	b.ReportAllocs()
	for b.Loop() {
		q.Added()
		q.Depth(1)
		q.Depth(0)
		q.QueueLatency(3 * time.Microsecond)
		m.ReconcileDone("bench", "success", 2*time.Microsecond)
		q.WorkDuration(5 * time.Microsecond)
	}
}
