package reconciletest_test

import (
	"testing"

	"github.com/steady-go/steady/reconcile/reconciletest"
)

func TestDebugDet(t *testing.T) {
	cfg := config(noBug, reconciletest.AllFaults())
	cfg.Workers = 1
	for seed := range uint64(300) {
		a := reconciletest.Simulate(t, cfg, seed)
		b := reconciletest.Simulate(t, cfg, seed)
		for i := range min(len(a.Trace), len(b.Trace)) {
			if a.Trace[i] != b.Trace[i] {
				t.Logf("seed %d differs at %d", seed, i)
				for j := max(0, i-12); j < min(i+3, len(a.Trace), len(b.Trace)); j++ {
					t.Logf("%-50s | %s", a.Trace[j], b.Trace[j])
				}
				break
			}
		}
	}
}
