package reconciletest_test

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/reconciletest"
)

// A reconciler that leaves a goroutine blocked fails its schedule: every
// schedule runs in a testing/synctest bubble, which fails the test when
// the bubble ends with goroutines still blocked in it. The leaking schedule
// runs in a child process, since its failure ends the test binary.
func TestLeakedGoroutineFailsTheSchedule(t *testing.T) {
	if os.Getenv("RECONCILETEST_LEAK") == "1" {
		cfg := config(noBug, reconciletest.Faults{})
		cfg.Object = reconcilableSet
		inner := cfg.Setup
		cfg.Setup = func(env *reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error) {
			r, err := inner(env)
			if err != nil {
				return nil, err
			}
			leaked := false
			return reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
				if !leaked {
					leaked = true
					go func() { select {} }() // blocked forever, inside the bubble
				}
				return r.Reconcile(ctx, key)
			}), nil
		}
		reconciletest.Simulate(t, cfg, 1)
		return
	}
	if testing.Short() {
		t.Skip("runs a child test process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLeakedGoroutineFailsTheSchedule$", "-test.count=1")
	cmd.Env = append(os.Environ(), "RECONCILETEST_LEAK=1")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the leaking schedule must fail:\n%s", out)
	require.Contains(t, string(out), "blocked goroutines remain")
}
