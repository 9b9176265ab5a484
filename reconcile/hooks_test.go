package reconcile

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/metrics"
	"github.com/steady-go/steady/queue"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
)

// hookCounter counts the calls of every metrics.Loop and queue.Metrics hook by
// method name.
type hookCounter struct {
	mu    sync.Mutex
	calls map[string]int
}

func (h *hookCounter) hit(name string) {
	h.mu.Lock()
	h.calls[name]++
	h.mu.Unlock()
}

func (h *hookCounter) ReconcileDone(string, string, time.Duration) { h.hit("ReconcileDone") }
func (h *hookCounter) ReconcileError(string, bool)                 { h.hit("ReconcileError") }
func (h *hookCounter) ReconcilePanic(string)                       { h.hit("ReconcilePanic") }
func (h *hookCounter) ActiveWorkers(string, int)                   { h.hit("ActiveWorkers") }
func (h *hookCounter) MaxConcurrency(string, int)                  { h.hit("MaxConcurrency") }
func (h *hookCounter) Converged(string, time.Duration)             { h.hit("Converged") }
func (h *hookCounter) Unconverged(string, int)                     { h.hit("Unconverged") }
func (h *hookCounter) Oscillation(string, oscillation.Kind)        { h.hit("Oscillation") }
func (h *hookCounter) Stalled(string, string)                      { h.hit("Stalled") }
func (h *hookCounter) FenceRejected(string)                        { h.hit("FenceRejected") }
func (h *hookCounter) QueueMetrics(string) queue.Metrics           { h.hit("QueueMetrics"); return queueHooks{h} }

type queueHooks struct{ h *hookCounter }

func (q queueHooks) Depth(int)                     { q.h.hit("queue.Depth") }
func (q queueHooks) Added()                        { q.h.hit("queue.Added") }
func (q queueHooks) QueueLatency(time.Duration)    { q.h.hit("queue.QueueLatency") }
func (q queueHooks) WorkDuration(time.Duration)    { q.h.hit("queue.WorkDuration") }
func (q queueHooks) Unfinished(_, _ time.Duration) { q.h.hit("queue.Unfinished") }
func (q queueHooks) Retry()                        { q.h.hit("queue.Retry") }

// Every documented metric hook fires: each method of metrics.Loop and of the
// queue.Metrics it returns is called in a run that fails, is fenced,
// panics, requeues, converges and writes beyond its budget.
func TestEveryMetricHookFires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		for _, name := range []string{"fail", "fenced", "panic", "ready", "storm"} {
			e.create(t, "user", &app{Meta: store.Meta{Name: name}, Spec: appSpec{Replicas: 1}})
		}
		storms := 0
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			switch key {
			case "fail":
				return Result{}, errBoom
			case "fenced":
				return Result{}, fmt.Errorf("write: %w", store.ErrFenced)
			case "panic":
				panic("boom")
			case "ready":
				o, _ := e.cache.Get(key)
				ready := store.Condition{Type: conditions.Ready, Status: store.ConditionTrue, Reason: "Done", ObservedGeneration: o.Meta.Generation}
				_, err := e.st.As("test").ApplyStatus(ctx, key, nil, []store.Condition{ready})
				return Result{}, err
			}
			// Bounded, so that a storm the Loop fails to pace ends and the
			// test fails instead of writing forever in one instant of the
			// bubble's clock.
			if storms == 5000 {
				return Result{}, nil
			}
			storms++
			_, err := e.st.As("test").ApplyStatus(ctx, key, appStatus{Replicas: storms}, nil)
			return Result{RequeueAfterWrite: true}, err
		})
		h := &hookCounter{calls: map[string]int{}}
		l := mustNew(t, r, FromStore(e.cache, e.st), append(fixedBackoff(), WithStallAfter(1), WithMetrics(h))...)
		stop := start(t, l)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.NoError(t, stop())

		for _, typ := range []reflect.Type{reflect.TypeFor[metrics.Loop](), reflect.TypeFor[queue.Metrics]()} {
			prefix := ""
			if typ == reflect.TypeFor[queue.Metrics]() {
				prefix = "queue."
			}
			for i := range typ.NumMethod() {
				name := prefix + typ.Method(i).Name
				// Before: queue.Retry never fired.
				require.Positive(t, h.calls[name], "%s never fired", name)
			}
		}
	})
}
