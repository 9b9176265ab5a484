package reconciletest_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/reconciletest"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
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
	// Pods is where the random-names bug keeps track of its pods.
	Pods []string `json:"pods,omitempty"`
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

// compete is the competing writer: a user who edits a set, or someone who
// kills a pod or changes its image behind the controller's back.
func compete(ctx context.Context, b store.Backend, w *store.Writer[setSpec, setStatus], name string, rng *rand.Rand) error {
	sets, err := store.New[setSpec, setStatus](b, "Set")
	if err != nil {
		return err
	}
	s, err := sets.Get(ctx, name)
	if err != nil {
		return err
	}
	pods, err := store.New[podSpec, podStatus](b, "Pod")
	if err != nil {
		return err
	}
	mine := ownedPods(ctx, pods, s.Meta.UID)
	switch op := rng.IntN(3); {
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
		_, err = pods.As("intruder").Update(ctx, p)
	}
	return err
}

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
var converged = func() func(context.Context, store.Backend, *set) error {
	pods := reconciletest.DiffConverged(func(ctx context.Context, b store.Backend, s *set) (want, got any, err error) {
		st, err := store.New[podSpec, podStatus](b, "Pod")
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
	return func(ctx context.Context, b store.Backend, s *set) error {
		if err := reconciletest.ReadyConverged(ctx, b, s); err != nil {
			return err
		}
		return pods(ctx, b, s)
	}
}()

func unreconcilable(s *set) bool { return s.Spec.Image == missingImage }

// setReconciler is the correct reconciler. The bug fields turn on one
// deliberate bug each.
type setReconciler struct {
	sets    *store.Store[setSpec, setStatus]
	setc    *cache.Cache[setSpec, setStatus]
	pods    *store.Store[podSpec, podStatus]
	podc    *cache.Cache[podSpec, podStatus]
	manager string
	rng     *rand.Rand

	bug  bug
	done map[string]int64 // trustMemory: generation last reconciled
}

type bug int

const (
	noBug       bug = iota
	trustMemory     // skips a set it already reconciled at this generation, without looking
	randomNames     // names pods randomly and tracks them in the set's status
	swallow         // logs errors and returns nil
	detachCtx       // writes with context.Background(): no leadership fence
)

// setup returns Config.Setup for a reconciler with bug b.
func setup(b bug) func(env *reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error) {
	return func(env *reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error) {
		pods, err := reconciletest.NewStore[podSpec, podStatus](env.Process, "Pod")
		if err != nil {
			return nil, err
		}
		podc := reconciletest.NewCache(env.Process, pods)
		env.Watch(reconcile.FromOwned(podc, "Set"))
		return &setReconciler{sets: env.Store, setc: env.Cache, pods: pods, podc: podc,
			manager: env.Manager, rng: env.Rand, bug: b, done: map[string]int64{}}, nil
	}
}

func (r *setReconciler) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	res, err := r.reconcile(ctx, name)
	if r.bug == swallow && err != nil {
		return reconcile.Result{}, nil
	}
	return res, err
}

func (r *setReconciler) reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	s, ok := r.setc.Get(name)
	if !ok {
		return reconcile.Result{}, nil
	}
	if r.bug == trustMemory && r.done[name] == s.Meta.Generation {
		return reconcile.Result{}, nil
	}
	if s.Spec.Image == missingImage {
		return reconcile.Result{}, reconcile.Blocked("ImageMissing", fmt.Errorf("image %q cannot be pulled", s.Spec.Image))
	}
	wctx := ctx
	if r.bug == detachCtx {
		wctx = context.Background()
	}
	var wrote bool
	var err error
	if r.bug == randomNames {
		wrote, err = r.trackedPods(wctx, s)
	} else {
		wrote, err = r.ownedPods(wctx, s)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if wrote {
		return reconcile.Result{Requeue: true}, nil // re-observe before claiming Ready
	}
	r.done[name] = s.Meta.Generation
	conds := s.Conditions
	changed, err := reconcile.SetCondition(&conds, store.Condition{Type: reconcile.Ready, Status: store.ConditionTrue,
		Reason: "PodsRunning", ObservedGeneration: s.Meta.Generation}, time.Now())
	if err != nil || (!changed && s.Status.Ready == s.Spec.Replicas) {
		return reconcile.Result{}, err
	}
	cp := *s
	cp.Conditions = conds
	cp.Status = setStatus{Ready: s.Spec.Replicas, Pods: s.Status.Pods}
	rev, err := r.sets.As(r.manager).UpdateStatus(wctx, &cp, store.IfGeneration(s.Meta.Generation))
	reconcile.RecordWrite(ctx, rev)
	return reconcile.Result{}, err
}

// ownedPods makes the set's pods (observed through the owner index) match:
// deterministic names, so a create repeated after a crash finds its pod.
func (r *setReconciler) ownedPods(ctx context.Context, s *set) (wrote bool, err error) {
	have := r.podc.ByIndex(cache.IndexOwnerUID, s.Meta.UID)
	w := r.pods.As(r.manager)
	want := map[string]bool{}
	for i := range s.Spec.Replicas {
		pn := fmt.Sprintf("%s-%d", s.Meta.Name, i)
		want[pn] = true
		j := slices.IndexFunc(have, func(p *pod) bool { return p.Meta.Name == pn })
		var rev int64
		switch {
		case j < 0:
			rev, err = w.Create(ctx, &pod{Meta: store.Meta{Name: pn, Owners: []store.OwnerRef{
				{Kind: "Set", Name: s.Meta.Name, UID: s.Meta.UID, Controller: true}}}, Spec: podSpec{Image: s.Spec.Image}})
			if errors.Is(err, store.ErrAlreadyExists) {
				continue // it is there, the cache has not seen it yet: its event will bring us back
			}
		case have[j].Spec.Image != s.Spec.Image:
			cp := *have[j]
			cp.Spec.Image = s.Spec.Image
			rev, err = w.Update(ctx, &cp)
		default:
			continue
		}
		if err != nil {
			return wrote, err
		}
		reconcile.RecordWrite(ctx, rev)
		wrote = true
	}
	for _, p := range have {
		if want[p.Meta.Name] {
			continue
		}
		rev, err := w.Delete(ctx, p.Meta.Name, store.IfUID(p.Meta.UID))
		if err = store.IgnoreNotFound(err); err != nil {
			return wrote, err
		}
		reconcile.RecordWrite(ctx, rev)
		wrote = true
	}
	return wrote, nil
}

// trackedPods is the random-names bug: it creates pods with random names
// and remembers them in the set's status, and believes that list instead
// of observing the pods. A crash or a lost reply between the create and
// the status write leaves a pod nobody tracks, and the set runs too many.
func (r *setReconciler) trackedPods(ctx context.Context, s *set) (wrote bool, err error) {
	if len(s.Status.Pods) >= s.Spec.Replicas {
		return false, nil
	}
	pn := fmt.Sprintf("%s-%x", s.Meta.Name, r.rng.Uint32())
	rev, err := r.pods.As(r.manager).Create(ctx, &pod{Meta: store.Meta{Name: pn, Owners: []store.OwnerRef{
		{Kind: "Set", Name: s.Meta.Name, UID: s.Meta.UID, Controller: true}}}, Spec: podSpec{Image: s.Spec.Image}})
	if err != nil {
		return false, err
	}
	reconcile.RecordWrite(ctx, rev)
	cp := *s
	cp.Status.Pods = append(slices.Clone(s.Status.Pods), pn)
	rev, err = r.sets.As(r.manager).UpdateStatus(ctx, &cp)
	reconcile.RecordWrite(ctx, rev)
	return true, err
}

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
			if err != nil || res != (reconcile.Result{}) || !ok || !reconcile.IsTrue(s.Conditions, reconcile.Ready) {
				return res, err
			}
			cp := *s
			cp.Conditions = slices.Clone(s.Conditions)
			for i := range cp.Conditions {
				if cp.Conditions[i].Type == reconcile.Ready {
					cp.Conditions[i].Message = "checked at " + time.Now().Format(time.RFC3339Nano)
				}
			}
			_, err = env.Store.As(env.Manager).UpdateStatus(ctx, &cp)
			return reconcile.Result{}, err
		}), nil
	}
}
