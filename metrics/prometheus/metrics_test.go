package prometheus_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/steady-go/steady/backoff"
	steadyprom "github.com/steady-go/steady/metrics/prometheus"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
)

// work is a Reconciler with known outcomes per key: ok-* succeed, flaky
// fails three times then succeeds, boom panics once then succeeds, stuck
// fails with a Terminal error (Stalled at once), later asks to run again in
// an hour.
type work struct {
	mu    sync.Mutex
	calls map[string]int
	total int
}

func (w *work) Reconcile(_ context.Context, key string) (reconcile.Result, error) {
	w.mu.Lock()
	w.calls[key]++
	n := w.calls[key]
	w.total++
	w.mu.Unlock()
	switch key {
	case "flaky":
		if n <= 3 {
			return reconcile.Result{}, errors.New("flaky")
		}
	case "boom":
		if n == 1 {
			panic("boom")
		}
	case "stuck":
		return reconcile.Result{}, reconcile.Terminal(errors.New("bad spec"))
	case "later":
		return reconcile.Result{RequeueAfter: time.Hour}, nil
	}
	return reconcile.Result{}, nil
}

func (w *work) done() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.total
}

func TestScrapeAfterKnownWork(t *testing.T) {
	reg := prom.NewRegistry()
	m, err := steadyprom.New(reg)
	require.NoError(t, err)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	keys := []string{"ok-0", "ok-1", "ok-2", "ok-3", "ok-4", "flaky", "boom", "stuck", "later"}
	w := &work{calls: map[string]int{}}
	loop, err := reconcile.New("app", w, reconcile.Keys(func() iter.Seq[string] { return slices.Values(keys) }),
		reconcile.WithWorkers(2), reconcile.WithMetrics(m), reconcile.WithResync(24*time.Hour, 0),
		reconcile.WithBackoff(backoff.Policy{Base: time.Millisecond, Factor: 1, Cap: time.Millisecond}),
		reconcile.WithRetryLimit(backoff.BucketConfig{Rate: rate.Inf}))
	require.NoError(t, err)
	require.NoError(t, m.AddLoop(loop))
	require.NoError(t, m.AddCache("apps", fakeCache{}))

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- loop.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-errc) }()

	// 5 ok + 4 flaky + 2 boom + 1 stuck + 1 later reconciles.
	const want = 13
	require.Eventually(t, func() bool { return w.done() == want }, 10*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return loop.Info().Busy == 0 }, 10*time.Second, time.Millisecond)

	fams := scrape(t, srv.URL)
	app := map[string]string{"controller": "app"}
	wq := map[string]string{"name": "app", "controller": "app"}

	// controller-runtime's series.
	require.Equal(t, 7.0, value(t, fams, "controller_runtime_reconcile_total", map[string]string{"controller": "app", "result": "success"}), "5 ok, flaky and boom at last")
	require.Equal(t, 5.0, value(t, fams, "controller_runtime_reconcile_total", map[string]string{"controller": "app", "result": "error"}), "3 flaky, 1 panic, 1 terminal")
	require.Equal(t, 1.0, value(t, fams, "controller_runtime_reconcile_total", map[string]string{"controller": "app", "result": "requeue_after"}))
	require.Equal(t, 0.0, value(t, fams, "controller_runtime_reconcile_total", map[string]string{"controller": "app", "result": "requeue"}))
	require.Equal(t, 5.0, value(t, fams, "controller_runtime_reconcile_errors_total", app))
	require.Equal(t, 1.0, value(t, fams, "controller_runtime_terminal_reconcile_errors_total", app))
	require.Equal(t, 1.0, value(t, fams, "controller_runtime_reconcile_panics_total", app))
	require.Equal(t, 2.0, value(t, fams, "controller_runtime_max_concurrent_reconciles", app))
	require.Equal(t, 0.0, value(t, fams, "controller_runtime_active_workers", app))
	h := histogram(t, fams, "controller_runtime_reconcile_time_seconds", app)
	require.Equal(t, uint64(want), h.GetSampleCount())
	require.Len(t, h.GetBucket(), 41, "controller-runtime's 40 buckets and +Inf")
	require.Equal(t, 0.005, h.GetBucket()[0].GetUpperBound())
	require.Equal(t, 60.0, h.GetBucket()[39].GetUpperBound())

	// client-go's workqueue series, as controller-runtime registers them.
	require.Equal(t, 0.0, value(t, fams, "workqueue_depth", map[string]string{"name": "app", "controller": "app", "priority": ""}))
	require.Equal(t, float64(want), value(t, fams, "workqueue_adds_total", wq), "9 listed keys, 3 flaky retries, 1 boom retry")
	require.Equal(t, 4.0, value(t, fams, "workqueue_retries_total", wq), "every retryable error: 3 flaky, 1 panic")
	for _, name := range []string{"workqueue_queue_duration_seconds", "workqueue_work_duration_seconds"} {
		h := histogram(t, fams, name, wq)
		require.Equal(t, uint64(want), h.GetSampleCount(), name)
		require.Len(t, h.GetBucket(), 13, "12 exponential buckets and +Inf: "+name)
		require.InDelta(t, 1e-8, h.GetBucket()[0].GetUpperBound(), 1e-20, name)
	}
	require.Equal(t, dto.MetricType_GAUGE, fams["workqueue_unfinished_work_seconds"].GetType())
	require.Equal(t, dto.MetricType_GAUGE, fams["workqueue_longest_running_processor_seconds"].GetType())

	// steady's own series.
	require.Equal(t, 1.0, value(t, fams, "steady_stalled_total", map[string]string{"controller": "app", "reason": conditions.ReasonTerminal}))
	require.Equal(t, 1.0, value(t, fams, "steady_stalled_objects", app), "stuck")
	require.Equal(t, 0.0, value(t, fams, "steady_failing_keys", app), "a Terminal error resets the failure count")
	require.Equal(t, 1.0, value(t, fams, "steady_queue_keys", map[string]string{"controller": "app", "state": "delayed"}), "later")
	for _, state := range []string{"ready", "processing", "backing_off", "held"} {
		require.Equal(t, 0.0, value(t, fams, "steady_queue_keys", map[string]string{"controller": "app", "state": state}), state)
	}
	require.Equal(t, 1.0, value(t, fams, "steady_leading", app))
	require.Equal(t, 0.0, value(t, fams, "steady_leader_term", app), "no elector: no fence")
	cache := map[string]string{"cache": "apps"}
	require.Equal(t, 1.0, value(t, fams, "steady_cache_synced", cache))
	require.Equal(t, 9.0, value(t, fams, "steady_cache_objects", cache))
	require.Equal(t, 42.0, value(t, fams, "steady_cache_revision", cache))
	require.Equal(t, 2.0, value(t, fams, "steady_cache_relists_total", cache))
	require.Equal(t, 3.0, value(t, fams, "steady_cache_drift_repairs_total", cache))
	require.Equal(t, 1.0, value(t, fams, "steady_cache_undecodable_values", cache))
	require.Equal(t, 4.0, value(t, fams, "steady_cache_panics_total", cache))
}

func TestNewRefusesASecondRegistrationAndRegistersNothing(t *testing.T) {
	reg := prom.NewRegistry()
	_, err := steadyprom.New(reg)
	require.NoError(t, err)
	_, err = steadyprom.New(reg)
	require.Error(t, err)
	_, err = steadyprom.New(nil)
	require.Error(t, err)

	// A registry holding one of the names (controller-runtime's) gets none
	// of steady's series.
	other := prom.NewRegistry()
	other.MustRegister(prom.NewCounterVec(prom.CounterOpts{Name: "workqueue_adds_total", Help: "x"}, []string{"name"}))
	_, err = steadyprom.New(other)
	require.Error(t, err)
	fams, err := other.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		require.Equal(t, "workqueue_adds_total", f.GetName())
	}
}

// A typed nil (a nil *prom.Registry in a Registerer) is refused by New
// with an error, not accepted to panic at the first Register.
func TestNewRefusesATypedNilRegisterer(t *testing.T) {
	var reg *prom.Registry
	m, err := steadyprom.New(reg)
	require.ErrorContains(t, err, "nil Registerer")
	require.Nil(t, m)
}

// A typed-nil Loop or cache is refused when added, not accepted to panic
// at the first scrape.
func TestAddLoopAndAddCacheRefuseTypedNils(t *testing.T) {
	m, err := steadyprom.New(prom.NewRegistry())
	require.NoError(t, err)
	var l *reconcile.Loop[string]
	require.ErrorContains(t, m.AddLoop(l), "nil Loop")
	var c *fakeCachePtr
	require.ErrorContains(t, m.AddCache("c", c), "nil cache")
}

type fakeCachePtr struct{ fakeCache }

func TestAddLoopAndAddCacheRefuseNilAndDuplicates(t *testing.T) {
	m, err := steadyprom.New(prom.NewRegistry())
	require.NoError(t, err)
	require.Error(t, m.AddLoop(nil))
	require.Error(t, m.AddCache("c", nil))
	require.NoError(t, m.AddCache("c", fakeCache{}))
	require.Error(t, m.AddCache("c", fakeCache{}))
}

// fakeCache has the counters a store cache may grow.
type fakeCache struct{}

func (fakeCache) HasSynced() bool     { return true }
func (fakeCache) Revision() int64     { return 42 }
func (fakeCache) Len() int            { return 9 }
func (fakeCache) Relists() int64      { return 2 }
func (fakeCache) DriftRepairs() int64 { return 3 }
func (fakeCache) Undecodable() int    { return 1 }
func (fakeCache) Panics() int64       { return 4 }

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

func find(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	f, ok := fams[name]
	require.True(t, ok, "no series %s", name)
next:
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		for _, l := range m.GetLabel() {
			if v, ok := labels[l.GetName()]; !ok || v != l.GetValue() {
				continue next
			}
		}
		return m
	}
	require.Fail(t, fmt.Sprintf("no %s%v", name, labels))
	return nil
}

func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	m := find(t, fams, name, labels)
	switch fams[name].GetType() {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue()
	}
	require.Fail(t, "not a counter or gauge: "+name)
	return 0
}

func histogram(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Histogram {
	t.Helper()
	require.Equal(t, dto.MetricType_HISTOGRAM, fams[name].GetType(), name)
	return find(t, fams, name, labels).GetHistogram()
}

// The Loop finds the write-limit hook by this method set.
var _ interface {
	WriteDelayed(controller string, d time.Duration)
} = (*steadyprom.Metrics)(nil)

func TestHooksTheLoopCallsRarely(t *testing.T) {
	reg := prom.NewRegistry()
	m, err := steadyprom.New(reg)
	require.NoError(t, err)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	m.Oscillation("app", oscillation.Fight)
	m.Oscillation("app", oscillation.Fight)
	m.Oscillation("app", oscillation.NoProgress)
	m.Converged("app", 3*time.Second)
	m.Unconverged("app", 4)
	m.FenceRejected("app")
	m.WriteDelayed("app", 1500*time.Millisecond)
	m.WriteDelayed("app", 500*time.Millisecond)
	m.ActiveWorkers("app", 3) // a controller without ActiveWorkersFunc
	q := m.QueueMetrics("app")
	q.Depth(5)
	q.Unfinished(3*time.Second, 2*time.Second)
	q.Retry()

	fams := scrape(t, srv.URL)
	app := map[string]string{"controller": "app"}
	wq := map[string]string{"name": "app", "controller": "app"}
	require.Equal(t, 2.0, value(t, fams, "steady_oscillations_total", map[string]string{"controller": "app", "kind": "Fight"}))
	require.Equal(t, 2.0, value(t, fams, "steady_write_limit_delayed_total", app))
	require.Equal(t, 2.0, value(t, fams, "steady_write_limit_delay_seconds_total", app))
	require.Equal(t, 1.0, value(t, fams, "steady_oscillations_total", map[string]string{"controller": "app", "kind": "NoProgress"}))
	h := histogram(t, fams, "steady_time_to_converge_seconds", app)
	require.Equal(t, uint64(1), h.GetSampleCount())
	require.Equal(t, 3.0, h.GetSampleSum())
	require.Equal(t, 4.0, value(t, fams, "steady_unconverged_objects", app))
	require.Equal(t, 1.0, value(t, fams, "steady_fence_rejections_total", app))
	require.Equal(t, 3.0, value(t, fams, "controller_runtime_active_workers", app))
	require.Equal(t, 5.0, value(t, fams, "workqueue_depth", map[string]string{"name": "app", "controller": "app", "priority": ""}))
	require.Equal(t, 3.0, value(t, fams, "workqueue_unfinished_work_seconds", wq))
	require.Equal(t, 2.0, value(t, fams, "workqueue_longest_running_processor_seconds", wq))
	require.Equal(t, 1.0, value(t, fams, "workqueue_retries_total", wq))
}

// The workqueue duration histograms are classic only by default, and
// native as well with WithNativeHistograms, as controller-runtime's are.
func TestNativeHistogramsAreOptIn(t *testing.T) {
	for _, native := range []bool{false, true} {
		reg := prom.NewRegistry()
		var opts []steadyprom.Option
		if native {
			opts = append(opts, steadyprom.WithNativeHistograms())
		}
		m, err := steadyprom.New(reg, opts...)
		require.NoError(t, err)
		q := m.QueueMetrics("app")
		q.QueueLatency(3 * time.Microsecond)
		q.WorkDuration(5 * time.Millisecond)
		fams, err := reg.Gather()
		require.NoError(t, err)
		byName := map[string]*dto.MetricFamily{}
		for _, f := range fams {
			byName[f.GetName()] = f
		}
		for name, v := range map[string]float64{"workqueue_queue_duration_seconds": 3e-6, "workqueue_work_duration_seconds": 5e-3} {
			h := histogram(t, byName, name, map[string]string{"name": "app", "controller": "app"})
			require.Equal(t, uint64(1), h.GetSampleCount(), name)
			require.InDelta(t, v, h.GetSampleSum(), 1e-15, name)
			require.Len(t, h.GetBucket(), 12, "classic buckets either way: "+name)
			if native {
				require.Equal(t, int32(3), h.GetSchema(), "factor 1.1: schema 3: "+name)
				require.Equal(t, []int64{1}, h.GetPositiveDelta(), name)
			} else {
				require.Empty(t, h.GetPositiveSpan(), name)
				require.Zero(t, h.GetSchema(), name)
			}
		}
	}
}

// controller_runtime_active_workers is read from the Loop at scrape: the
// workers holding a key then.
func TestActiveWorkersAreReadAtScrape(t *testing.T) {
	reg := prom.NewRegistry()
	m, err := steadyprom.New(reg)
	require.NoError(t, err)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	started, release := make(chan string, 2), make(chan struct{})
	r := reconcile.Func[string](func(_ context.Context, key string) (reconcile.Result, error) {
		started <- key
		<-release
		return reconcile.Result{}, nil
	})
	loop, err := reconcile.New("app", r, reconcile.Keys(func() iter.Seq[string] { return slices.Values([]string{"a", "b"}) }),
		reconcile.WithWorkers(3), reconcile.WithMetrics(m), reconcile.WithResync(24*time.Hour, 0))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- loop.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-errc) }()

	<-started
	<-started
	app := map[string]string{"controller": "app"}
	require.Equal(t, 2.0, value(t, scrape(t, srv.URL), "controller_runtime_active_workers", app), "a and b, of 3 workers")
	close(release)
	require.Eventually(t, func() bool { return loop.Info().Busy == 0 }, 10*time.Second, time.Millisecond)
	require.Equal(t, 0.0, value(t, scrape(t, srv.URL), "controller_runtime_active_workers", app))
	require.Equal(t, 3.0, value(t, scrape(t, srv.URL), "controller_runtime_max_concurrent_reconciles", app))
}
