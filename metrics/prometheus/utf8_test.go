package prometheus_test

import (
	"context"
	"iter"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/require"

	steadyprom "github.com/steady-go/steady/metrics/prometheus"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
)

// A Loop whose name is not valid UTF-8 (Prometheus refuses such a label
// value) has its series, labelled with U+FFFD for each run of invalid
// bytes: no hook panics, no metric is lost, and the scrape-time series of
// AddLoop and AddCache are labelled the same way.
func TestALoopNamedWithInvalidUTF8HasItsSeriesUnderU_FFFD(t *testing.T) {
	reg := prom.NewRegistry()
	m, err := steadyprom.New(reg)
	require.NoError(t, err)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	keys := []string{"ok-0", "ok-1", "stuck"}
	w := &work{calls: map[string]int{}}
	loop, err := reconcile.New("bad\xff", w, reconcile.Keys(func() iter.Seq[string] { return slices.Values(keys) }),
		reconcile.WithMetrics(m), reconcile.WithResync(24*time.Hour, 0))
	require.NoError(t, err)
	require.NoError(t, m.AddLoop(loop))
	require.NoError(t, m.AddCache("apps\xfe", fakeCache{}))
	require.Error(t, m.AddCache("apps\xff", fakeCache{}), "the same label value as apps\\xfe: added twice")

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- loop.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-errc) }()
	require.Eventually(t, func() bool { return w.done() == len(keys) }, 10*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return loop.Info().Busy == 0 }, 10*time.Second, time.Millisecond)

	fams := scrape(t, srv.URL)
	bad := map[string]string{"controller": "bad\uFFFD"}
	require.Equal(t, 2.0, value(t, fams, "controller_runtime_reconcile_total", map[string]string{"controller": "bad\uFFFD", "result": "success"}))
	require.Equal(t, 1.0, value(t, fams, "controller_runtime_reconcile_errors_total", bad))
	require.Equal(t, uint64(3), histogram(t, fams, "controller_runtime_reconcile_time_seconds", bad).GetSampleCount())
	require.Equal(t, 3.0, value(t, fams, "workqueue_adds_total", map[string]string{"name": "bad\uFFFD", "controller": "bad\uFFFD"}))
	require.Equal(t, 1.0, value(t, fams, "steady_stalled_total", map[string]string{"controller": "bad\uFFFD", "reason": conditions.ReasonTerminal}))
	require.Equal(t, 1.0, value(t, fams, "steady_stalled_objects", bad))
	require.Equal(t, 9.0, value(t, fams, "steady_cache_objects", map[string]string{"cache": "apps\uFFFD"}))
}

// Every hook that takes a label value from its caller (the controller, a
// Stalled reason) labels it with U+FFFD for each run of invalid bytes,
// rather than panicking.
func TestHooksLabelInvalidUTF8WithU_FFFD(t *testing.T) {
	reg := prom.NewRegistry()
	m, err := steadyprom.New(reg)
	require.NoError(t, err)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	m.MaxConcurrency("x\xff", 3)
	m.ReconcileDone("x\xff", "odd\xff", time.Second)
	m.ReconcileError("x\xff", true)
	m.ReconcilePanic("x\xff")
	m.ActiveWorkers("x\xff", 2)
	m.Converged("x\xff", time.Second)
	m.Unconverged("x\xff", 4)
	m.Oscillation("x\xff", oscillation.Fight)
	m.Stalled("x\xff", "why\xfe")
	m.FenceRejected("x\xff")
	m.WriteDelayed("x\xff", time.Second)
	q := m.QueueMetrics("x\xff")
	q.Added()
	q.Retry()
	q.Depth(5)
	q.QueueLatency(time.Millisecond)
	q.WorkDuration(time.Millisecond)
	q.Unfinished(time.Second, time.Second)

	fams := scrape(t, srv.URL)
	x := map[string]string{"controller": "x\uFFFD"}
	wq := map[string]string{"name": "x\uFFFD", "controller": "x\uFFFD"}
	require.Equal(t, 3.0, value(t, fams, "controller_runtime_max_concurrent_reconciles", x))
	require.Equal(t, 1.0, value(t, fams, "controller_runtime_reconcile_total", map[string]string{"controller": "x\uFFFD", "result": "odd\uFFFD"}))
	require.Equal(t, 1.0, value(t, fams, "controller_runtime_terminal_reconcile_errors_total", x))
	require.Equal(t, 1.0, value(t, fams, "controller_runtime_reconcile_panics_total", x))
	require.Equal(t, 2.0, value(t, fams, "controller_runtime_active_workers", x))
	require.Equal(t, uint64(1), histogram(t, fams, "steady_time_to_converge_seconds", x).GetSampleCount())
	require.Equal(t, 4.0, value(t, fams, "steady_unconverged_objects", x))
	require.Equal(t, 1.0, value(t, fams, "steady_oscillations_total", map[string]string{"controller": "x\uFFFD", "kind": "Fight"}))
	require.Equal(t, 1.0, value(t, fams, "steady_stalled_total", map[string]string{"controller": "x\uFFFD", "reason": "why\uFFFD"}))
	require.Equal(t, 1.0, value(t, fams, "steady_fence_rejections_total", x))
	require.Equal(t, 1.0, value(t, fams, "steady_write_limit_delayed_total", x))
	require.Equal(t, 1.0, value(t, fams, "workqueue_adds_total", wq))
	require.Equal(t, 1.0, value(t, fams, "workqueue_retries_total", wq))
	require.Equal(t, 5.0, value(t, fams, "workqueue_depth", map[string]string{"name": "x\uFFFD", "controller": "x\uFFFD", "priority": ""}))
	require.Equal(t, uint64(1), histogram(t, fams, "workqueue_queue_duration_seconds", wq).GetSampleCount())
	require.Equal(t, uint64(1), histogram(t, fams, "workqueue_work_duration_seconds", wq).GetSampleCount())
	require.Equal(t, 1.0, value(t, fams, "workqueue_unfinished_work_seconds", wq))
}
