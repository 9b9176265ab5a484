package prometheus

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/steady-go/steady/internal/nilness"
	"github.com/steady-go/steady/metrics"
	"github.com/steady-go/steady/queue"
	"github.com/steady-go/steady/reconcile/oscillation"
)

// reconcileBuckets are controller-runtime's buckets for
// controller_runtime_reconcile_time_seconds.
var reconcileBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
	1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60}

// Metrics implements metrics.Loop (and, through QueueMetrics,
// queue.Metrics) on Prometheus series; see the package documentation for
// the series. Create it with New; one Metrics serves any number of Loops.
type Metrics struct {
	reconcileTotal  *prom.CounterVec
	reconcileErrors *prom.CounterVec
	terminalErrors  *prom.CounterVec
	panics          *prom.CounterVec
	reconcileTime   *histVec
	maxConcurrent   *prom.GaugeVec
	activeWorkers   *activeVec

	depth        *prom.GaugeVec
	adds         *prom.CounterVec
	latency      prom.Collector // *histVec, or *prom.HistogramVec WithNativeHistograms
	workDuration prom.Collector
	unfinished   *prom.GaugeVec
	longest      *prom.GaugeVec
	retries      *prom.CounterVec

	stalled         *prom.CounterVec
	oscillations    *prom.CounterVec
	converge        *prom.HistogramVec
	unconverged     *prom.GaugeVec
	fenceRejections *prom.CounterVec
	writesDelayed   *prom.CounterVec
	writeDelay      *prom.CounterVec

	state *stateCollector

	loops sync.Map                   // controller name → *loopSeries
	last  atomic.Pointer[loopSeries] // the series looked up last: most programs run one Loop
}

var (
	_ metrics.Loop                                       = (*Metrics)(nil)
	_ interface{ ActiveWorkersFunc(string, func() int) } = (*Metrics)(nil)
)

// Option configures New.
type Option func(*options)

type options struct{ native, noRuntime bool }

// WithNativeHistograms makes workqueue_queue_duration_seconds and
// workqueue_work_duration_seconds native histograms as well as classic
// ones, as controller-runtime registers them (bucket factor 1.1, at most
// 100 buckets, reset after an hour at the earliest). They are off by
// default: a native observation costs a sparse-bucket lookup, the largest
// share of the adapter's cost per reconcile, and only a scraper that
// negotiates the protobuf format sees them.
func WithNativeHistograms() Option { return func(o *options) { o.native = true } }

// WithoutRuntimeCollectors leaves the Go and process collectors out of
// New, for a registry that has its own variant of them (a Go collector
// with other runtime/metrics rules, say), which New's would clash with.
func WithoutRuntimeCollectors() Option { return func(o *options) { o.noRuntime = true } }

// New creates the series and registers them on reg, with client_golang's
// Go and process collectors (go_*, process_*) beside them, as
// controller-runtime's metrics registry holds them: a registry that holds
// those two already keeps its own (WithoutRuntimeCollectors leaves them
// out). It returns an error, and registers nothing, when reg is nil (a nil
// *prometheus.Registry included) or already holds a series of the same
// name (controller-runtime's, say).
func New(reg prom.Registerer, opts ...Option) (*Metrics, error) {
	if nilness.IsNil(reg) {
		return nil, errors.New("steady prometheus: nil Registerer")
	}
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	ctl := []string{"controller"}
	wq := []string{"name", "controller"}
	wqHist := func(name, help string) prom.Collector {
		if !o.native {
			return newHistVec("workqueue_"+name, help, wq, prom.ExponentialBuckets(10e-9, 10, 12))
		}
		return prom.NewHistogramVec(prom.HistogramOpts{
			Subsystem: "workqueue", Name: name, Help: help,
			Buckets:                         prom.ExponentialBuckets(10e-9, 10, 12),
			NativeHistogramBucketFactor:     1.1,
			NativeHistogramMaxBucketNumber:  100,
			NativeHistogramMinResetDuration: time.Hour,
		}, wq)
	}
	m := &Metrics{
		reconcileTotal: prom.NewCounterVec(prom.CounterOpts{Name: "controller_runtime_reconcile_total",
			Help: "Total number of reconciliations per controller"}, []string{"controller", "result"}),
		reconcileErrors: prom.NewCounterVec(prom.CounterOpts{Name: "controller_runtime_reconcile_errors_total",
			Help: "Total number of reconciliation errors per controller"}, ctl),
		terminalErrors: prom.NewCounterVec(prom.CounterOpts{Name: "controller_runtime_terminal_reconcile_errors_total",
			Help: "Total number of terminal reconciliation errors per controller"}, ctl),
		panics: prom.NewCounterVec(prom.CounterOpts{Name: "controller_runtime_reconcile_panics_total",
			Help: "Total number of reconciliation panics per controller"}, ctl),
		reconcileTime: newHistVec("controller_runtime_reconcile_time_seconds",
			"Length of time per reconciliation per controller", ctl, reconcileBuckets),
		maxConcurrent: prom.NewGaugeVec(prom.GaugeOpts{Name: "controller_runtime_max_concurrent_reconciles",
			Help: "Maximum number of concurrent reconciles per controller"}, ctl),
		activeWorkers: &activeVec{desc: prom.NewDesc("controller_runtime_active_workers",
			"Number of currently used workers per controller", ctl, nil), series: map[string]*active{}},

		depth: prom.NewGaugeVec(prom.GaugeOpts{Subsystem: "workqueue", Name: "depth",
			Help: "Current depth of workqueue by workqueue and priority"}, []string{"name", "controller", "priority"}),
		adds: prom.NewCounterVec(prom.CounterOpts{Subsystem: "workqueue", Name: "adds_total",
			Help: "Total number of adds handled by workqueue"}, wq),
		latency: wqHist("queue_duration_seconds",
			"How long in seconds an item stays in workqueue before being requested"),
		workDuration: wqHist("work_duration_seconds",
			"How long in seconds processing an item from workqueue takes."),
		unfinished: prom.NewGaugeVec(prom.GaugeOpts{Subsystem: "workqueue", Name: "unfinished_work_seconds",
			Help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
				"Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases."}, wq),
		longest: prom.NewGaugeVec(prom.GaugeOpts{Subsystem: "workqueue", Name: "longest_running_processor_seconds",
			Help: "How many seconds has the longest running processor for workqueue been running."}, wq),
		retries: prom.NewCounterVec(prom.CounterOpts{Subsystem: "workqueue", Name: "retries_total",
			Help: "Total number of retries handled by workqueue"}, wq),

		stalled: prom.NewCounterVec(prom.CounterOpts{Name: "steady_stalled_total",
			Help: "Stalled conditions set by the Loop, by reason"}, []string{"controller", "reason"}),
		oscillations: prom.NewCounterVec(prom.CounterOpts{Name: "steady_oscillations_total",
			Help: "Oscillations detected (a fight over a field, or writes without progress), by kind"}, []string{"controller", "kind"}),
		converge: prom.NewHistogramVec(prom.HistogramOpts{Name: "steady_time_to_converge_seconds",
			Help:    "Time from a generation change of an object to Ready at that generation",
			Buckets: prom.ExponentialBuckets(0.1, 2, 16)}, ctl),
		unconverged: prom.NewGaugeVec(prom.GaugeOpts{Name: "steady_unconverged_objects",
			Help: "Objects not yet Ready at their current generation"}, ctl),
		fenceRejections: prom.NewCounterVec(prom.CounterOpts{Name: "steady_fence_rejections_total",
			Help: "Writes the store rejected because the writer's leadership term had ended"}, ctl),
		writesDelayed: prom.NewCounterVec(prom.CounterOpts{Name: "steady_write_limit_delayed_total",
			Help: "Writes the Loop's write limit delayed"}, ctl),
		writeDelay: prom.NewCounterVec(prom.CounterOpts{Name: "steady_write_limit_delay_seconds_total",
			Help: "Time the Loop's writes waited for its write limit"}, ctl),

		state: newStateCollector(),
	}
	cs := []prom.Collector{
		m.reconcileTotal, m.reconcileErrors, m.terminalErrors, m.panics, m.reconcileTime, m.maxConcurrent, m.activeWorkers,
		m.depth, m.adds, m.latency, m.workDuration, m.unfinished, m.longest, m.retries,
		m.stalled, m.oscillations, m.converge, m.unconverged, m.fenceRejections, m.writesDelayed, m.writeDelay, m.state,
	}
	runtimeFrom := len(cs)
	if !o.noRuntime {
		cs = append(cs, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	var done []prom.Collector
	for i, c := range cs {
		err := reg.Register(c)
		switch {
		case err == nil:
			done = append(done, c)
		case i >= runtimeFrom && errors.As(err, new(prom.AlreadyRegisteredError)):
			// The registry's own Go or process collector serves them.
		default:
			for _, c := range done {
				reg.Unregister(c)
			}
			return nil, fmt.Errorf("steady prometheus: %w", err)
		}
	}
	return m, nil
}

// loopSeries are one controller's series, bound to their labels once.
type loopSeries struct {
	name                                    string // as the hooks get it
	label                                   string // labelValue(name)
	success, errored, requeue, requeueAfter prom.Counter
	errors, terminal, panics                prom.Counter
	time                                    *hist
	converge                                prom.Observer
	active                                  *active
	max, unconverged                        prom.Gauge
}

// loop returns controller's series, creating them on first use.
func (m *Metrics) loop(controller string) *loopSeries {
	if s := m.last.Load(); s != nil && s.name == controller {
		return s
	}
	if s, ok := m.loops.Load(controller); ok {
		m.last.Store(s.(*loopSeries))
		return s.(*loopSeries)
	}
	label := labelValue(controller)
	c := prom.Labels{"controller": label}
	result := func(r string) prom.Counter {
		return m.reconcileTotal.With(prom.Labels{"controller": label, "result": r})
	}
	s := &loopSeries{
		name: controller, label: label,
		success: result("success"), errored: result("error"), requeue: result("requeue"), requeueAfter: result("requeue_after"),
		errors: m.reconcileErrors.With(c), terminal: m.terminalErrors.With(c), panics: m.panics.With(c),
		time: m.reconcileTime.with(label), converge: m.converge.With(c),
		active: m.activeWorkers.with(label), max: m.maxConcurrent.With(c), unconverged: m.unconverged.With(c),
	}
	// Binding creates every series at 0 (the Loop's first hook is
	// MaxConcurrency, at Run), as controller-runtime's exist once a
	// controller starts.
	actual, _ := m.loops.LoadOrStore(controller, s)
	return actual.(*loopSeries)
}

// labelValue is s as a label value: Prometheus refuses (client_golang
// panics on) a label value that is not valid UTF-8, and a Loop's name, a
// cache's or a Stalled reason need not be, so each run of invalid bytes
// becomes one U+FFFD. Names that differ only in invalid bytes share their
// series. A valid s is returned as is, with no allocation.
func labelValue(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// ReconcileDone implements metrics.Loop: reconcile_total{result} and
// the reconcile_time histogram.
func (m *Metrics) ReconcileDone(controller, result string, d time.Duration) {
	s := m.loop(controller)
	switch result {
	case "success":
		s.success.Inc()
	case "error":
		s.errored.Inc()
	case "requeue":
		s.requeue.Inc()
	case "requeue_after":
		s.requeueAfter.Inc()
	default:
		m.reconcileTotal.WithLabelValues(s.label, labelValue(result)).Inc()
	}
	s.time.observe(d)
}

// ReconcileError implements metrics.Loop: reconcile_errors_total, and
// terminal_reconcile_errors_total for a Terminal error.
func (m *Metrics) ReconcileError(controller string, terminal bool) {
	s := m.loop(controller)
	s.errors.Inc()
	if terminal {
		s.terminal.Inc()
	}
}

// ReconcilePanic implements metrics.Loop: reconcile_panics_total.
func (m *Metrics) ReconcilePanic(controller string) { m.loop(controller).panics.Inc() }

// ActiveWorkers implements metrics.Loop: active_workers, for a
// controller whose Loop has not given ActiveWorkersFunc.
func (m *Metrics) ActiveWorkers(controller string, n int) {
	m.loop(controller).active.n.Store(int64(n))
}

// ActiveWorkersFunc is the optional hook of metrics.Loop (see its
// ActiveWorkers) that a Loop finds on its Metrics: the Loop gives
// busy when it runs, and active_workers is read from it at every scrape
// (the Loop then calls no ActiveWorkers). A later call for the same
// controller replaces busy.
func (m *Metrics) ActiveWorkersFunc(controller string, busy func() int) {
	m.loop(controller).active.busy.Store(&busy)
}

// activeVec is controller_runtime_active_workers: per controller, the
// Loop's busy function when it gave one, else the last ActiveWorkers.
type activeVec struct {
	desc   *prom.Desc
	mu     sync.Mutex
	series map[string]*active
}

type active struct {
	n    atomic.Int64
	busy atomic.Pointer[func() int]
}

func (v *activeVec) with(controller string) *active {
	v.mu.Lock()
	defer v.mu.Unlock()
	a := v.series[controller]
	if a == nil {
		a = &active{}
		v.series[controller] = a
	}
	return a
}

// Describe implements prom.Collector.
func (v *activeVec) Describe(ch chan<- *prom.Desc) { ch <- v.desc }

// Collect implements prom.Collector.
func (v *activeVec) Collect(ch chan<- prom.Metric) {
	v.mu.Lock()
	series := maps.Clone(v.series)
	v.mu.Unlock()
	for controller, a := range series {
		n := a.n.Load()
		if busy := a.busy.Load(); busy != nil {
			n = int64((*busy)())
		}
		ch <- prom.MustNewConstMetric(v.desc, prom.GaugeValue, float64(n), controller)
	}
}

// MaxConcurrency implements metrics.Loop: max_concurrent_reconciles.
func (m *Metrics) MaxConcurrency(controller string, n int) { m.loop(controller).max.Set(float64(n)) }

// Converged implements metrics.Loop: steady_time_to_converge_seconds.
func (m *Metrics) Converged(controller string, d time.Duration) {
	m.loop(controller).converge.Observe(d.Seconds())
}

// Unconverged implements metrics.Loop: steady_unconverged_objects.
func (m *Metrics) Unconverged(controller string, n int) {
	m.loop(controller).unconverged.Set(float64(n))
}

// Oscillation implements metrics.Loop: steady_oscillations_total{kind}.
func (m *Metrics) Oscillation(controller string, kind oscillation.Kind) {
	m.oscillations.WithLabelValues(m.loop(controller).label, labelValue(kind.String())).Inc()
}

// Stalled implements metrics.Loop: steady_stalled_total{reason}.
func (m *Metrics) Stalled(controller, reason string) {
	m.stalled.WithLabelValues(m.loop(controller).label, labelValue(reason)).Inc()
}

// FenceRejected counts a write of controller's that the store rejected with
// store.ErrFenced (steady_fence_rejections_total). The reconcile Loop calls
// it for a reconcile whose error is errors.Is(err, store.ErrFenced) and
// for its own Stalled write rejected so.
func (m *Metrics) FenceRejected(controller string) {
	m.fenceRejections.WithLabelValues(m.loop(controller).label).Inc()
}

// WriteDelayed is the write-limit hook of a metrics.Loop (reconcile.WithWriteLimit): a write of
// controller's that its write limit (reconcile.WithWriteLimit) delayed by d
// (steady_write_limit_delayed_total, steady_write_limit_delay_seconds_total).
func (m *Metrics) WriteDelayed(controller string, d time.Duration) {
	label := m.loop(controller).label
	m.writesDelayed.WithLabelValues(label).Inc()
	m.writeDelay.WithLabelValues(label).Add(d.Seconds())
}

// QueueMetrics implements metrics.Loop: the workqueue_* series of
// controller's queue, with name and controller both the Loop's name.
func (m *Metrics) QueueMetrics(controller string) queue.Metrics {
	label := m.loop(controller).label
	l := prom.Labels{"name": label, "controller": label}
	q := &queueSeries{
		depth:      m.depth.With(prom.Labels{"name": label, "controller": label, "priority": ""}),
		adds:       m.adds.With(l),
		unfinished: m.unfinished.With(l),
		longest:    m.longest.With(l),
		retries:    m.retries.With(l),
	}
	if v, ok := m.latency.(*histVec); ok {
		q.latency, q.work = v.with(label, label), m.workDuration.(*histVec).with(label, label)
	} else {
		q.nativeLatency = m.latency.(*prom.HistogramVec).With(l)
		q.nativeWork = m.workDuration.(*prom.HistogramVec).With(l)
	}
	return q
}

// queueSeries implements queue.Metrics on one queue's bound series.
type queueSeries struct {
	depth, unfinished, longest prom.Gauge
	adds, retries              prom.Counter
	latency, work              *hist         // nil WithNativeHistograms
	nativeLatency, nativeWork  prom.Observer // WithNativeHistograms
}

func (q *queueSeries) Depth(n int) { q.depth.Set(float64(n)) }
func (q *queueSeries) Added()      { q.adds.Inc() }
func (q *queueSeries) Retry()      { q.retries.Inc() }

func (q *queueSeries) QueueLatency(d time.Duration) {
	if q.latency != nil {
		q.latency.observe(d)
		return
	}
	q.nativeLatency.Observe(d.Seconds())
}

func (q *queueSeries) WorkDuration(d time.Duration) {
	if q.work != nil {
		q.work.observe(d)
		return
	}
	q.nativeWork.Observe(d.Seconds())
}

func (q *queueSeries) Unfinished(total, longest time.Duration) {
	q.unfinished.Set(total.Seconds())
	q.longest.Set(longest.Seconds())
}
