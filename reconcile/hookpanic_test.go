package reconcile

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/queue"
	"github.com/steady-go/steady/reconcile/oscillation"
)

// oneHookPanics is a metrics.Loop, with ActiveWorkersFunc, WriteDelayed and
// queue hooks, that records every hook call and panics in one hook, on
// every call of it.
type oneHookPanics struct {
	hook  string
	mu    sync.Mutex
	calls []string
}

func (m *oneHookPanics) call(hook string) {
	m.mu.Lock()
	m.calls = append(m.calls, hook)
	m.mu.Unlock()
	if hook == m.hook {
		panic("bug in " + hook)
	}
}

func (m *oneHookPanics) called() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.calls)
}

func (m *oneHookPanics) ReconcileDone(string, string, time.Duration) { m.call("ReconcileDone") }
func (m *oneHookPanics) ReconcileError(string, bool)                 { m.call("ReconcileError") }
func (m *oneHookPanics) ReconcilePanic(string)                       { m.call("ReconcilePanic") }
func (m *oneHookPanics) ActiveWorkers(string, int)                   { m.call("ActiveWorkers") }
func (m *oneHookPanics) MaxConcurrency(string, int)                  { m.call("MaxConcurrency") }
func (m *oneHookPanics) Converged(string, time.Duration)             { m.call("Converged") }
func (m *oneHookPanics) Unconverged(string, int)                     { m.call("Unconverged") }
func (m *oneHookPanics) Oscillation(string, oscillation.Kind)        { m.call("Oscillation") }
func (m *oneHookPanics) Stalled(string, string)                      { m.call("Stalled") }
func (m *oneHookPanics) FenceRejected(string)                        { m.call("FenceRejected") }
func (m *oneHookPanics) ActiveWorkersFunc(string, func() int)        { m.call("ActiveWorkersFunc") }
func (m *oneHookPanics) WriteDelayed(string, time.Duration)          { m.call("WriteDelayed") }
func (m *oneHookPanics) QueueMetrics(string) queue.Metrics {
	m.call("QueueMetrics")
	return oneQueueHookPanics{m}
}

type oneQueueHookPanics struct{ m *oneHookPanics }

func (q oneQueueHookPanics) Depth(int)                               { q.m.call("queue Depth") }
func (q oneQueueHookPanics) Added()                                  { q.m.call("queue Added") }
func (q oneQueueHookPanics) QueueLatency(time.Duration)              { q.m.call("queue QueueLatency") }
func (q oneQueueHookPanics) WorkDuration(time.Duration)              { q.m.call("queue WorkDuration") }
func (q oneQueueHookPanics) Unfinished(time.Duration, time.Duration) { q.m.call("queue Unfinished") }
func (q oneQueueHookPanics) Retry()                                  { q.m.call("queue Retry") }

// callHooks calls the hook named first, then every hook of g in name
// order (so that a panicky hook panics first); the queue hooks through
// the queue.Metrics qm that g's QueueMetrics returned.
func callHooks(g *guardedMetrics, qm queue.Metrics, first string) {
	hooks := map[string]func(){
		"ReconcileDone":      func() { g.ReconcileDone("c", "success", time.Second) },
		"ReconcileError":     func() { g.ReconcileError("c", false) },
		"ReconcilePanic":     func() { g.ReconcilePanic("c") },
		"ActiveWorkers":      func() { g.ActiveWorkers("c", 1) },
		"MaxConcurrency":     func() { g.MaxConcurrency("c", 1) },
		"Converged":          func() { g.Converged("c", time.Second) },
		"Unconverged":        func() { g.Unconverged("c", 1) },
		"Oscillation":        func() { g.Oscillation("c", oscillation.Fight) },
		"Stalled":            func() { g.Stalled("c", "Failing") },
		"FenceRejected":      func() { g.FenceRejected("c") },
		"QueueMetrics":       func() { g.QueueMetrics("c") },
		"ActiveWorkersFunc":  func() { g.activeWorkersFunc(g.m.(activeWorkersReader), "c", func() int { return 0 }) },
		"WriteDelayed":       func() { g.writeDelayed(g.m.(writeLimitMetrics), "c", time.Second) },
		"queue Depth":        func() { qm.Depth(1) },
		"queue Added":        func() { qm.Added() },
		"queue QueueLatency": func() { qm.QueueLatency(time.Second) },
		"queue WorkDuration": func() { qm.WorkDuration(time.Second) },
		"queue Unfinished":   func() { qm.Unfinished(time.Second, time.Second) },
		"queue Retry":        func() { qm.Retry() },
	}
	if qm == nil {
		for name := range hooks {
			if strings.HasPrefix(name, "queue ") {
				delete(hooks, name)
			}
		}
	}
	hooks[first]()
	for _, name := range slices.Sorted(maps.Keys(hooks)) {
		hooks[name]()
	}
}

// Every hook of a Loop's metrics (its 10 methods, QueueMetrics,
// ActiveWorkersFunc, WriteDelayed, and the 6 queue hooks QueueMetrics
// returned) that panics, on every call: the first panic is logged once at
// Error, naming the hook, and then no hook of the set is called again,
// however often the Loop calls them. (Before, every panic was logged and
// every hook called again: a hook panicking on each reconcile logged a
// stack on each.)
func TestEveryMetricHookThatPanicsIsLoggedOnceAndTurnsTheHooksOff(t *testing.T) {
	for _, hook := range []string{"ReconcileDone", "ReconcileError", "ReconcilePanic", "ActiveWorkers", "MaxConcurrency",
		"Converged", "Unconverged", "Oscillation", "Stalled", "FenceRejected", "QueueMetrics", "ActiveWorkersFunc",
		"WriteDelayed", "queue Depth", "queue Added", "queue QueueLatency", "queue WorkDuration", "queue Unfinished",
		"queue Retry"} {
		t.Run(hook, func(t *testing.T) {
			var logs logBuffer
			m := &oneHookPanics{hook: hook}
			g := &guardedMetrics{m: m, log: newLogger(&logs)}
			var qm queue.Metrics
			if hook != "QueueMetrics" {
				qm = g.QueueMetrics("c") // as a term starts
				require.NotNil(t, qm)
			}
			for range 3 {
				callHooks(g, qm, hook)
			}
			require.Nil(t, g.QueueMetrics("c"), "no queue hooks once the set is off")
			calls := m.called()
			require.Equal(t, hook, calls[len(calls)-1], "no hook called after %s panicked: %v", hook, calls)
			require.Len(t, slices.DeleteFunc(slices.Clone(calls), func(c string) bool { return c != hook }), 1, "one call of it")
			out := logs.String()
			require.Equal(t, 1, strings.Count(out, "\n"), "logged once: %s", out)
			named := hook
			if strings.Contains(hook, " ") {
				named = strconv.Quote(hook)
			}
			require.Contains(t, out, `level=ERROR msg="metrics hook panicked" hook=`+named+" ")
			require.Contains(t, out, "bug in "+hook)
			require.Contains(t, out, "hookpanic_test.go:", "with the stack")
		})
	}
}

// A Loop whose ReconcileDone hook panics on every reconcile: the panic is
// logged exactly once, the queue hooks of the same set stop too, and the
// Loop works on: every key reconciles, again at every resync.
func TestLoopMetricHookThatPanicsIsLoggedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		m := &oneHookPanics{hook: "ReconcileDone"}
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, keySet("a", "b", "c"), WithMetrics(m), WithResync(time.Minute, 0), WithWorkers(2),
			WithLogger(newLogger(&logs)))
		stop := start(t, l)
		time.Sleep(3*time.Minute + time.Second)
		synctest.Wait()
		require.NoError(t, stop())
		for _, k := range []string{"a", "b", "c"} {
			require.Equal(t, 4, s.count(k), "key %s: at start and at each of 3 resyncs", k)
		}
		out := logs.String()
		require.Equal(t, 1, strings.Count(out, "metrics hook panicked"), out)
		require.Contains(t, out, `hook=ReconcileDone`)
		// Each goroutine that calls hooks (the 2 workers, the queue's
		// Unfinished, the resync) may have been in one already, past its
		// check, when the first panic turned them off: none is called
		// after that. (Before, every hook went on: dozens of calls after
		// the first panic.)
		calls := m.called()
		require.LessOrEqual(t, strings.Count(strings.Join(calls, ","), "ReconcileDone"), 2, "%v", calls)
		first := slices.Index(calls, "ReconcileDone")
		require.LessOrEqual(t, len(calls[first+1:]), 4, "no hook called after the panic but those in flight: %v", calls)
	})
}
