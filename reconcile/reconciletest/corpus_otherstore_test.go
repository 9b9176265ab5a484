package reconciletest_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/reconciletest"
	"github.com/steady-go/steady/store"
)

// otherStoreConfig is uidNamed with its pods in a second store
// (Process.Other: a memstore of its own, with its own revisions and its own
// faults, where the competitor kills pods and drifts their image), as a
// controller whose children live in another system writes it. The lease lives in the sets' store, so the pod writes go without the
// term's fence (store.WithoutFence); they are safe without it because each
// is idempotent or guarded (deterministic names, creates that tolerate
// AlreadyExists, updates with the cached revision, deletes by UID), so a
// deposed process's late write is one the next leader repairs. Its
// RequeueAfterWrite after a pod write waits for the pod cache, whose
// revisions are unrelated to the set cache's.
//
// With fenceless, it has the bug a user who learned that lesson too well
// writes: it drops the fence from every write, its sets' status included,
// where the store could have fenced it.
func otherStoreConfig(fenceless bool) reconciletest.Config[setSpec, setStatus] {
	cfg := config(noBug, reconciletest.AllFaults())
	cfg.Converged = convergedIn(reconciletest.OtherStore)
	cfg.Compete = competeIn(reconciletest.OtherStore) // kills and drifts the pods where they are
	cfg.Setup = func(env *reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error) {
		pods, podc, err := podCacheIn(env, true, reconciletest.NewOtherStore[podSpec, podStatus])
		if err != nil {
			return nil, err
		}
		r := &uidNamed{sets: env.Store, setc: env.Cache, pods: pods, podc: podc, manager: env.Manager,
			podCtx: store.WithoutFence}
		if fenceless {
			r.setCtx = store.WithoutFence
		}
		return r, nil
	}
	return cfg
}

// The harness catches the two-store controller's fenceless status write: a
// process whose term is over writes a set's status, the store accepts it
// for want of a fence, and the schedule fails with the harm. With
// -zoo.full it runs the whole default budget and logs the catch rate.
func TestATwoStoreControllerWritingItsPrimaryUnfencedIsCaught(t *testing.T) {
	cfg := otherStoreConfig(true)
	first, caught := -1, 0
	for seed := range uint64(reconciletest.DefaultSchedules) {
		rep := reconciletest.Simulate(t, cfg, seed)
		if !rep.Failed() {
			continue
		}
		require.True(t, slicesContain(rep.Violations, "stale write accepted"), "caught for another reason:\n%s", rep)
		caught++
		if first < 0 {
			first = int(seed)
			t.Logf("caught at seed %d: %s", seed, rep.Violations[0])
		}
		if !*zooFull {
			break
		}
	}
	require.GreaterOrEqual(t, first, 0, "a two-store controller writing its primary without a fence passed %d schedules", reconciletest.DefaultSchedules)
	if *zooFull {
		t.Logf("caught in %d of %d schedules", caught, reconciletest.DefaultSchedules)
	}
}

func slicesContain(vs []string, sub string) bool {
	for _, v := range vs {
		if strings.Contains(v, sub) {
			return true
		}
	}
	return false
}
