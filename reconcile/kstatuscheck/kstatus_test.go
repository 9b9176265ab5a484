package kstatuscheck

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/debugpage"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

type (
	spec   struct{ Mode string }
	stat   struct{ Seen string }
	object = store.Object[spec, stat]
)

// asResource reads o as kstatus reads a Kubernetes resource.
func asResource(o *object) *unstructured.Unstructured {
	md := map[string]any{"name": o.Meta.Name, "generation": o.Meta.Generation}
	if o.Meta.DeletionRequested {
		md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
	}
	st := map[string]any{}
	var conds []any
	var observed int64
	for _, c := range o.Conditions {
		conds = append(conds, map[string]any{"type": c.Type, "status": string(c.Status), "reason": c.Reason, "message": c.Message})
		observed = max(observed, c.ObservedGeneration)
	}
	if conds != nil {
		st["conditions"] = conds
	}
	if observed > 0 {
		st["observedGeneration"] = observed
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "steady.dev/v1", "kind": "App", "metadata": md, "status": st}}
}

// A reconciler as the README writes one: it acts on the spec's Mode, then
// applies Ready at the generation it read. A Mode "block…" waits for gate
// first (a reconcile in flight); gate may be nil when no object blocks.
func reconciler(c *cache.Cache[spec, stat], st *store.Store[spec, stat], gate ...chan struct{}) reconcile.Reconciler[string] {
	return reconcile.Func[string](func(ctx context.Context, name string) (reconcile.Result, error) {
		o, ok := c.Get(name)
		if !ok || o.Meta.DeletionRequested {
			return reconcile.Result{}, nil
		}
		if strings.HasPrefix(o.Spec.Mode, "block") {
			<-gate[0]
		}
		ready := store.Condition{Type: conditions.Ready, Status: store.ConditionTrue, Reason: "Running", ObservedGeneration: o.Meta.Generation}
		switch o.Spec.Mode {
		case "fail":
			return reconcile.Result{}, errors.New("dependency unreachable")
		case "terminal":
			return reconcile.Result{}, reconcile.Terminal(errors.New("replicas -1: want 0 to 100"))
		case "waiting":
			ready.Status, ready.Reason, ready.Message = store.ConditionFalse, "Waiting", "2 of 3 running"
		case "hold":
			return reconcile.Result{}, nil // acts on nothing yet: the spec stays unobserved
		}
		_, err := st.As("app").ApplyStatus(ctx, name, stat{Seen: o.Spec.Mode}, []store.Condition{ready}, store.WithObserved(o.Meta))
		return reconcile.Result{}, store.IgnoreNotFound(err)
	})
}

// Every state a Loop leaves an object in has the kstatus status an
// operator expects, and debugpage.Kstatus says the same.
func TestKstatusOfObjectsALoopWrote(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st, err := store.New[spec, stat](memstore.New(), "App")
		require.NoError(t, err)
		c := cache.New(st)
		user := st.As("user")
		create := func(name, mode string, ann map[string]string, fins ...string) {
			_, err := user.Create(ctx, &object{Meta: store.Meta{Name: name, Annotations: ann, Finalizers: fins}, Spec: spec{Mode: mode}})
			require.NoError(t, err)
		}
		setMode := func(name, mode string) {
			o, err := st.Get(ctx, name)
			require.NoError(t, err)
			o.Spec.Mode = mode
			_, err = user.Update(ctx, o)
			require.NoError(t, err)
		}
		create("converged", "", nil)
		create("waiting", "waiting", nil)
		create("failing", "fail", nil)
		create("terminal", "terminal", nil)
		create("recovers", "fail", nil)
		create("newspec", "", nil)
		create("paused", "", map[string]string{"steady.dev/paused": "true"})
		create("deleting", "", nil, "example.com/cleanup")

		l, err := reconcile.New("apps", reconciler(c, st), reconcile.FromStore(c, st),
			reconcile.WithFieldManager("app"), reconcile.WithStallAfter(3), reconcile.WithResync(24*time.Hour, 0),
			reconcile.WithBackoff(backoff.Policy{Base: time.Second, Factor: 2, Cap: time.Minute}),
			reconcile.WithRetryLimit(backoff.BucketConfig{Rate: rate.Inf}))
		require.NoError(t, err)
		runCtx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { _ = c.Run(runCtx) })
		wg.Go(func() { _ = l.Run(runCtx) })
		defer func() { stop(); wg.Wait() }()
		time.Sleep(time.Minute)
		synctest.Wait()
		setMode("recovers", "")
		setMode("newspec", "hold")
		_, err = user.Delete(ctx, "deleting")
		require.NoError(t, err)
		time.Sleep(time.Minute)
		synctest.Wait()

		want := map[string]status.Status{
			"converged": status.CurrentStatus,
			"waiting":   status.InProgressStatus,
			"failing":   status.FailedStatus,
			"terminal":  status.FailedStatus,
			"recovers":  status.CurrentStatus,
			"newspec":   status.InProgressStatus, // generation 2, Ready at 1
			"paused":    status.CurrentStatus,    // never reconciled: no Ready, nothing failed
			"deleting":  status.TerminatingStatus,
		}
		for name, w := range want {
			o, err := st.Get(ctx, name)
			require.NoError(t, err, name)
			res, err := status.Compute(asResource(o))
			require.NoError(t, err, name)
			got, msg := debugpage.Kstatus(o.Meta.Generation, o.Meta.DeletionRequested, o.Conditions)
			t.Logf("%-9s kstatus %-11s (%s); debugpage %s (%s); conditions %v", name, res.Status, res.Message, got, msg, o.Conditions)
			require.Equal(t, w, res.Status, "%s: kstatus", name)
			require.Equal(t, string(res.Status), got, "%s: debugpage.Kstatus agrees with kstatus", name)
		}
	})
}

// One object through its life, with kstatus computed at each phase: it
// says what an operator expects, and debugpage.Kstatus says the same.
func TestKstatusAtEachPhaseOfAnObjectsLife(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st, err := store.New[spec, stat](memstore.New(), "App")
		require.NoError(t, err)
		c := cache.New(st)
		user := st.As("user")
		_, err = user.Create(ctx, &object{Meta: store.Meta{Name: "a", Finalizers: []string{"example.com/cleanup"}}, Spec: spec{Mode: "block"}})
		require.NoError(t, err)
		_, err = user.Create(ctx, &object{Meta: store.Meta{Name: "b"}, Spec: spec{Mode: "fail"}})
		require.NoError(t, err)
		gate := make(chan struct{})
		l, err := reconcile.New("apps", reconciler(c, st, gate), reconcile.FromStore(c, st),
			reconcile.WithFieldManager("app"), reconcile.WithStallAfter(3), reconcile.WithResync(24*time.Hour, 0),
			reconcile.WithBackoff(backoff.Policy{Base: time.Second, Factor: 2, Cap: time.Minute}),
			reconcile.WithRetryLimit(backoff.BucketConfig{Rate: rate.Inf}))
		require.NoError(t, err)
		runCtx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { _ = c.Run(runCtx) })
		wg.Go(func() { _ = l.Run(runCtx) })
		defer func() { stop(); wg.Wait() }()

		phaseOf := func(key, name string, want status.Status) {
			t.Helper()
			synctest.Wait()
			o, err := st.Get(ctx, key)
			require.NoError(t, err)
			res, err := status.Compute(asResource(o))
			require.NoError(t, err)
			got, msg := debugpage.Kstatus(o.Meta.Generation, o.Meta.DeletionRequested, o.Conditions)
			t.Logf("%-34s kstatus %-11s (%s); debugpage %s (%s); generation %d, conditions %v", name, res.Status, res.Message, got, msg, o.Meta.Generation, o.Conditions)
			require.Equal(t, want, res.Status, "%s: kstatus", name)
			require.Equal(t, string(res.Status), got, "%s: debugpage.Kstatus agrees with kstatus", name)
		}
		phase := func(name string, want status.Status) {
			t.Helper()
			phaseOf("a", name, want)
		}
		setMode := func(mode string) {
			t.Helper()
			o, err := st.Get(ctx, "a")
			require.NoError(t, err)
			o.Spec.Mode = mode
			_, err = user.Update(ctx, o)
			require.NoError(t, err)
		}

		// The Loop writes nothing before a first reconcile: kstatus reads
		// an object no one has looked at yet as Current, as it does in
		// the queue. One whose first reconcile failed is InProgress while
		// it is retried.
		phase("new, first reconcile in flight", status.CurrentStatus)
		gate <- struct{}{}
		phase("reconciled", status.CurrentStatus)
		phaseOf("b", "new, first reconcile failed, retried", status.InProgressStatus)
		setMode("block again")
		phase("new generation, reconcile in flight", status.InProgressStatus)
		gate <- struct{}{}
		phase("new generation reconciled", status.CurrentStatus)
		setMode("fail")
		phase("new generation failing, retried", status.InProgressStatus)
		time.Sleep(3 * time.Second)
		phase("failing until Stalled", status.FailedStatus)
		setMode("")
		phase("fixed", status.CurrentStatus)
		setMode("waiting")
		phase("Ready=False", status.InProgressStatus)
		setMode("terminal")
		phase("a Terminal error", status.FailedStatus)
		setMode("")
		phase("fixed again", status.CurrentStatus)
		_, err = user.Delete(ctx, "a")
		require.NoError(t, err)
		phase("deletion requested", status.TerminatingStatus)
	})
}
