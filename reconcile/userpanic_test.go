package reconcile

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/queue"
	"github.com/steady-go/steady/reconcile/oscillation"
)

// Each test here covers one place where the Loop calls a function of the
// user's. A panic there is reported like a reconcile panic (logged at
// Error, bounded, with the stack; counted), never a crash of the process.

// panickyMetrics panics in every hook; its queue hooks panic too.
type panickyMetrics struct{ noQueue bool }

func (panickyMetrics) ReconcileDone(string, string, time.Duration) { panic("ReconcileDone") }
func (panickyMetrics) ReconcileError(string, bool)                 { panic("ReconcileError") }
func (panickyMetrics) ReconcilePanic(string)                       { panic("ReconcilePanic") }
func (panickyMetrics) ActiveWorkers(string, int)                   { panic("ActiveWorkers") }
func (panickyMetrics) MaxConcurrency(string, int)                  { panic("MaxConcurrency") }
func (panickyMetrics) Converged(string, time.Duration)             { panic("Converged") }
func (panickyMetrics) Unconverged(string, int)                     { panic("Unconverged") }
func (panickyMetrics) Oscillation(string, oscillation.Kind)        { panic("Oscillation") }
func (panickyMetrics) Stalled(string, string)                      { panic("Stalled") }
func (panickyMetrics) FenceRejected(string)                        { panic("FenceRejected") }
func (m panickyMetrics) QueueMetrics(string) queue.Metrics {
	if m.noQueue {
		panic("QueueMetrics")
	}
	return panickyQueueMetrics{}
}

// panickyReader is panickyMetrics that reads the busy workers itself.
type panickyReader struct{ panickyMetrics }

func (panickyReader) ActiveWorkersFunc(string, func() int) { panic("ActiveWorkersFunc") }

type panickyQueueMetrics struct{}

func (panickyQueueMetrics) Depth(int)                               { panic("Depth") }
func (panickyQueueMetrics) Added()                                  { panic("Added") }
func (panickyQueueMetrics) QueueLatency(time.Duration)              { panic("QueueLatency") }
func (panickyQueueMetrics) WorkDuration(time.Duration)              { panic("WorkDuration") }
func (panickyQueueMetrics) Unfinished(total, longest time.Duration) { panic("Unfinished") }
func (panickyQueueMetrics) Retry()                                  { panic("Retry") }

// Metric hooks, the Loop's and the queue's (called with the queue's lock
// held): each panic is logged, the hook skipped, and the work goes on.
func TestMetricHooksThatPanic(t *testing.T) {
	for _, tt := range []struct {
		name string
		m    Metrics
		want []string // hooks named in the log
	}{
		{"every hook", panickyMetrics{}, []string{"ReconcileDone", "ReconcileError", "ReconcilePanic", "ActiveWorkers",
			"MaxConcurrency", "Stalled", `"queue Depth"`, `"queue Added"`, `"queue Retry"`}},
		{"ActiveWorkersFunc and QueueMetrics", panickyReader{panickyMetrics{noQueue: true}}, []string{"ActiveWorkersFunc", "QueueMetrics"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs logBuffer
				st := newMemStatus("a")
				s := newScript(func(_ string, n int) (Result, error) {
					if n == 0 {
						panic("reconcile")
					}
					return Result{}, nil
				})
				l := mustNew(t, s, WithStatusWriter(keySet("a"), st),
					append(fixedBackoff(), WithStallAfter(1), WithMetrics(tt.m), WithLogger(newLogger(&logs)))...)
				stop := start(t, l)
				time.Sleep(2 * time.Second) // past the 1s backoff of the panic
				synctest.Wait()
				require.Equal(t, 2, s.count("a"), "the panic was retried and the retry succeeded")
				_, stalled := st.stalled("a")
				require.True(t, stalled, "Stalled was written")
				require.NoError(t, stop())
				out := logs.String()
				for _, hook := range tt.want {
					require.Contains(t, out, `level=ERROR msg="metrics hook panicked" hook=`+hook+" ")
				}
				require.Contains(t, out, "userpanic_test.go:", "with the stack")
			})
		})
	}
}

var _ = strings.Contains
var _ = context.Background
