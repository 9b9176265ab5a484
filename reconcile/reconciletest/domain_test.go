package reconciletest_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/reconciletest"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// The tests' domain: a Set asks for Replicas pods running Image; its
// reconciler creates pods named after it (set-0, set-1, ...), fixes their
// image, deletes the ones past Replicas, and reports Ready. An Image of
// "missing" cannot be pulled: such a Set can never be reconciled.

type setSpec struct {
	Replicas int    `json:"replicas"`
	Image    string `json:"image"`
}

type setStatus struct {
	Ready int `json:"ready"`
	// Pods is where the random-names and status-first bugs keep track of
	// their pods.
	Pods []string `json:"pods,omitempty"`
	// Note belongs to another manager (the competitor): the controller must
	// never change it.
	Note string `json:"note,omitempty"`
}

type podSpec struct {
	Image string `json:"image"`
}

type podStatus struct{}

type (
	set = store.Object[setSpec, setStatus]
	pod = store.Object[podSpec, podStatus]
)

const missingImage = "missing"

// newSet returns the i-th set of a schedule: 1 to 3 replicas of one of a
// few images; one in eight cannot be reconciled.
func newSet(i int, rng *rand.Rand) *set {
	img := fmt.Sprintf("app:v%d", rng.IntN(3))
	if rng.IntN(8) == 0 {
		img = missingImage
	}
	return &set{Meta: store.Meta{Name: fmt.Sprintf("set%d", i)}, Spec: setSpec{Replicas: 1 + rng.IntN(3), Image: img}}
}

// compete is the competing writer: a user who edits a set or notes
// something in its status (a field the controller does not own), or
// someone who kills a pod or changes its image behind the controller's back
// (and leaves an annotation saying so, a field the controller does not own
// either).
var compete = competeIn(func(b kv.Backend) kv.Backend { return b })

// competeIn is compete with the pods in the store podsOf(b) returns
// (reconciletest.OtherStore for pods in the second store).
func competeIn(podsOf func(kv.Backend) kv.Backend) func(context.Context, kv.Backend, *store.Writer[setSpec, setStatus], string, *rand.Rand) error {
	return func(ctx context.Context, b kv.Backend, w *store.Writer[setSpec, setStatus], name string, rng *rand.Rand) error {
		sets, err := store.New[setSpec, setStatus](b, "Set")
		if err != nil {
			return err
		}
		s, err := sets.Get(ctx, name)
		if err != nil {
			return err
		}
		pods, err := store.New[podSpec, podStatus](podsOf(b), "Pod")
		if err != nil {
			return err
		}
		mine := ownedPods(ctx, pods, s.Meta.UID)
		switch op := rng.IntN(4); {
		case op == 3:
			_, err = w.ApplyStatus(ctx, name, map[string]any{"note": fmt.Sprint("checked ", rng.IntN(1000))}, nil, store.WithForce())
		case op == 0 || len(mine) == 0:
			if s.Spec.Image == missingImage {
				return nil // leave the unreconcilable alone
			}
			s.Spec.Replicas = 1 + rng.IntN(3)
			s.Spec.Image = fmt.Sprintf("app:v%d", rng.IntN(3))
			_, err = w.Update(ctx, s)
		case op == 1:
			_, err = pods.As("intruder").Delete(ctx, mine[rng.IntN(len(mine))].Meta.Name)
		default:
			p := mine[rng.IntN(len(mine))]
			p.Spec.Image = "drifted"
			p.Meta.Annotations = maps.Clone(p.Meta.Annotations)
			if p.Meta.Annotations == nil {
				p.Meta.Annotations = map[string]string{}
			}
			p.Meta.Annotations[driftedBy] = "intruder"
			_, err = pods.As("intruder").Update(ctx, p)
		}
		return err
	}
}

// driftedBy is the annotation the competitor leaves on a pod whose image it
// changed.
const driftedBy = "steady.test/drifted-by"

func ownedPods(ctx context.Context, pods *store.Store[podSpec, podStatus], uid string) []*pod {
	l, err := pods.List(ctx, store.ListOptions{})
	if err != nil {
		return nil
	}
	var out []*pod
	for _, p := range l.Items {
		for _, o := range p.Meta.Owners {
			if o.Controller && o.UID == uid {
				out = append(out, p)
			}
		}
	}
	return out
}

// converged: Ready at the set's generation, and the set's pods in the store
// run Replicas copies of Image, compared with diff.
var converged = convergedIn(func(b kv.Backend) kv.Backend { return b })

// convergedIn is converged with the pods in the store podsOf(b) returns
// (reconciletest.OtherStore for pods in the second store).
func convergedIn(podsOf func(kv.Backend) kv.Backend) func(context.Context, kv.Backend, *set) error {
	pods := reconciletest.DiffConverged(func(ctx context.Context, b kv.Backend, s *set) (want, got any, err error) {
		st, err := store.New[podSpec, podStatus](podsOf(b), "Pod")
		if err != nil {
			return nil, nil, err
		}
		var have []string
		for _, p := range ownedPods(ctx, st, s.Meta.UID) {
			have = append(have, p.Spec.Image)
		}
		slices.Sort(have)
		return slices.Repeat([]string{s.Spec.Image}, s.Spec.Replicas), have, nil
	})
	return func(ctx context.Context, b kv.Backend, s *set) error {
		if err := reconciletest.ReadyConverged(ctx, b, s); err != nil {
			return err
		}
		return pods(ctx, b, s)
	}
}

func unreconcilable(s *set) bool { return s.Spec.Image == missingImage }

// config is the tests' Config for a reconciler with bug b under faults f.
func config(b bug, f reconciletest.Faults) reconciletest.Config[setSpec, setStatus] {
	return reconciletest.Config[setSpec, setStatus]{
		Kind:           "Set",
		Objects:        4,
		Object:         newSet,
		Setup:          setup(b),
		Converged:      converged,
		Unreconcilable: unreconcilable,
		Compete:        compete,
		Faults:         f,
	}
}

// reconcilableSet is newSet without the unreconcilable sets.
func reconcilableSet(i int, rng *rand.Rand) *set {
	s := newSet(i, rng)
	if s.Spec.Image == missingImage {
		s.Spec.Image = "app:v9"
	}
	return s
}

// chatty wraps a Setup's reconciler so that every successful pass also
// stamps the time into the Ready condition's message: a write on every
// pass, even when nothing changed.
func chatty(setup func(*reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error)) func(*reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error) {
	return func(env *reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error) {
		r, err := setup(env)
		if err != nil {
			return nil, err
		}
		return reconcile.Func[string](func(ctx context.Context, name string) (reconcile.Result, error) {
			res, err := r.Reconcile(ctx, name)
			s, ok := env.Cache.Get(name)
			if err != nil || res != (reconcile.Result{}) || !ok || !conditions.IsTrue(s.Conditions, conditions.Ready) {
				return res, err
			}
			cp := *s
			cp.Conditions = slices.Clone(s.Conditions)
			for i := range cp.Conditions {
				if cp.Conditions[i].Type == conditions.Ready {
					cp.Conditions[i].Message = "checked at " + time.Now().Format(time.RFC3339Nano)
				}
			}
			_, err = env.Store.As(env.Manager).UpdateStatus(ctx, &cp)
			return reconcile.Result{}, err
		}), nil
	}
}
