package reconciletest_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/gc"
	"github.com/steady-go/steady/reconcile/reconciletest"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
)

// The corpus's controllers. Each is written as an experienced
// controller-runtime user writes one: it reads from caches, names its
// children deterministically, sets owner references, returns every
// error, and claims Ready only once it has seen what it made.

// quiet is the logger of the Loops a Setup runs besides the harness's.
var quiet = slog.New(slog.DiscardHandler)

// syncPods makes the pods of s (its children by UID, in podc) match its
// spec, the i-th named name(i): it creates the missing ones, moves the
// others to the image, deletes the extra ones (with their UID as
// precondition), and reports whether it wrote.
func syncPods(ctx context.Context, w *store.Writer[podSpec, podStatus], podc *cache.Cache[podSpec, podStatus], s *set, name func(i int) string) (bool, error) {
	have := map[string]*pod{}
	for _, p := range podc.ByIndex(cache.IndexOwnerUID, s.Meta.UID) {
		have[p.Meta.Name] = p
	}
	wrote := false
	for i := range s.Spec.Replicas {
		pn := name(i)
		p, ok := have[pn]
		delete(have, pn)
		var err error
		switch {
		case !ok:
			_, err = w.Create(ctx, &pod{Meta: store.Meta{Name: pn, Owners: []store.OwnerRef{
				{Kind: "Set", Name: s.Meta.Name, UID: s.Meta.UID, Controller: true}}}, Spec: podSpec{Image: s.Spec.Image}})
			err = store.IgnoreAlreadyExists(err) // made already, or an old one the GC will take
		case p.Spec.Image != s.Spec.Image:
			cp := *p // cached objects are read-only
			cp.Spec.Image = s.Spec.Image
			_, err = w.Update(ctx, &cp)
		default:
			continue
		}
		if err != nil {
			return wrote, err
		}
		wrote = true
	}
	for _, p := range have {
		if _, err := w.Delete(ctx, p.Meta.Name, store.WithUID(p.Meta.UID)); store.IgnoreNotFound(err) != nil {
			return wrote, err
		}
		wrote = true
	}
	return wrote, nil
}

// applyReady applies the set's status: Ready at the generation it
// reconciled, refused if the spec moved on or the set was replaced.
func applyReady(ctx context.Context, sets *store.Store[setSpec, setStatus], manager string, s *set) error {
	ready := store.Condition{Type: conditions.Ready, Status: store.ConditionTrue, Reason: "PodsRunning", ObservedGeneration: s.Meta.Generation}
	_, err := sets.As(manager).ApplyStatus(ctx, s.Meta.Name, map[string]any{"ready": s.Spec.Replicas},
		[]store.Condition{ready}, store.WithObserved(s.Meta))
	if errors.Is(err, store.ErrConflict) {
		return nil // a newer generation or set is on its way: its event brings us back
	}
	return store.IgnoreNotFound(err)
}

func indexName(s *set) func(int) string {
	return func(i int) string { return fmt.Sprintf("%s-%d", s.Meta.Name, i) }
}

// podGC runs a garbage collector of pods whose set is gone, as a second
// Loop of the process under its term.
func podGC(env *reconciletest.Env[setSpec, setStatus], pods *store.Store[podSpec, podStatus], podc *cache.Cache[podSpec, podStatus]) error {
	g, err := gc.New("pod-gc", podc, pods, []gc.Owner{gc.OwnerKind(env.Cache, env.Store)},
		reconcile.WithElector(env.Elector()), reconcile.WithLogger(quiet), reconcile.WithFieldManager(env.Manager))
	if err != nil {
		return err
	}
	env.Go(g.Run)
	return nil
}

// ownerGC: owner references and a garbage collector. It names pods by
// index (set0-0), leaves the pods of a deleted set to the GC, and treats
// an old pod in the way of a new one as made (the GC removes it, and its
// deletion brings the set back).
type ownerGC struct {
	sets    *store.Store[setSpec, setStatus]
	setc    *cache.Cache[setSpec, setStatus]
	pods    *store.Store[podSpec, podStatus]
	podc    *cache.Cache[podSpec, podStatus]
	manager string
}

func ownerGCConfig() reconciletest.Config[setSpec, setStatus] {
	cfg := config(noBug, reconciletest.AllFaults())
	cfg.Setup = func(env *reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error) {
		pods, err := reconciletest.NewStore[podSpec, podStatus](env.Process, "Pod")
		if err != nil {
			return nil, err
		}
		podc := reconciletest.NewCache(env.Process, pods)
		env.Watch(reconcile.FromOwned(podc, "Set"))
		if err := podGC(env, pods, podc); err != nil {
			return nil, err
		}
		return &ownerGC{sets: env.Store, setc: env.Cache, pods: pods, podc: podc, manager: env.Manager}, nil
	}
	return cfg
}

func (r *ownerGC) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	s, ok := r.setc.Get(name)
	if !ok || s.Meta.DeletionRequested {
		return reconcile.Result{}, nil // the GC deletes its pods
	}
	if s.Spec.Image == missingImage {
		return reconcile.Result{}, reconcile.Blocked("ImageMissing", fmt.Errorf("image %q cannot be pulled", s.Spec.Image))
	}
	wrote, err := syncPods(ctx, r.pods.As(r.manager), r.podc, s, indexName(s))
	if err != nil || wrote {
		return reconcile.Result{RequeueAfterWrite: wrote}, err
	}
	return reconcile.Result{}, applyReady(ctx, r.sets, r.manager, s)
}

// leaderMemo is a leader-elected controller that remembers, for the term
// it leads in, the status it wrote (set UID and generation) and skips
// writing it again; a new term (another fence) or a new process starts
// with nothing remembered. It runs the GC as a second Loop under the same
// term (Env.Elector), and stops acting once its term is over.
type leaderMemo struct {
	ownerGC
	mu    sync.Mutex
	term  store.Fence
	wrote map[string]int64 // set UID → generation whose status it wrote in this term
}

func leaderMemoConfig() reconciletest.Config[setSpec, setStatus] {
	cfg := ownerGCConfig()
	inner := cfg.Setup
	cfg.Setup = func(env *reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error) {
		r, err := inner(env)
		if err != nil {
			return nil, err
		}
		return &leaderMemo{ownerGC: *r.(*ownerGC), wrote: map[string]int64{}}, nil
	}
	return cfg
}

func (r *leaderMemo) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	if err := context.Cause(ctx); err != nil {
		return reconcile.Result{}, err // no longer leading: the next leader does it
	}
	f, _ := store.FenceFrom(ctx)
	r.mu.Lock()
	if f != r.term {
		r.term, r.wrote = f, map[string]int64{} // a new term: forget
	}
	r.mu.Unlock()
	s, ok := r.setc.Get(name)
	if !ok || s.Meta.DeletionRequested {
		return reconcile.Result{}, nil
	}
	if s.Spec.Image == missingImage {
		return reconcile.Result{}, reconcile.Blocked("ImageMissing", fmt.Errorf("image %q cannot be pulled", s.Spec.Image))
	}
	wrote, err := syncPods(ctx, r.pods.As(r.manager), r.podc, s, indexName(s))
	if err != nil || wrote {
		return reconcile.Result{RequeueAfterWrite: wrote}, err
	}
	r.mu.Lock()
	done := r.wrote[s.Meta.UID] == s.Meta.Generation && conditions.IsTrue(s.Conditions, conditions.Ready)
	r.mu.Unlock()
	if done {
		return reconcile.Result{}, nil
	}
	if err := applyReady(ctx, r.sets, r.manager, s); err != nil {
		return reconcile.Result{}, err
	}
	r.mu.Lock()
	r.wrote[s.Meta.UID] = s.Meta.Generation
	r.mu.Unlock()
	return reconcile.Result{}, nil
}

// applyOnly writes only by apply: each pod (named for its set's UID) by
// Apply with its owner reference, the status by ApplyStatus. Pods of a
// deleted set are the GC's; extra pods of a live set it deletes.
type applyOnly struct{ ownerGC }

func applyOnlyConfig() reconciletest.Config[setSpec, setStatus] {
	cfg := ownerGCConfig()
	inner := cfg.Setup
	cfg.Setup = func(env *reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error) {
		r, err := inner(env)
		if err != nil {
			return nil, err
		}
		return &applyOnly{*r.(*ownerGC)}, nil
	}
	return cfg
}

func (r *applyOnly) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	s, ok := r.setc.Get(name)
	if !ok || s.Meta.DeletionRequested {
		return reconcile.Result{}, nil
	}
	if s.Spec.Image == missingImage {
		return reconcile.Result{}, reconcile.Blocked("ImageMissing", fmt.Errorf("image %q cannot be pulled", s.Spec.Image))
	}
	have := map[string]*pod{}
	for _, p := range r.podc.ByIndex(cache.IndexOwnerUID, s.Meta.UID) {
		have[p.Meta.Name] = p
	}
	w := r.pods.As(r.manager)
	wrote := false
	meta := store.ApplyMeta{Owners: []store.OwnerRef{{Kind: "Set", Name: name, UID: s.Meta.UID, Controller: true}}}
	for i := range s.Spec.Replicas {
		pn := fmt.Sprintf("%s-%s-%d", name, s.Meta.UID, i)
		if p, ok := have[pn]; ok && p.Spec.Image == s.Spec.Image {
			delete(have, pn)
			continue
		}
		delete(have, pn)
		res, err := w.Apply(ctx, pn, podSpec{Image: s.Spec.Image}, store.WithMeta(meta), store.WithForce())
		if err != nil {
			return reconcile.Result{}, err
		}
		wrote = wrote || res.Changed
	}
	for _, p := range have {
		if _, err := w.Delete(ctx, p.Meta.Name, store.WithUID(p.Meta.UID)); store.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, err
		}
		wrote = true
	}
	if wrote {
		return reconcile.Result{RequeueAfterWrite: true}, nil
	}
	return reconcile.Result{}, applyReady(ctx, r.sets, r.manager, s)
}

// twoKinds owns two kinds of children, named for the set's UID: its pods
// and one Config holding the image. Children whose set is gone (a fresh
// read says so) it deletes itself.
type twoKinds struct {
	uidNamed
	configs *store.Store[podSpec, podStatus]
	cfgc    *cache.Cache[podSpec, podStatus]
}

func twoKindsConfig() reconciletest.Config[setSpec, setStatus] {
	cfg := config(noBug, reconciletest.AllFaults())
	cfg.Setup = func(env *reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error) {
		pods, podc, err := podCache(env, false) // ownersOf lists the owners of both kinds
		if err != nil {
			return nil, err
		}
		configs, err := reconciletest.NewStore[podSpec, podStatus](env.Process, "Config")
		if err != nil {
			return nil, err
		}
		cfgc := reconciletest.NewCache(env.Process, configs)
		if err := cfgc.AddIndex(byOwnerName, func(p *pod) []string {
			if o, ok := controllerOf(p); ok {
				return []string{o.Name}
			}
			return nil
		}); err != nil {
			return nil, err
		}
		// Sets missing from the cache that own a pod or a Config are keys
		// at every resync: a set whose deletion it never saw still has its
		// children swept. (The first draft listed the owners of pods only,
		// and the long run caught a Config leaked by a crash between the
		// Config and the first pod: 3 schedules of 2,000.)
		env.Watch(reconcile.FromOwned(cfgc, "Set"), ownersOf{[]*cache.Cache[podSpec, podStatus]{podc, cfgc}, env.Cache})
		return &twoKinds{uidNamed: uidNamed{sets: env.Store, setc: env.Cache, pods: pods, podc: podc, manager: env.Manager},
			configs: configs, cfgc: cfgc}, nil
	}
	cfg.Converged = func(ctx context.Context, b kv.Backend, s *set) error {
		if err := converged(ctx, b, s); err != nil {
			return err
		}
		st, err := store.New[podSpec, podStatus](b, "Config")
		if err != nil {
			return err
		}
		c, err := st.Get(ctx, s.Meta.Name+"-"+s.Meta.UID)
		if err != nil {
			return fmt.Errorf("its Config: %w", err)
		}
		if c.Spec.Image != s.Spec.Image {
			return fmt.Errorf("its Config says %q, the set %q", c.Spec.Image, s.Spec.Image)
		}
		return nil
	}
	return cfg
}

func (r *twoKinds) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	s, ok := r.setc.Get(name)
	uid := ""
	if ok && !s.Meta.DeletionRequested {
		uid = s.Meta.UID
	}
	// The Config first: orphans of an earlier set go, then it is made.
	w := r.configs.As(r.manager)
	for _, c := range r.cfgc.ByIndex(byOwnerName, name) {
		if o, _ := controllerOf(c); o.UID != uid {
			if gone, err := r.ownerGone(ctx, name, o.UID); err != nil || !gone {
				return reconcile.Result{}, err
			}
			if _, err := w.Delete(ctx, c.Meta.Name, store.WithUID(c.Meta.UID)); err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrConflict) {
				return reconcile.Result{}, err
			}
		}
	}
	wroteConfig := false
	if uid != "" && s.Spec.Image != missingImage {
		cn := name + "-" + uid
		c, have := r.cfgc.Get(cn)
		var err error
		switch {
		case !have:
			_, err = w.Create(ctx, &pod{Meta: store.Meta{Name: cn, Owners: []store.OwnerRef{{Kind: "Set", Name: name, UID: uid, Controller: true}}},
				Spec: podSpec{Image: s.Spec.Image}})
			err = store.IgnoreAlreadyExists(err)
			wroteConfig = true
		case c.Spec.Image != s.Spec.Image:
			cp := *c
			cp.Spec.Image = s.Spec.Image
			_, err = w.Update(ctx, &cp)
			wroteConfig = true
		}
		if err != nil {
			return reconcile.Result{}, err
		}
	}
	res, err := r.uidNamed.Reconcile(ctx, name)
	if err == nil && wroteConfig {
		res.RequeueAfterWrite = true
	}
	return res, err
}

// ownersOf is podOwners over several kinds of children: one lister, so
// the keys of two never race each other.
type ownersOf struct {
	children []*cache.Cache[podSpec, podStatus]
	setc     *cache.Cache[setSpec, setStatus]
}

func (o ownersOf) Run(ctx context.Context, _ reconcile.Sink[string]) error {
	<-ctx.Done()
	return nil
}

func (o ownersOf) Keys() iter.Seq[string] {
	var names []string
	for _, c := range o.children {
		for _, p := range c.List(nil) {
			if owner, ok := controllerOf(p); ok {
				if _, there := o.setc.Get(owner.Name); !there {
					names = append(names, owner.Name)
				}
			}
		}
	}
	slices.Sort(names)
	return slices.Values(slices.Compact(names))
}

// ownerGone reports whether a fresh read shows that the set called name
// no longer has UID uid.
func (r *uidNamed) ownerGone(ctx context.Context, name, uid string) (bool, error) {
	live, err := r.sets.Get(ctx, name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return true, nil
	case err != nil:
		return false, err
	}
	return live.Meta.UID != uid, nil
}

// direct reads its children from their store on every pass, without a
// cache (as a controller whose children live in another system it only
// lists); hints come from the sets alone, and every resync lists them.
// Pods are named for the set's UID; the pods of a set that is gone it
// deletes once a fresh read says so.
type direct struct {
	sets    *store.Store[setSpec, setStatus]
	setc    *cache.Cache[setSpec, setStatus]
	pods    *store.Store[podSpec, podStatus]
	manager string
}

func directConfig() reconciletest.Config[setSpec, setStatus] {
	cfg := config(noBug, reconciletest.AllFaults())
	cfg.Setup = func(env *reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error) {
		pods, err := reconciletest.NewStore[podSpec, podStatus](env.Process, "Pod")
		if err != nil {
			return nil, err
		}
		env.Watch(&directOwners{pods: pods, setc: env.Cache})
		return &direct{sets: env.Store, setc: env.Cache, pods: pods, manager: env.Manager}, nil
	}
	return cfg
}

// directOwners lists, at every resync and new term, the sets that own a
// pod and are missing from the set cache, reading the pods from their
// store: without it, a set whose deletion the controller never saw (it
// crashed, and the next process's cache never had the set) would never be
// a key again, and its pods would leak. The first draft of this
// controller had no such source, and the corpus caught the leak.
type directOwners struct {
	pods *store.Store[podSpec, podStatus]
	setc *cache.Cache[setSpec, setStatus]

	mu  sync.Mutex
	ctx context.Context // Run's: it ends with the process
}

func (o *directOwners) Run(ctx context.Context, _ reconcile.Sink[string]) error {
	o.mu.Lock()
	o.ctx = ctx
	o.mu.Unlock()
	<-ctx.Done()
	return nil
}

func (o *directOwners) Keys() iter.Seq[string] {
	o.mu.Lock()
	ctx := o.ctx
	o.mu.Unlock()
	if ctx == nil {
		return func(func(string) bool) {}
	}
	l, err := o.pods.List(ctx, store.ListOptions{})
	if err != nil {
		return func(func(string) bool) {} // the next resync lists again
	}
	var names []string
	for _, p := range l.Items {
		if c, ok := controllerOf(p); ok {
			if _, there := o.setc.Get(c.Name); !there {
				names = append(names, c.Name)
			}
		}
	}
	slices.Sort(names)
	return slices.Values(slices.Compact(names))
}

func (r *direct) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	s, ok := r.setc.Get(name)
	uid := ""
	if ok && !s.Meta.DeletionRequested {
		uid = s.Meta.UID
	}
	l, err := r.pods.List(ctx, store.ListOptions{})
	if err != nil {
		return reconcile.Result{}, err
	}
	w := r.pods.As(r.manager)
	have := map[string]*pod{}
	for _, p := range l.Items {
		o, ok := controllerOf(p)
		switch {
		case !ok || o.Name != name:
		case o.UID == uid:
			have[p.Meta.Name] = p
		default:
			live, err := r.sets.Get(ctx, name)
			if err == nil && live.Meta.UID == o.UID {
				continue // the cache is behind
			}
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return reconcile.Result{}, err
			}
			if _, err := w.Delete(ctx, p.Meta.Name, store.WithUID(p.Meta.UID)); err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrConflict) {
				return reconcile.Result{}, err
			}
		}
	}
	if uid == "" {
		return reconcile.Result{}, nil
	}
	if s.Spec.Image == missingImage {
		return reconcile.Result{}, reconcile.Blocked("ImageMissing", fmt.Errorf("image %q cannot be pulled", s.Spec.Image))
	}
	wrote := false
	for i := range s.Spec.Replicas {
		pn := fmt.Sprintf("%s-%s-%d", name, uid, i)
		p, ok := have[pn]
		delete(have, pn)
		switch {
		case !ok:
			_, err = w.Create(ctx, &pod{Meta: store.Meta{Name: pn, Owners: []store.OwnerRef{{Kind: "Set", Name: name, UID: uid, Controller: true}}},
				Spec: podSpec{Image: s.Spec.Image}})
			err = store.IgnoreAlreadyExists(err)
		case p.Spec.Image != s.Spec.Image:
			p.Spec.Image = s.Spec.Image // a fresh list: ours to change
			_, err = w.Update(ctx, p)
		default:
			continue
		}
		if err != nil {
			return reconcile.Result{}, err
		}
		wrote = true
	}
	for _, p := range have {
		if _, err := w.Delete(ctx, p.Meta.Name, store.WithUID(p.Meta.UID)); store.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, err
		}
		wrote = true
	}
	if wrote {
		return reconcile.Result{RequeueAfterWrite: true}, nil
	}
	return reconcile.Result{}, applyReady(ctx, r.sets, r.manager, s)
}

// The external API of the finalizer controller: records kept by a fake
// DNS service, one per set (by UID), made and removed idempotently. It
// lives in the store (kind Record), reached through the process's faulty
// view, so its calls fail, time out and conflict like any remote call.
type recordSpec struct {
	Set   string `json:"set"`
	Image string `json:"image"`
}

type fakeDNS struct {
	st      *store.Store[recordSpec, struct{}]
	manager string
}

// Ensure makes the record of the set with UID uid say image; a repeated
// call changes nothing.
func (d fakeDNS) Ensure(ctx context.Context, uid, set, image string) error {
	r, err := d.st.Get(ctx, uid)
	switch {
	case errors.Is(err, store.ErrNotFound):
		_, err = d.st.As(d.manager).Create(ctx, &store.Object[recordSpec, struct{}]{Meta: store.Meta{Name: uid}, Spec: recordSpec{Set: set, Image: image}})
		return store.IgnoreAlreadyExists(err)
	case err != nil:
		return err
	case r.Spec.Image != image:
		r.Spec.Image = image
		_, err = d.st.As(d.manager).Update(ctx, r)
		return err
	}
	return nil
}

// Remove removes the record of the set with UID uid, if there is one.
func (d fakeDNS) Remove(ctx context.Context, uid string) error {
	_, err := d.st.As(d.manager).Delete(ctx, uid)
	return store.IgnoreNotFound(err)
}

const dnsFinalizer = "dns.steady.test/record"

// withFinalizer keeps an external record per set, cleaned up through a
// finalizer: it adds the finalizer first, then makes the record (only for
// a set a fresh read confirms, since a cache may show one already
// deleted); on deletion it removes the record, then the finalizer.
type withFinalizer struct {
	sets    *store.Store[setSpec, setStatus]
	setc    *cache.Cache[setSpec, setStatus]
	dns     fakeDNS
	manager string
}

func finalizerConfig() reconciletest.Config[setSpec, setStatus] {
	cfg := config(noBug, reconciletest.AllFaults())
	cfg.Setup = func(env *reconciletest.Env[setSpec, setStatus]) (reconcile.Reconciler[string], error) {
		recs, err := reconciletest.NewStore[recordSpec, struct{}](env.Process, "Record")
		if err != nil {
			return nil, err
		}
		return &withFinalizer{sets: env.Store, setc: env.Cache, dns: fakeDNS{recs, env.Manager}, manager: env.Manager}, nil
	}
	cfg.Converged = func(ctx context.Context, b kv.Backend, s *set) error {
		if err := reconciletest.ReadyConverged(ctx, b, s); err != nil {
			return err
		}
		recs, err := store.New[recordSpec, struct{}](b, "Record")
		if err != nil {
			return err
		}
		l, err := recs.List(ctx, store.ListOptions{})
		if err != nil {
			return err
		}
		found := false
		for _, r := range l.Items {
			switch {
			case r.Meta.Name == s.Meta.UID:
				found = true
				if r.Spec.Image != s.Spec.Image {
					return fmt.Errorf("its record says %q, the set %q", r.Spec.Image, s.Spec.Image)
				}
			case r.Spec.Set == s.Meta.Name:
				return fmt.Errorf("the record of an earlier set %s (UID %s) leaked", r.Spec.Set, r.Meta.Name)
			}
		}
		if !found {
			return errors.New("no record")
		}
		return nil
	}
	return cfg
}

func (r *withFinalizer) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	s, ok := r.setc.Get(name)
	if !ok {
		return reconcile.Result{}, nil // the finalizer held it until its record was removed
	}
	w := r.sets.As(r.manager)
	if s.Meta.DeletionRequested {
		if !slices.Contains(s.Meta.Finalizers, dnsFinalizer) {
			return reconcile.Result{}, nil
		}
		if err := r.dns.Remove(ctx, s.Meta.UID); err != nil {
			return reconcile.Result{}, err
		}
		cp := *s
		cp.Meta.Finalizers = slices.DeleteFunc(slices.Clone(s.Meta.Finalizers), func(f string) bool { return f == dnsFinalizer })
		_, err := w.Update(ctx, &cp) // a stale copy conflicts, and is read again
		return reconcile.Result{}, store.IgnoreNotFound(err)
	}
	if !slices.Contains(s.Meta.Finalizers, dnsFinalizer) {
		cp := *s
		cp.Meta.Finalizers = append(slices.Clone(s.Meta.Finalizers), dnsFinalizer)
		_, err := w.Update(ctx, &cp)
		return reconcile.Result{RequeueAfterWrite: err == nil}, store.IgnoreNotFound(err)
	}
	if s.Spec.Image == missingImage {
		return reconcile.Result{}, reconcile.Blocked("ImageMissing", fmt.Errorf("image %q cannot be pulled", s.Spec.Image))
	}
	live, err := r.sets.Get(ctx, name)
	if err != nil || live.Meta.UID != s.Meta.UID || live.Meta.DeletionRequested {
		return reconcile.Result{}, store.IgnoreNotFound(err) // the cache is behind: its event brings us back
	}
	if err := r.dns.Ensure(ctx, s.Meta.UID, name, s.Spec.Image); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, applyReady(ctx, r.sets, r.manager, s)
}

// genStatus is the status of the observedGeneration controller: what it
// saw, and at which generation, as controller-runtime users write it.
type genStatus struct {
	Ready              int   `json:"ready"`
	ObservedGeneration int64 `json:"observedGeneration"`
}

type genSet = store.Object[setSpec, genStatus]

// observedGen writes its status with UpdateStatus on a copy of the cached
// object (the r.Status().Update habit), stamping observedGeneration; a
// stale copy conflicts and is read again. Pods are named by index and
// collected by the GC.
type observedGen struct {
	sets    *store.Store[setSpec, genStatus]
	setc    *cache.Cache[setSpec, genStatus]
	pods    *store.Store[podSpec, podStatus]
	podc    *cache.Cache[podSpec, podStatus]
	manager string
}

func observedGenConfig() reconciletest.Config[setSpec, genStatus] {
	return reconciletest.Config[setSpec, genStatus]{
		Kind:    "Set",
		Objects: 4,
		Object: func(i int, rng *rand.Rand) *genSet {
			s := reconcilableSet(i, rng)
			return &genSet{Meta: s.Meta, Spec: s.Spec}
		},
		Setup: func(env *reconciletest.Env[setSpec, genStatus]) (reconcile.Reconciler[string], error) {
			pods, err := reconciletest.NewStore[podSpec, podStatus](env.Process, "Pod")
			if err != nil {
				return nil, err
			}
			podc := reconciletest.NewCache(env.Process, pods)
			env.Watch(reconcile.FromOwned(podc, "Set"))
			g, err := gc.New("pod-gc", podc, pods, []gc.Owner{gc.OwnerKind(env.Cache, env.Store)},
				reconcile.WithElector(env.Elector()), reconcile.WithLogger(quiet))
			if err != nil {
				return nil, err
			}
			env.Go(g.Run)
			return &observedGen{sets: env.Store, setc: env.Cache, pods: pods, podc: podc, manager: env.Manager}, nil
		},
		Converged: func(ctx context.Context, b kv.Backend, s *genSet) error {
			if s.Status.ObservedGeneration != s.Meta.Generation || s.Status.Ready != s.Spec.Replicas {
				return fmt.Errorf("status %+v at generation %d", s.Status, s.Meta.Generation)
			}
			return converged(ctx, b, &set{Meta: s.Meta, Spec: s.Spec, Conditions: []store.Condition{{Type: conditions.Ready, Status: store.ConditionTrue, ObservedGeneration: s.Meta.Generation}}})
		},
		Compete: func(ctx context.Context, b kv.Backend, w *store.Writer[setSpec, genStatus], name string, rng *rand.Rand) error {
			st, err := store.New[setSpec, genStatus](b, "Set")
			if err != nil {
				return err
			}
			s, err := st.Get(ctx, name)
			if err != nil {
				return err
			}
			s.Spec.Replicas = 1 + rng.IntN(3)
			s.Spec.Image = fmt.Sprintf("app:v%d", rng.IntN(3))
			_, err = w.Update(ctx, s)
			return err
		},
		Faults: reconciletest.AllFaults(),
	}
}

func (r *observedGen) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	g, ok := r.setc.Get(name)
	if !ok || g.Meta.DeletionRequested {
		return reconcile.Result{}, nil
	}
	s := &set{Meta: g.Meta, Spec: g.Spec}
	wrote, err := syncPods(ctx, r.pods.As(r.manager), r.podc, s, indexName(s))
	if err != nil || wrote {
		return reconcile.Result{RequeueAfterWrite: wrote}, err
	}
	if g.Status.ObservedGeneration == g.Meta.Generation && g.Status.Ready == g.Spec.Replicas {
		return reconcile.Result{}, nil
	}
	cp := *g
	cp.Status = genStatus{Ready: g.Spec.Replicas, ObservedGeneration: g.Meta.Generation}
	_, err = r.sets.As(r.manager).UpdateStatus(ctx, &cp, store.WithObserved(g.Meta))
	return reconcile.Result{}, store.IgnoreNotFound(err)
}
