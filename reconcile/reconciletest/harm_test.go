package reconciletest_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/reconciletest"
)

// A correct controller that acts on a stale view and repairs it (a cache
// sent back in time shows a set already deleted; the controller creates
// pods for it, then deletes them once it sees the set gone) passes: the
// repair is a note, not a failure.
func TestStaleViewRepairIsANote(t *testing.T) {
	cfg := uidNamedConfig()
	for seed := range uint64(200) {
		rep := reconciletest.Simulate(t, cfg, seed)
		require.False(t, rep.Failed(), "%s", rep)
		for _, n := range rep.Notes {
			if strings.Contains(n, "stale view") {
				return
			}
		}
	}
	t.Fatal("no schedule of 200 made the controller create pods for a deleted set: time travel misses its aim")
}

// Every violation names a harm from the closed list.
func TestEveryViolationNamesAHarm(t *testing.T) {
	harms := []reconciletest.Harm{reconciletest.HarmEndState, reconciletest.HarmLiveAction, reconciletest.HarmLostUpdate,
		reconciletest.HarmStorm, reconciletest.HarmNotConverged, reconciletest.HarmContract}
	for _, zc := range zoo {
		cfg := zooConfig(zc.bug, zc.finalizer)
		for seed := range uint64(8) {
			rep := reconciletest.Simulate(t, cfg, seed)
			require.Len(t, rep.Harms, len(rep.Violations))
			for i, h := range rep.Harms {
				require.Contains(t, harms, h)
				require.True(t, strings.HasPrefix(rep.Violations[i], string(h)+": "), rep.Violations[i])
			}
		}
	}
}
