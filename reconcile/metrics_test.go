package reconcile

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/metrics"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
)

func TestMemMetricsRecords(t *testing.T) {
	m := NewMemMetrics()
	m.ReconcileDone("c", resultSuccess, time.Millisecond)
	m.ReconcileDone("c", resultError, 2*time.Millisecond)
	m.ReconcileDone("d", resultRequeue, time.Second)
	m.ReconcileError("c", false)
	m.ReconcileError("c", true)
	m.ReconcilePanic("c")
	m.ActiveWorkers("c", 2)
	m.ActiveWorkers("c", 1)
	m.MaxConcurrency("c", 4)
	m.Converged("c", time.Minute)
	m.Unconverged("c", 7)
	m.Oscillation("c", oscillation.Fight)
	m.Stalled("c", conditions.ReasonBlocked)

	require.Equal(t, 1, m.Results("c", resultSuccess))
	require.Equal(t, 1, m.Results("c", resultError))
	require.Equal(t, 2, m.Reconciles("c"))
	require.Equal(t, []time.Duration{time.Millisecond, 2 * time.Millisecond}, m.Durations("c"))
	require.Equal(t, 2, m.Errors("c"))
	require.Equal(t, 1, m.TerminalErrors("c"))
	require.Equal(t, 1, m.Panics("c"))
	require.Equal(t, 1, m.ActiveWorkersNow("c"))
	require.Equal(t, 2, m.PeakActiveWorkers("c"))
	require.Equal(t, 4, m.MaxConcurrencyValue("c"))
	require.Equal(t, []time.Duration{time.Minute}, m.ConvergeTimes("c"))
	require.Equal(t, 7, m.UnconvergedNow("c"))
	require.Equal(t, 1, m.Oscillations("c", oscillation.Fight))
	require.Zero(t, m.Oscillations("c", oscillation.NoProgress))
	require.Equal(t, 1, m.StalledCount("c", conditions.ReasonBlocked))
	require.Equal(t, []string{"c", "d"}, m.Controllers())
}

func TestMemMetricsConcurrent(t *testing.T) {
	m := NewMemMetrics()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				m.ReconcileDone("c", resultSuccess, 0)
				m.ReconcileError("c", false)
			}
		})
	}
	wg.Wait()
	require.Equal(t, 800, m.Reconciles("c"))
	require.Equal(t, 800, m.Errors("c"))
}

func TestNopMetricsIsAMetrics(t *testing.T) {
	var m metrics.Loop = metrics.NopLoop{}
	m.ReconcileDone("c", resultSuccess, 0) // does nothing, must not panic
}
