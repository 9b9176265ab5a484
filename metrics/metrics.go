// Package metrics defines the hooks a reconcile Loop reports its
// measurements to (Loop); a Loop's work queue reports to queue.Metrics,
// which Loop.QueueMetrics hands it. metrics/prometheus implements both.
package metrics

import (
	"time"

	"github.com/steady-go/steady/queue"
	"github.com/steady-go/steady/reconcile/oscillation"
)

// Loop receives a reconcile Loop's measurements (reconcile.WithMetrics).
// The semantics follow controller-runtime's controller_runtime_* metrics;
// every method takes the controller (Loop) name so one implementation can serve
// several Loops. Methods are
// called from worker goroutines and must be safe for concurrent use and
// cheap: they are on the hot path. A hook that panics is recovered where
// it was called, by the rule queue.Metrics states: the Loop logs the first
// panic once, at Error with the hook's name and stack, and then calls no
// hook of the set again (none of these methods, nor ActiveWorkersFunc,
// WriteDelayed, or the queue.Metrics QueueMetrics returned); the Loop's
// work goes on.
//
// The root module has no Prometheus dependency; adapt this interface to any
// metrics system (metrics/prometheus adapts it to Prometheus). NopLoop is
// the default; embed it in a type that implements only the hooks it needs.
type Loop interface {
	// ReconcileDone is called after every reconcile with the result label
	// ("success", "requeue", "requeue_after" or "error", as
	// controller_runtime_reconcile_total names them) and its duration:
	// reconcile_total{result} and the reconcile_time histogram.
	ReconcileDone(controller, result string, d time.Duration)
	// ReconcileError counts a reconcile that returned an error
	// (reconcile_errors_total); terminal is true for a Terminal error, which
	// also counts in terminal_reconcile_errors_total.
	ReconcileError(controller string, terminal bool)
	// ReconcilePanic counts a reconcile that panicked
	// (reconcile_panics_total), and a panic of any other function of the
	// user's that the Loop calls for its work (a ChangeFunc, a mapper, a
	// key lister, a ConditionWriter, a Source's Run). A reconcile's panic is
	// also reported as an error.
	ReconcilePanic(controller string)
	// ActiveWorkers sets the number of workers running a reconcile now,
	// before and after every reconcile. An implementation that also has a method
	// ActiveWorkersFunc(controller string, busy func() int) reads the
	// number when it is scraped instead: the Loop calls ActiveWorkersFunc
	// once, when Run starts, with a function that returns the number of
	// its workers holding a key now (from the queue's Get to its Done; 0
	// while the Loop is not leading), and then never calls ActiveWorkers:
	// per reconcile, two updates of a counter shared by the workers and
	// two hook calls less. busy is safe for concurrent use and costs
	// O(workers).
	ActiveWorkers(controller string, n int)
	// MaxConcurrency sets the configured number of workers.
	MaxConcurrency(controller string, n int)
	// Converged observes the time from a generation change to Ready at that
	// generation (the time-to-converge histogram).
	Converged(controller string, d time.Duration)
	// Unconverged sets the number of objects not yet Ready at their current
	// generation.
	Unconverged(controller string, n int)
	// Oscillation counts a detected oscillation of the given kind.
	Oscillation(controller string, kind oscillation.Kind)
	// Stalled counts the Loop marking a key Stalled, by reason: once when
	// the key becomes Stalled, and again when its reason changes or after
	// it was cleared; never for a reconcile that keeps it so, nor for a
	// rewrite at a new generation. It counts the Loop's decisions, so it
	// counts the same with or without a ConditionWriter (a restarted Loop
	// counts again a key whose object still shows its condition).
	Stalled(controller, reason string)
	// FenceRejected counts a write the store rejected because the Loop's
	// leadership term had ended: a reconcile whose error is
	// errors.Is(err, store.ErrFenced), or a Stalled write of the Loop's
	// rejected so. It is counted even when the term is over by the time
	// the Loop sees the error.
	FenceRejected(controller string)
	// QueueMetrics returns the hooks for the work queue of controller
	// (workqueue_* semantics: depth, adds, latency, work duration,
	// unfinished work, retries), or nil for none, in which case the queue
	// takes no timestamps. The Loop calls it once per leadership term, and
	// calls its Retry for every retry it schedules through backoff (a
	// failure, a RequeueAfterWrite that wrote nothing, or a revision conflict), as workqueue_retries_total
	// counts controller-runtime's rate-limited adds.
	QueueMetrics(controller string) queue.Metrics
}

// NopLoop discards every measurement. It is a Loop's default, and with it
// the Loop takes no timestamps for metrics. Embed it to implement only some
// of the hooks.
type NopLoop struct{}

// ReconcileDone implements Loop.
func (NopLoop) ReconcileDone(string, string, time.Duration) {}

// ReconcileError implements Loop.
func (NopLoop) ReconcileError(string, bool) {}

// ReconcilePanic implements Loop.
func (NopLoop) ReconcilePanic(string) {}

// ActiveWorkers implements Loop.
func (NopLoop) ActiveWorkers(string, int) {}

// MaxConcurrency implements Loop.
func (NopLoop) MaxConcurrency(string, int) {}

// Converged implements Loop.
func (NopLoop) Converged(string, time.Duration) {}

// Unconverged implements Loop.
func (NopLoop) Unconverged(string, int) {}

// Oscillation implements Loop.
func (NopLoop) Oscillation(string, oscillation.Kind) {}

// Stalled implements Loop.
func (NopLoop) Stalled(string, string) {}

// FenceRejected implements Loop.
func (NopLoop) FenceRejected(string) {}

// QueueMetrics implements Loop: no queue hooks.
func (NopLoop) QueueMetrics(string) queue.Metrics { return nil }

var _ Loop = NopLoop{}
