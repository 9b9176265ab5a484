package reconciletest_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"iter"
	"slices"
	"testing"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/reconciletest"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// The corpus: correct controllers written the way users write them, each
// of which must pass every schedule of the default faults. A harness that
// fails the recommended style is a harness users switch off, so a false
// alarm here is a bug of the harness.

var corpusFull = flag.Bool("corpus.full", false, "TestCorpus: run 2,000 schedules per controller (the long run)")

type corpusCase struct {
	name string
	// ci is how many schedules the CI run gives it (without the race
	// detector); -corpus.full gives each 2,000.
	ci  int
	run func(t *testing.T, schedules int)
}

// runs returns a corpus case's run: Run over n schedules of config's.
func runs[S, T any](config func() reconciletest.Config[S, T]) func(t *testing.T, n int) {
	return func(t *testing.T, n int) {
		cfg := config()
		cfg.Schedules = n
		reconciletest.Run(t, cfg)
	}
}

var corpus = []corpusCase{
	{"README: the whole controller, with the GC", 180, runs(readmeConfig)},
	{"example: echo (the package example)", 180, runs(echoConfig)},
	{"example: unreconcilable (a secret, a mapped source)", 180, runs(unreconcilableConfig)},
	{"example: fieldowners, the defaulter by Apply (with WithRevision)", 180, runs(fieldOwnersConfig(true))},
	{"example: fieldowners, the defaulter by Update", 180, runs(fieldOwnersConfig(false))},
	{"example: processes (sets, instances, GC; a fake OS)", 180, runs(processesConfig)},
	{"example: fleet (groups of instances in a fleet, swept at resync)", 180, runs(fleetConfig)},
	{"cache reads, children named for the parent's UID", 180, runs(uidNamedConfig)},
	{"owner references, collected by the GC", 180, runs(ownerGCConfig)},
	{"finalizer, external cleanup through an idempotent API", 180, runs(finalizerConfig)},
	{"status with observedGeneration, by UpdateStatus", 180, runs(observedGenConfig)},
	{"two child kinds", 180, runs(twoKindsConfig)},
	{"leader-elected, memory per term, GC under the same term", 180, runs(leaderMemoConfig)},
	{"children read from their store, no cache", 180, runs(directConfig)},
	{"apply only", 180, runs(applyOnlyConfig)},
	{"children in another store (its own revisions and faults, no fence there)", 180, runs(func() reconciletest.Config[setSpec, setStatus] {
		return otherStoreConfig(false)
	})},
}

// TestCorpus runs every controller of the corpus through the default
// faults; every schedule must pass. scripts/test.sh runs it without the
// race detector, in the background; under the race detector it runs 5
// schedules per controller.
func TestCorpus(t *testing.T) {
	for _, c := range corpus {
		t.Run(c.name, func(t *testing.T) {
			n := c.ci
			switch {
			case *corpusFull:
				n = 2000
			case raceEnabled:
				n = 5
			}
			c.run(t, n)
		})
	}
}

// uidNamed is what a controller-runtime user writes: it reads the set
// from its cache, names each pod for the set's UID (set0-uid-3-0), so a
// pod made for an earlier set of that name can never be taken for one of
// the current set, creates what is missing, deletes what is extra, and
// deletes a pod whose owner is gone once a fresh read confirms it. A
// cache that shows a set already deleted (a restart against a lagging
// replica) makes it create pods for that set; it deletes them again once
// the cache catches up.
type uidNamed struct {
	sets    *store.Store[setSpec, setStatus]
	setc    *cache.Cache[setSpec, setStatus]
	pods    *store.Store[podSpec, podStatus]
	podc    *cache.Cache[podSpec, podStatus]
	manager string
	// podCtx, when set, makes the ctx of the pod writes from the
	// reconcile's (otherStore: no fence in the pods' store).
	podCtx func(context.Context) context.Context
	// setCtx, when set, makes the ctx of the set's status write (the
	// zoo's fenceless bug).
	setCtx func(context.Context) context.Context
}

func uidNamedConfig() reconciletest.Config[setSpec, setStatus] {
	cfg := config(noBug, reconciletest.AllFaults())
	cfg.Setup = func(env *reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error) {
		pods, podc, err := podCache(env, true)
		if err != nil {
			return nil, err
		}
		return &uidNamed{sets: env.Store, setc: env.Cache, pods: pods, podc: podc, manager: env.Manager}, nil
	}
	return cfg
}

// podCache builds the pods' store and cache of a process, with the
// owner-name index, and adds their sources to the Loop: a pod's change is
// a hint for its set, and with sweep, at every resync the owners of pods
// whose set the cache misses are keys too (so their orphans are swept).
func podCache(env *reconciletest.Env[setSpec, setStatus], sweep bool) (*store.Store[podSpec, podStatus], *cache.Cache[podSpec, podStatus], error) {
	return podCacheIn(env, sweep, reconciletest.NewStore[podSpec, podStatus])
}

// podCacheIn is podCache with the pods' store made by newStore: NewStore
// for the process's store, NewOtherStore for the second one.
func podCacheIn(env *reconciletest.Env[setSpec, setStatus], sweep bool,
	newStore func(*reconciletest.Process, string, ...store.Option) (*store.Store[podSpec, podStatus], error),
) (*store.Store[podSpec, podStatus], *cache.Cache[podSpec, podStatus], error) {
	pods, err := newStore(env.Process, "Pod")
	if err != nil {
		return nil, nil, err
	}
	podc := reconciletest.NewCache(env.Process, pods)
	if err := podc.AddIndex(byOwnerName, func(p *pod) []string {
		if o, ok := controllerOf(p); ok {
			return []string{o.Name}
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	env.Watch(reconcile.FromOwned(podc, "Set"))
	if sweep {
		env.Watch(podOwners{podc, env.Cache})
	}
	return pods, podc, nil
}

func (r *uidNamed) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	sctx, pctx := ctx, ctx
	if r.podCtx != nil {
		pctx = r.podCtx(ctx)
	}
	if r.setCtx != nil {
		sctx = r.setCtx(ctx)
	}
	s, ok := r.setc.Get(name)
	uid := ""
	if ok && !s.Meta.DeletionRequested {
		uid = s.Meta.UID
	}
	w := r.pods.As(r.manager)
	for _, p := range r.podc.ByIndex(byOwnerName, name) {
		o, _ := controllerOf(p)
		if o.UID == uid {
			continue
		}
		switch live, err := r.sets.Get(ctx, name); {
		case err == nil && live.Meta.UID == o.UID:
			continue // the cache is behind: its owner is there
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return reconcile.Result{}, err
		}
		_, err := w.Delete(pctx, p.Meta.Name, store.WithUID(p.Meta.UID))
		if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrConflict) {
			return reconcile.Result{}, err
		}
	}
	if uid == "" {
		return reconcile.Result{}, nil
	}
	if s.Spec.Image == missingImage {
		return reconcile.Result{}, reconcile.Blocked("ImageMissing", fmt.Errorf("image %q cannot be pulled", s.Spec.Image))
	}
	have := map[string]*pod{}
	for _, p := range r.podc.ByIndex(cache.IndexOwnerUID, uid) {
		have[p.Meta.Name] = p
	}
	wrote := false
	for i := range s.Spec.Replicas {
		pn := fmt.Sprintf("%s-%s-%d", name, uid, i)
		p, ok := have[pn]
		delete(have, pn)
		var err error
		switch {
		case !ok:
			_, err = w.Create(pctx, &pod{Meta: store.Meta{Name: pn, Owners: []store.OwnerRef{
				{Kind: "Set", Name: name, UID: uid, Controller: true}}}, Spec: podSpec{Image: s.Spec.Image}})
			err = store.IgnoreAlreadyExists(err)
		case p.Spec.Image != s.Spec.Image:
			cp := *p
			cp.Spec.Image = s.Spec.Image
			_, err = w.Update(pctx, &cp)
		default:
			continue
		}
		if err != nil {
			return reconcile.Result{}, err
		}
		wrote = true
	}
	for _, p := range have {
		if _, err := w.Delete(pctx, p.Meta.Name, store.WithUID(p.Meta.UID)); store.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, err
		}
		wrote = true
	}
	if wrote {
		return reconcile.Result{RequeueAfterWrite: true}, nil // observe what it made before it claims Ready
	}
	ready := store.Condition{Type: conditions.Ready, Status: store.ConditionTrue, Reason: "PodsRunning", ObservedGeneration: s.Meta.Generation}
	_, err := r.sets.As(r.manager).ApplyStatus(sctx, name, map[string]any{"ready": s.Spec.Replicas},
		[]store.Condition{ready}, store.WithGeneration(s.Meta.Generation))
	return reconcile.Result{}, store.IgnoreNotFound(err)
}

// podOwners lists, at every resync and new term, the sets that own a pod
// and are missing from the set cache (a Keys method), as a user who
// sweeps the observed side writes it: FromOwned lists a child's owners at a
// new term only, this lister at every resync too. (Sets in the cache are
// listed by the primary source already.)
type podOwners struct {
	podc *cache.Cache[podSpec, podStatus]
	setc *cache.Cache[setSpec, setStatus]
}

func (o podOwners) Run(ctx context.Context, _ reconcile.Sink[string]) error {
	<-ctx.Done()
	return nil
}

func (o podOwners) Keys() iter.Seq[string] {
	var names []string
	for _, p := range o.podc.List(nil) {
		if c, ok := controllerOf(p); ok {
			if _, there := o.setc.Get(c.Name); !there {
				names = append(names, c.Name)
			}
		}
	}
	slices.Sort(names)
	return slices.Values(slices.Compact(names))
}
