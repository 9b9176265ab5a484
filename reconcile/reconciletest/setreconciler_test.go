package reconciletest_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/reconciletest"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// setReconciler is the correct reconciler. The bug field turns on one
// deliberate bug; finalizer makes it clean up through a finalizer (the
// correct one and its bugs alike).
//
// What the correct one does, and why:
//   - it reads from its caches, and before a create it reads the set
//     itself from the store: a cache may show a set that was deleted and
//     recreated (a new UID), and pods made for the old one are orphans;
//   - it sweeps orphans every pass: pods that name the set as controller
//     with another UID, once a fresh read confirms that UID is gone, deleted
//     with their UID as precondition (a delete whose state it never
//     observed leaves them behind otherwise);
//   - children have deterministic names, and an existing one is not an
//     error;
//   - it writes its status by apply, owning only its fields.
type setReconciler struct {
	sets    *store.Store[setSpec, setStatus]
	setc    *cache.Cache[setSpec, setStatus]
	pods    *store.Store[podSpec, podStatus]
	podc    *cache.Cache[podSpec, podStatus]
	manager string
	rng     *rand.Rand

	bug       bug
	finalizer bool
	// otherStore: the pods live in the second store (Process.Other), whose
	// writes go without the leadership fence (the lease is not there).
	otherStore bool
	done       map[string]int64 // trustMemory: generation last reconciled
	seen       map[string]int   // edgeScaleDown: replicas last seen
}

type bug int

const (
	noBug bug = iota
	// intermediate states (a crash or a lost reply mid-operation)
	randomNames     // names pods randomly and tracks them in the set's status
	twoStepCreate   // creates a pod, then adds its owner in a second write
	statusFirst     // records pods in status before creating them, then believes it
	finalizerFirst  // removes its finalizer before deleting the pods (and never sweeps)
	rollbackOnError // deletes a pod whose create failed: a lost reply deletes a committed pod
	// stale state
	staleOwnerGone // deletes the pods of a set its cache misses, without a fresh read or UID
	nameSelector   // selects its pods by owner name, not UID: adopts a former set's pods
	clobber        // writes the whole status, copied from its cache into a new object: loses others' fields
	detachCtx      // writes with context.Background(): no leadership fence
	// unobserved state
	missedDelete  // cleans up only when it sees a set gone, never sweeps orphans
	trustMemory   // skips a set it already reconciled at this generation, without looking
	edgeScaleDown // deletes surplus pods only on a drop of replicas it saw itself
	// the essay's patterns
	swallow       // logs errors and returns nil: never Stalled
	notFoundError // returns not-found as an error: retries a deleted set forever
	chattyStatus  // stamps the time into Ready on every pass: writes when nothing changed
	pollForever   // requeues itself every second once Ready
	rebuildPod    // fixes a pod's image by overwriting it with one built anew: drops what others wrote on it
)

const (
	finalizerName = "pods.steady.test/cleanup"
	byOwnerName   = "owner-name"
)

// setup returns Config.Setup for a reconciler with bug b.
func setup(b bug) func(env *reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error) {
	return setupWith(b, false)
}

func setupWith(b bug, finalizer bool) func(env *reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error) {
	return setupIn(b, finalizer, false)
}

// setupIn is setupWith with the pods in the second store (Process.Other)
// when otherStore is set.
func setupIn(b bug, finalizer, otherStore bool) func(env *reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error) {
	newPods := reconciletest.NewStore[podSpec, podStatus]
	if otherStore {
		newPods = reconciletest.NewOtherStore[podSpec, podStatus]
	}
	return func(env *reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error) {
		pods, err := newPods(env.Process, "Pod")
		if err != nil {
			return nil, err
		}
		podc := reconciletest.NewCache(env.Process, pods)
		if err := podc.AddIndex(byOwnerName, func(p *pod) []string {
			if o, ok := controllerOf(p); ok {
				return []string{o.Name}
			}
			return nil
		}); err != nil {
			return nil, err
		}
		env.Watch(reconcile.FromOwned(podc, "Set"))
		return &setReconciler{sets: env.Store, setc: env.Cache, pods: pods, podc: podc,
			manager: env.Manager, rng: env.Rand, bug: b, finalizer: finalizer || b == finalizerFirst, otherStore: otherStore,
			done: map[string]int64{}, seen: map[string]int{}}, nil
	}
}

func controllerOf(p *pod) (store.OwnerRef, bool) {
	for _, o := range p.Meta.Owners {
		if o.Controller && o.Kind == "Set" {
			return o, true
		}
	}
	return store.OwnerRef{}, false
}

func (r *setReconciler) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	res, err := r.reconcile(ctx, name)
	switch {
	case r.bug == swallow && err != nil:
		return reconcile.Result{}, nil
	case r.bug == pollForever && err == nil && res == (reconcile.Result{}):
		if s, ok := r.setc.Get(name); ok && conditions.IsTrue(s.Conditions, conditions.Ready) {
			return reconcile.Result{RequeueAfter: time.Second}, nil
		}
	}
	return res, err
}

func (r *setReconciler) reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	wctx := ctx
	if r.bug == detachCtx {
		wctx = context.Background()
	}
	s, ok := r.setc.Get(name)
	if !ok {
		if r.bug == notFoundError {
			return reconcile.Result{}, fmt.Errorf("set %s: %w", name, store.ErrNotFound)
		}
		if r.bug == finalizerFirst {
			return reconcile.Result{}, nil // its finalizer is meant to clean up
		}
		_, err := r.sweep(wctx, name, "")
		return reconcile.Result{}, err
	}
	if s.Meta.DeletionRequested {
		return reconcile.Result{}, r.finalize(wctx, s)
	}
	if r.bug == trustMemory && r.done[name] == s.Meta.Generation {
		return reconcile.Result{}, nil
	}
	if r.finalizer && !slices.Contains(s.Meta.Finalizers, finalizerName) {
		cp := *s
		cp.Meta.Finalizers = append(slices.Clone(s.Meta.Finalizers), finalizerName)
		rev, err := r.sets.As(r.manager).Update(wctx, &cp)
		reconcile.RecordWrite(ctx, rev)
		if err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{RequeueAfterWrite: true}, nil
	}
	if r.bug != missedDelete && r.bug != nameSelector && r.bug != finalizerFirst {
		stale, err := r.sweep(wctx, name, s.Meta.UID)
		if err != nil || stale {
			return reconcile.Result{}, err // a newer set is on its way to the cache
		}
	}
	if s.Spec.Image == missingImage {
		return reconcile.Result{}, reconcile.Blocked("ImageMissing", fmt.Errorf("image %q cannot be pulled", s.Spec.Image))
	}
	var wrote bool
	var err error
	if r.bug == randomNames {
		wrote, err = r.trackedPods(wctx, s)
	} else {
		wrote, err = r.ownedPods(ctx, wctx, s)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if wrote {
		return reconcile.Result{RequeueAfterWrite: true}, nil // re-observe before claiming Ready
	}
	r.done[name] = s.Meta.Generation
	r.seen[name] = s.Spec.Replicas
	return reconcile.Result{}, r.reportReady(ctx, wctx, s)
}

// reportReady reports the set Ready at the generation it reconciled.
func (r *setReconciler) reportReady(ctx, wctx context.Context, s *set) error {
	ready := store.Condition{Type: conditions.Ready, Status: store.ConditionTrue,
		Reason: "PodsRunning", ObservedGeneration: s.Meta.Generation}
	w := r.sets.As(r.manager)
	switch r.bug {
	case clobber, randomNames, statusFirst, chattyStatus:
		// The whole status, from the cached copy.
		conds := slices.Clone(s.Conditions)
		changed, err := conditions.Set(&conds, ready, time.Now())
		if err != nil {
			return err
		}
		if r.bug == chattyStatus {
			for i := range conds {
				if conds[i].Type == conditions.Ready {
					conds[i].Message = "checked at " + time.Now().Format(time.RFC3339Nano)
					changed = true
				}
			}
		}
		if !changed && s.Status.Ready == s.Spec.Replicas {
			return nil
		}
		cp := *s
		if r.bug == clobber {
			// A new object filled from the cached copy: UpdateStatus
			// checks the freshness of a status it read (Meta.Revision),
			// so the bug that survives that check is the hand-built one,
			// which carries no read and writes unconditionally.
			cp = store.Object[setSpec, setStatus]{Meta: store.Meta{Name: s.Meta.Name}, Status: s.Status}
		}
		cp.Conditions = conds
		cp.Status.Ready = s.Spec.Replicas
		rev, err := w.UpdateStatus(wctx, &cp, store.WithGeneration(s.Meta.Generation))
		reconcile.RecordWrite(ctx, rev)
		return err
	}
	res, err := w.ApplyStatus(wctx, s.Meta.Name, map[string]any{"ready": s.Spec.Replicas},
		[]store.Condition{ready}, store.WithObserved(s.Meta))
	if res.Changed {
		reconcile.RecordWrite(ctx, res.Revision)
	}
	return err
}

// sweep deletes orphans: pods that name the set called name as their
// controller but another UID than uid ("" for a set the cache misses). A
// fresh read of the set decides: a pod of the set that is really there is
// no orphan, and then stale reports that the cache is behind (it shows
// uid, the store has another).
func (r *setReconciler) sweep(ctx context.Context, name, uid string) (stale bool, err error) {
	var cands []*pod
	for _, p := range r.podc.ByIndex(byOwnerName, name) {
		if o, _ := controllerOf(p); o.UID != uid {
			cands = append(cands, p)
		}
	}
	if len(cands) == 0 {
		return false, nil
	}
	w, pctx := r.pods.As(r.manager), r.podCtx(ctx)
	if r.bug == staleOwnerGone && uid == "" {
		for _, p := range cands { // the cache says the set is gone: believe it
			rev, err := w.Delete(pctx, p.Meta.Name)
			if err = store.IgnoreNotFound(err); err != nil {
				return false, err
			}
			r.recordPodWrite(ctx, rev)
		}
		return false, nil
	}
	live := ""
	switch s, err := r.sets.Get(ctx, name); {
	case err == nil:
		live = s.Meta.UID
	case !errors.Is(err, store.ErrNotFound):
		return false, err
	}
	for _, p := range cands {
		if o, _ := controllerOf(p); o.UID == live {
			continue
		}
		rev, err := w.Delete(pctx, p.Meta.Name, store.WithUID(p.Meta.UID))
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
			continue // gone, or replaced by a new pod
		}
		if err != nil {
			return false, err
		}
		r.recordPodWrite(ctx, rev)
	}
	return uid != "" && live != uid, nil
}

// finalize cleans up a set whose deletion was requested: its pods go, then
// its finalizer (finalizerFirst does it the other way round).
func (r *setReconciler) finalize(ctx context.Context, s *set) error {
	if !slices.Contains(s.Meta.Finalizers, finalizerName) {
		return nil
	}
	unfinalize := func() error {
		cp := *s
		cp.Meta.Finalizers = slices.DeleteFunc(slices.Clone(s.Meta.Finalizers), func(f string) bool { return f == finalizerName })
		rev, err := r.sets.As(r.manager).Update(ctx, &cp)
		reconcile.RecordWrite(ctx, rev)
		return store.IgnoreNotFound(err)
	}
	if r.bug == finalizerFirst {
		if err := unfinalize(); err != nil {
			return err
		}
	}
	w := r.pods.As(r.manager)
	for _, p := range r.podc.ByIndex(cache.IndexOwnerUID, s.Meta.UID) {
		rev, err := w.Delete(r.podCtx(ctx), p.Meta.Name, store.WithUID(p.Meta.UID))
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return err
		}
		r.recordPodWrite(ctx, rev)
	}
	if r.bug == finalizerFirst {
		return nil
	}
	return unfinalize()
}

// ownedPods makes the set's pods (observed through the owner index) match:
// deterministic names, so a create repeated after a crash finds its pod.
func (r *setReconciler) ownedPods(ctx, wctx context.Context, s *set) (wrote bool, err error) {
	have := r.podc.ByIndex(cache.IndexOwnerUID, s.Meta.UID)
	if r.bug == nameSelector {
		have = r.podc.ByIndex(byOwnerName, s.Meta.Name)
	}
	w, pctx := r.pods.As(r.manager), r.podCtx(wctx)
	if r.bug == statusFirst {
		var missing []string
		for i := range s.Spec.Replicas {
			if pn := fmt.Sprintf("%s-%d", s.Meta.Name, i); !slices.Contains(s.Status.Pods, pn) {
				missing = append(missing, pn)
			}
		}
		if len(missing) > 0 { // note them down first, then create them
			cp := *s
			cp.Status.Pods = append(slices.Clone(s.Status.Pods), missing...)
			rev, err := r.sets.As(r.manager).UpdateStatus(wctx, &cp)
			if err != nil {
				return false, err
			}
			reconcile.RecordWrite(ctx, rev)
			wrote = true
		}
	}
	want := map[string]bool{}
	checked := false
	for i := range s.Spec.Replicas {
		pn := fmt.Sprintf("%s-%d", s.Meta.Name, i)
		want[pn] = true
		j := slices.IndexFunc(have, func(p *pod) bool { return p.Meta.Name == pn })
		var rev int64
		switch {
		case j < 0 && r.bug == statusFirst && slices.Contains(s.Status.Pods, pn):
			continue // noted down, so made: no need to look
		case j < 0:
			if !checked && r.bug != missedDelete && r.bug != nameSelector {
				// Is the set in the cache still the one in the store, and
				// not on its way out?
				live, err := r.sets.Get(wctx, s.Meta.Name)
				if err != nil || live.Meta.UID != s.Meta.UID || live.Meta.DeletionRequested {
					return wrote, store.IgnoreNotFound(err)
				}
				checked = true
			}
			p := &pod{Meta: store.Meta{Name: pn}, Spec: podSpec{Image: s.Spec.Image}}
			owner := store.OwnerRef{Kind: "Set", Name: s.Meta.Name, UID: s.Meta.UID, Controller: true}
			if r.bug != twoStepCreate {
				p.Meta.Owners = []store.OwnerRef{owner}
			}
			rev, err = w.Create(pctx, p)
			if errors.Is(err, store.ErrAlreadyExists) {
				continue // it is there, the cache has not seen it yet: its event will bring us back
			}
			if err != nil && r.bug == rollbackOnError {
				_, _ = w.Delete(pctx, pn) // undo what may not have happened
			}
			if err == nil && r.bug == twoStepCreate {
				r.recordPodWrite(ctx, rev)
				p, err = r.pods.Get(wctx, pn)
				if err == nil {
					p.Meta.Owners = []store.OwnerRef{owner}
					rev, err = w.Update(pctx, p)
				}
			}
		case have[j].Spec.Image != s.Spec.Image:
			cp := *have[j]
			if r.bug == rebuildPod {
				// The pod as the controller wants it, built anew over the
				// one it read (its revision, so no conflict): whatever
				// another manager wrote on it is not in it.
				cp = pod{Meta: store.Meta{Name: pn, Revision: have[j].Meta.Revision,
					Owners: []store.OwnerRef{{Kind: "Set", Name: s.Meta.Name, UID: s.Meta.UID, Controller: true}}}}
			}
			cp.Spec.Image = s.Spec.Image
			rev, err = w.Update(pctx, &cp)
		default:
			continue
		}
		if err != nil {
			return wrote, err
		}
		r.recordPodWrite(ctx, rev)
		wrote = true
	}
	if last, ok := r.seen[s.Meta.Name]; r.bug == edgeScaleDown && (!ok || last <= s.Spec.Replicas) {
		return wrote, nil // no drop seen: nothing to remove
	}
	for _, p := range have {
		if want[p.Meta.Name] {
			continue
		}
		rev, err := w.Delete(pctx, p.Meta.Name, store.WithUID(p.Meta.UID))
		if err = store.IgnoreNotFound(err); err != nil {
			return wrote, err
		}
		r.recordPodWrite(ctx, rev)
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
	rev, err := r.pods.As(r.manager).Create(r.podCtx(ctx), &pod{Meta: store.Meta{Name: pn, Owners: []store.OwnerRef{
		{Kind: "Set", Name: s.Meta.Name, UID: s.Meta.UID, Controller: true}}}, Spec: podSpec{Image: s.Spec.Image}})
	if err != nil {
		return false, err
	}
	r.recordPodWrite(ctx, rev)
	cp := *s
	cp.Status.Pods = append(slices.Clone(s.Status.Pods), pn)
	rev, err = r.sets.As(r.manager).UpdateStatus(ctx, &cp)
	reconcile.RecordWrite(ctx, rev)
	return true, err
}

// podCtx returns the ctx for a pod write: ctx itself, or for pods in the
// second store ctx without the leadership fence, which that store cannot
// check (the lease is not there).
func (r *setReconciler) podCtx(ctx context.Context) context.Context {
	if r.otherStore {
		return store.WithoutFence(ctx)
	}
	return ctx
}

// recordPodWrite tells the Loop of a pod write's revision. A write to the
// second store is recorded by the store itself, with its backend: a
// revision given to RecordWrite names no backend, and every cache, the
// sets' included, would wait for a number of the pods' store.
func (r *setReconciler) recordPodWrite(ctx context.Context, rev int64) {
	if !r.otherStore {
		reconcile.RecordWrite(ctx, rev)
	}
}
