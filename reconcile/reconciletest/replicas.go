package reconciletest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/shard"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// Replicas runs a user's reconciler as a sharded Loop's replicas
// (reconcile.WithSharding) over one memstore, under seeded crashes,
// partitions shorter and longer than the lease TTL, joins and leaves, while
// a user keeps changing objects; see RunReplicas.
type Replicas[S, T any] struct {
	// Kind is the store kind; default "App".
	Kind string
	// Seed is the first schedule's seed; Schedules how many run (default 4).
	Seed      uint64
	Schedules int
	// Objects is how many objects exist (default 100); Object makes the
	// i-th (its Meta.Name is set to "o<i>" if empty). Required.
	Objects int
	Object  func(i int, rng *rand.Rand) *store.Object[S, T]
	// Change is the user's change to an object, applied by manager "user"
	// with store.WithForce (a partial spec, as for store.Writer.Apply).
	// Required.
	Change func(name string, rng *rand.Rand) any
	// Setup builds one replica's reconciler over its own store view and
	// cache (both cut off with the replica). Required.
	Setup func(st *store.Store[S, T], c *cache.Cache[S, T]) (reconcile.Reconciler[string], error)
	// Converged reports why obj is not yet converged (nil: it is). Required.
	Converged func(obj *store.Object[S, T]) error
	// Options are added to every replica's Loop (its field manager is
	// "ctl" unless Options set another).
	Options []reconcile.Option
	// Shards is S (default 32), TTL the membership lease (default 3s) and
	// RetryPeriod how often a replica looks at the members and the shards
	// (default 500ms), as the replicas' shard.New options. Faults is how
	// many seeded faults one schedule injects (default 12), one every 0.2
	// to 3s of virtual time: a crash, a partition shorter or longer than
	// the TTL, a join or a leave, with 2 to 5 replicas alive.
	Shards      int
	TTL         time.Duration
	RetryPeriod time.Duration
	Faults      int
	// CacheShards gives each replica's cache cache.WithKeep(its Sharder's
	// Caches), so each caches only its shards' objects, as a sharded
	// controller that saves memory does.
	CacheShards bool

	unsharded bool // mutation: replicas without WithSharding
}

// withDefaults returns cfg with its zero durations and counts defaulted.
func (cfg Replicas[S, T]) withDefaults() Replicas[S, T] {
	if cfg.Shards <= 0 {
		cfg.Shards = 32
	}
	if cfg.TTL <= 0 {
		cfg.TTL = 3 * time.Second
	}
	if cfg.RetryPeriod <= 0 {
		cfg.RetryPeriod = 500 * time.Millisecond
	}
	if cfg.Faults <= 0 {
		cfg.Faults = 12
	}
	return cfg
}

// replicasResult is what one schedule's checks found.
type replicasResult struct {
	unconverged, overlaps, stale []string
}

// RunReplicas runs cfg's schedules, each in a testing/synctest bubble, and
// fails t unless, once every fault stopped: every object converged; no two
// replicas ever ran Reconcile for one key at the same time; and the store
// accepted no write of a replica to an object whose shard key, at that
// revision, it did not hold (read from the store's history, not from what
// the replicas believed).
func RunReplicas[S, T any](t *testing.T, cfg Replicas[S, T]) {
	t.Helper()
	if cfg.Object == nil || cfg.Change == nil || cfg.Setup == nil || cfg.Converged == nil {
		t.Fatal("reconciletest.Replicas: Object, Change, Setup and Converged are required")
	}
	cfg = cfg.withDefaults()
	n := cfg.Schedules
	if n <= 0 {
		n = 4
	}
	for i := range uint64(n) {
		seed := cfg.Seed + i
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			var res replicasResult
			synctest.Test(t, func(t *testing.T) { res = simulateReplicas(t, cfg, seed) })
			if len(res.unconverged)+len(res.overlaps)+len(res.stale) == 0 {
				return
			}
			t.Errorf("seed %d: %d unconverged %v; %d overlapping reconciles %v; %d stale-shard writes accepted %v",
				seed, len(res.unconverged), firstFew(res.unconverged), len(res.overlaps), firstFew(res.overlaps), len(res.stale), firstFew(res.stale))
		})
	}
}

func firstFew(s []string) []string { return s[:min(len(s), 5)] }

// link is one replica's view of the store. While it is cut (a partition),
// reads and watches hang until the link heals or their ctx ends, and a
// write is on the wire: it reaches the store when the link heals, whatever
// its caller did meanwhile (it gets its ctx's error when its ctx ends), as
// a request delayed in the network does. Such late writes are what fences
// are for. Watches already open keep delivering: a cut replica still
// hears, it cannot act.
type link struct {
	kv.Backend
	note   func(id string, w kv.Write, rev int64, err error)
	id     string
	mu     sync.Mutex
	healed chan struct{} // non-nil while cut; closed when healed
	late   sync.WaitGroup
}

func (l *link) setCut(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case on && l.healed == nil:
		l.healed = make(chan struct{})
	case !on && l.healed != nil:
		close(l.healed)
		l.healed = nil
	}
}

func (l *link) blocked() chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.healed
}

// pass waits for the link to heal, if cut; it returns ctx's error if ctx
// ends first.
func (l *link) pass(ctx context.Context) error {
	if ch := l.blocked(); ch != nil {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (l *link) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	if err := l.pass(ctx); err != nil {
		return kv.KeyValue{}, err
	}
	return l.Backend.Get(ctx, key)
}

func (l *link) List(ctx context.Context, p string, o kv.ListOptions) (kv.List, error) {
	if err := l.pass(ctx); err != nil {
		return kv.List{}, err
	}
	return l.Backend.List(ctx, p, o)
}

func (l *link) Watch(ctx context.Context, p string, from int64) (<-chan kv.Event, error) {
	if err := l.pass(ctx); err != nil {
		return nil, err
	}
	return l.Backend.Watch(ctx, p, from)
}

type txnResult struct {
	rev int64
	err error
}

func (l *link) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	ch := l.blocked()
	if ch == nil {
		rev, err := l.Backend.Txn(ctx, conds, w)
		l.note(l.id, w, rev, err)
		return rev, err
	}
	// The write outlives this call when ctx ends first, and a Backend
	// retains neither the conds nor a value not handed over (kv.Backend):
	// the caller may reuse both once Txn returns.
	conds = slices.Clone(conds)
	if !w.Owned {
		w.Value = bytes.Clone(w.Value)
	}
	res := make(chan txnResult, 1)
	l.late.Go(func() {
		<-ch
		rev, err := l.Backend.Txn(context.WithoutCancel(ctx), conds, w)
		l.note(l.id, w, rev, err)
		res <- txnResult{rev, err}
	})
	select {
	case r := <-res:
		return r.rev, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

type accepted struct {
	replica, key string
	rev          int64
}

type rfleet[S, T any] struct {
	t    *testing.T
	cfg  *Replicas[S, T]
	kind string
	mem  *memstore.Store
	rng  *rand.Rand
	next int

	mu       sync.Mutex
	running  map[string]string // key → replica in Reconcile
	overlaps []string
	writes   []accepted
	faults   map[string]int
	alive    []*rreplica
	all      []*rreplica
}

type rreplica struct {
	id     string
	link   *link
	cancel context.CancelFunc
	done   chan struct{}
}

func (f *rfleet[S, T]) start() *rreplica {
	t := f.t
	f.next++
	id := fmt.Sprintf("r%d", f.next)
	ln := &link{Backend: f.mem, note: f.noteWrite, id: id}
	st, err := store.New[S, T](ln, f.kind)
	if err != nil {
		t.Fatal(err)
	}
	var sh *shard.Sharder
	if !f.cfg.unsharded {
		sh, err = shard.New(ln, "apps", id, shard.WithShards(f.cfg.Shards), shard.WithTTL(f.cfg.TTL), shard.WithRetryPeriod(f.cfg.RetryPeriod))
		if err != nil {
			t.Fatal(err)
		}
	}
	var copts []cache.Option
	if sh != nil && f.cfg.CacheShards {
		copts = append(copts, cache.WithKeep(sh.Caches))
	}
	c := cache.New[S, T](st, copts...)
	user, err := f.cfg.Setup(st, c)
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
		f.mu.Lock()
		if other, ok := f.running[key]; ok {
			f.overlaps = append(f.overlaps, fmt.Sprintf("%s: %s and %s", key, other, id))
		}
		f.running[key] = id
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			if f.running[key] == id {
				delete(f.running, key)
			}
			f.mu.Unlock()
		}()
		return user.Reconcile(ctx, key)
	})
	opts := []reconcile.Option{reconcile.WithWorkers(4), reconcile.WithFieldManager("ctl")}
	if sh != nil {
		opts = append(opts, reconcile.WithSharding(sh))
	}
	l, err := reconcile.New[string](id, r, reconcile.FromStore(c, st), append(opts, f.cfg.Options...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rep := &rreplica{id: id, link: ln, cancel: cancel, done: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.Run(ctx) })
	wg.Go(func() { _ = l.Run(ctx) })
	go func() { wg.Wait(); close(rep.done) }()
	f.mu.Lock()
	f.alive = append(f.alive, rep)
	f.all = append(f.all, rep)
	f.mu.Unlock()
	return rep
}

// noteWrite records a write of replica id the store accepted on an
// object of the kind.
func (f *rfleet[S, T]) noteWrite(id string, w kv.Write, rev int64, err error) {
	if err != nil || strings.HasPrefix(w.Key, "_") {
		return
	}
	f.mu.Lock()
	f.writes = append(f.writes, accepted{id, w.Key[strings.LastIndex(w.Key, "/")+1:], rev})
	f.mu.Unlock()
}

// pick removes and returns a random live replica.
func (f *rfleet[S, T]) pick() *rreplica {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := f.rng.IntN(len(f.alive))
	r := f.alive[i]
	f.alive = append(f.alive[:i], f.alive[i+1:]...)
	return r
}

func (f *rfleet[S, T]) nalive() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.alive)
}

func (f *rfleet[S, T]) fault(name string) {
	f.mu.Lock()
	f.faults[name]++
	f.mu.Unlock()
}

// step injects one seeded fault.
func (f *rfleet[S, T]) step() {
	switch n := f.nalive(); {
	case n < 2:
		f.fault("join")
		f.start()
		return
	case n >= 5:
		f.fault("leave")
		f.pick().cancel()
		return
	}
	switch f.rng.IntN(5) {
	case 0: // crash: cut off for good, then the process ends; a replacement joins
		f.fault("crash")
		r := f.pick()
		r.link.setCut(true)
		r.cancel()
		f.start()
	case 1: // partition shorter or longer than the TTL (a lease expiry)
		f.mu.Lock()
		r := f.alive[f.rng.IntN(len(f.alive))]
		f.mu.Unlock()
		d := time.Duration(f.rng.Int64N(int64(2 * f.cfg.TTL)))
		if d > f.cfg.TTL {
			f.fault("partition-past-ttl")
		} else {
			f.fault("partition")
		}
		r.link.setCut(true)
		time.AfterFunc(d, func() { r.link.setCut(false) })
	case 2, 3:
		f.fault("join")
		f.start()
	case 4:
		f.fault("leave")
		f.pick().cancel()
	}
}

// staleWrites returns the accepted writes of a replica for a key whose
// shard key, at that revision, named another holder or none: read from the
// store's own history of shard keys, not from what the replicas believed.
func (f *rfleet[S, T]) staleWrites(events []kv.Event) []string {
	var out []string
	for _, w := range f.writes {
		key := "_shards/apps/shard/" + fmt.Sprint(shard.Of(w.key, f.cfg.Shards))
		holder := ""
		for _, ev := range events {
			if ev.Revision >= w.rev {
				break
			}
			if ev.KV.Key != key {
				continue
			}
			holder = ""
			if ev.Type == kv.EventPut {
				var rec struct{ Holder string }
				if err := json.Unmarshal(ev.KV.Value, &rec); err != nil {
					f.t.Fatalf("shard key %s: %v", key, err)
				}
				holder = rec.Holder
			}
		}
		if holder != w.replica {
			out = append(out, fmt.Sprintf("%s wrote %s at revision %d; its shard was held by %q", w.replica, w.key, w.rev, holder))
		}
	}
	return out
}

func simulateReplicas[S, T any](t *testing.T, cfg Replicas[S, T], seed uint64) replicasResult {
	cfg = cfg.withDefaults()
	kind := cmp.Or(cfg.Kind, "App")
	objects := cfg.Objects
	if objects <= 0 {
		objects = 100
	}
	mem := memstore.New(memstore.WithHistorySize(1 << 20))
	f := &rfleet[S, T]{t: t, cfg: &cfg, kind: kind, mem: mem, rng: rand.New(rand.NewPCG(seed, 28)), running: map[string]string{}, faults: map[string]int{}}
	user, err := store.New[S, T](mem, kind)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f.createObjects(ctx, user, objects)
	stopWatch := f.watchShards(ctx)

	for range 3 {
		f.start()
	}
	time.Sleep(2 * cfg.RetryPeriod)
	for range cfg.Faults {
		f.changeAndFault(ctx, user, objects)
	}
	for _, r := range f.all {
		r.link.setCut(false) // crashed replicas' writes on the wire land now
	}
	time.Sleep(3*cfg.TTL + 4*cfg.RetryPeriod)
	synctest.Wait()

	var res replicasResult
	res.unconverged = f.unconverged(ctx, user)
	for _, r := range f.all {
		r.cancel()
	}
	for _, r := range f.all {
		<-r.done
		r.link.late.Wait()
	}
	events := stopWatch()
	f.mu.Lock()
	defer f.mu.Unlock()
	res.stale = f.staleWrites(events)
	res.overlaps = f.overlaps
	t.Logf("seed %d: faults %v; %d writes accepted, %d replicas started", seed, f.faults, len(f.writes), len(f.all))
	return res
}

// createObjects creates the simulation's objects as the user, drawing
// each from cfg.Object with the fleet's rng.
func (f *rfleet[S, T]) createObjects(ctx context.Context, user *store.Store[S, T], objects int) {
	for i := range objects {
		obj := f.cfg.Object(i, f.rng)
		if obj.Meta.Name == "" {
			obj.Meta.Name = fmt.Sprintf("o%d", i)
		}
		if _, err := user.As("user").Create(ctx, obj); err != nil {
			f.t.Fatalf("create object %d: %v", i, err)
		}
	}
}

// watchShards records the shard keys' history, for the stale-write check.
// The returned func stops the watch and returns the events seen.
func (f *rfleet[S, T]) watchShards(ctx context.Context) func() []kv.Event {
	wctx, stop := context.WithCancel(ctx)
	evc, err := f.mem.Watch(wctx, "_shards/apps/shard/", 0)
	if err != nil {
		f.t.Fatal(err)
	}
	var events []kv.Event
	var watched sync.WaitGroup
	watched.Go(func() {
		for ev := range evc {
			if !ev.Progress && ev.Err == nil {
				events = append(events, ev)
			}
		}
	})
	return func() []kv.Event {
		stop()
		watched.Wait()
		return events
	}
}

// changeAndFault waits a random while, applies 20 user changes to random objects,
// then injects one fault.
func (f *rfleet[S, T]) changeAndFault(ctx context.Context, user *store.Store[S, T], objects int) {
	time.Sleep(time.Duration(200+f.rng.IntN(2800)) * time.Millisecond)
	for range 20 {
		name := fmt.Sprintf("o%d", f.rng.IntN(objects))
		if _, err := user.As("user").Apply(ctx, name, f.cfg.Change(name, f.rng), store.WithForce()); err != nil {
			f.t.Fatalf("change %s: %v", name, err)
		}
	}
	f.step()
}

// unconverged lists the objects cfg.Converged rejects, with its reason.
func (f *rfleet[S, T]) unconverged(ctx context.Context, user *store.Store[S, T]) []string {
	list, err := user.List(ctx, store.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, o := range list.Items {
		if err := f.cfg.Converged(o); err != nil {
			out = append(out, fmt.Sprintf("%s: %v", o.Meta.Name, err))
		}
	}
	return out
}
