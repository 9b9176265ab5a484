package reconciletest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/shard"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// The replicas harness: a sharded Loop run as several replicas over one
// memstore, each seeing it through its own link that a schedule can cut
// (a partition: calls hang until their ctx ends), under seeded crashes,
// partitions short and longer than the lease TTL, joins and leaves, while
// a user keeps changing objects. Then every fault stops and the harness
// checks that every object converged, that no two replicas ever reconciled
// one key at the same time, and that the store accepted no write of a
// replica for a key whose shard key it did not hold at that revision.

type rspec struct {
	Replicas int `json:"replicas"`
}

type rstatus struct {
	Replicas int `json:"replicas"`
}

const (
	rShards = 32
	rTTL    = 3 * time.Second
	rRetry  = 500 * time.Millisecond
	rKind   = "App"
)

// link is one replica's view of the store. While it is cut (a partition),
// reads and watches hang until the link heals or their ctx ends, and a
// write is on the wire: it reaches the store when the link heals, whatever
// its caller did meanwhile (it gets its ctx's error when its ctx ends), as
// a request delayed in the network does. Such late writes are what fences
// are for. Watches already open keep delivering: a cut replica still
// hears, it cannot act.
type link struct {
	store.Backend
	f      *rfleet
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

func (l *link) Get(ctx context.Context, key string) (store.KV, error) {
	if err := l.pass(ctx); err != nil {
		return store.KV{}, err
	}
	return l.Backend.Get(ctx, key)
}

func (l *link) List(ctx context.Context, p string, o store.KVListOptions) (store.KVList, error) {
	if err := l.pass(ctx); err != nil {
		return store.KVList{}, err
	}
	return l.Backend.List(ctx, p, o)
}

func (l *link) Watch(ctx context.Context, p string, from int64) (<-chan store.KVEvent, error) {
	if err := l.pass(ctx); err != nil {
		return nil, err
	}
	return l.Backend.Watch(ctx, p, from)
}

type txnResult struct {
	rev int64
	err error
}

func (l *link) Txn(ctx context.Context, conds []store.Cond, w store.Write) (int64, error) {
	ch := l.blocked()
	if ch == nil {
		rev, err := l.Backend.Txn(ctx, conds, w)
		l.f.noteWrite(l.id, w, rev, err)
		return rev, err
	}
	res := make(chan txnResult, 1)
	l.late.Go(func() {
		<-ch
		rev, err := l.Backend.Txn(context.WithoutCancel(ctx), conds, w)
		l.f.noteWrite(l.id, w, rev, err)
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

type rfleet struct {
	t    *testing.T
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

func (f *rfleet) start() *rreplica {
	t := f.t
	f.next++
	id := fmt.Sprintf("r%d", f.next)
	ln := &link{Backend: f.mem, f: f, id: id}
	st, err := store.New[rspec, rstatus](ln, rKind)
	require.NoError(t, err)
	c := cache.New[rspec, rstatus](st)
	sh, err := shard.New(ln, "apps", id, shard.WithShards(rShards), shard.WithTTL(rTTL), shard.WithRetryPeriod(rRetry))
	require.NoError(t, err)
	delay := time.Duration(f.rng.Int64N(int64(20 * time.Millisecond)))
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
		obj, ok := c.Get(key)
		if !ok {
			return reconcile.Result{}, nil
		}
		time.Sleep(delay) // an external call
		_, err := st.As("ctl").ApplyStatus(ctx, key, rstatus{Replicas: obj.Spec.Replicas}, nil)
		return reconcile.Result{}, store.IgnoreNotFound(err)
	})
	l, err := reconcile.New[string](id, r, reconcile.FromStore(c, st), reconcile.WithSharding(sh), reconcile.WithWorkers(4),
		reconcile.WithFieldManager("ctl"))
	require.NoError(t, err)
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
func (f *rfleet) noteWrite(id string, w store.Write, rev int64, err error) {
	if err != nil || strings.HasPrefix(w.Key, "_") {
		return
	}
	f.mu.Lock()
	f.writes = append(f.writes, accepted{id, w.Key[strings.LastIndex(w.Key, "/")+1:], rev})
	f.mu.Unlock()
}

// pick removes and returns a random live replica.
func (f *rfleet) pick() *rreplica {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := f.rng.IntN(len(f.alive))
	r := f.alive[i]
	f.alive = append(f.alive[:i], f.alive[i+1:]...)
	return r
}

func (f *rfleet) nalive() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.alive)
}

func (f *rfleet) fault(name string) {
	f.mu.Lock()
	f.faults[name]++
	f.mu.Unlock()
}

// step injects one seeded fault.
func (f *rfleet) step() {
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
		d := time.Duration(f.rng.Int64N(int64(2 * rTTL)))
		if d > rTTL {
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
func (f *rfleet) staleWrites(t *testing.T, events []store.KVEvent) []string {
	var out []string
	for _, w := range f.writes {
		key := "_shards/apps/shard/" + fmt.Sprint(shard.Of(w.key, rShards))
		holder := ""
		for _, ev := range events {
			if ev.Revision >= w.rev {
				break
			}
			if ev.KV.Key != key {
				continue
			}
			holder = ""
			if ev.Type == store.KVPut {
				var rec struct{ Holder string }
				require.NoError(t, json.Unmarshal(ev.KV.Value, &rec))
				holder = rec.Holder
			}
		}
		if holder != w.replica {
			out = append(out, fmt.Sprintf("%s wrote %s at revision %d; its shard was held by %q", w.replica, w.key, w.rev, holder))
		}
	}
	return out
}

func simulateReplicas(t *testing.T, seed uint64) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New(memstore.WithHistorySize(1 << 20))
		f := &rfleet{t: t, mem: mem, rng: rand.New(rand.NewPCG(seed, 28)), running: map[string]string{}, faults: map[string]int{}}
		user, err := store.New[rspec, rstatus](mem, rKind)
		require.NoError(t, err)
		ctx := context.Background()
		const objects = 100
		for i := range objects {
			_, err := user.As("user").Create(ctx, &store.Object[rspec, rstatus]{Meta: store.Meta{Name: fmt.Sprintf("o%d", i)}, Spec: rspec{Replicas: 1}})
			require.NoError(t, err)
		}
		// Shard keys' history, for the stale-write check.
		wctx, stopWatch := context.WithCancel(ctx)
		evc, err := mem.Watch(wctx, "_shards/apps/shard/", 0)
		require.NoError(t, err)
		var events []store.KVEvent
		var watched sync.WaitGroup
		watched.Go(func() {
			for ev := range evc {
				if !ev.Progress && ev.Err == nil {
					events = append(events, ev)
				}
			}
		})

		for range 3 {
			f.start()
		}
		time.Sleep(2 * rRetry)
		for range 12 {
			time.Sleep(time.Duration(200+f.rng.IntN(2800)) * time.Millisecond)
			for range 20 {
				name := fmt.Sprintf("o%d", f.rng.IntN(objects))
				_, err := user.As("user").Apply(ctx, name, map[string]any{"replicas": 1 + f.rng.IntN(9)}, store.WithForce())
				require.NoError(t, err)
			}
			f.step()
		}
		for _, r := range f.all {
			r.link.setCut(false) // crashed replicas' writes on the wire land now
		}
		time.Sleep(3*rTTL + 4*rRetry)
		synctest.Wait()

		list, err := user.List(ctx, store.ListOptions{})
		require.NoError(t, err)
		var unconverged []string
		for _, o := range list.Items {
			if o.Status.Replicas != o.Spec.Replicas {
				unconverged = append(unconverged, fmt.Sprintf("%s: spec %d status %d", o.Meta.Name, o.Spec.Replicas, o.Status.Replicas))
			}
		}
		for _, r := range f.all {
			r.cancel()
		}
		for _, r := range f.all {
			<-r.done
			r.link.late.Wait()
		}
		stopWatch()
		watched.Wait()
		f.mu.Lock()
		defer f.mu.Unlock()
		stale := f.staleWrites(t, events)
		t.Logf("seed %d: faults %v; %d writes accepted, %d replicas started", seed, f.faults, len(f.writes), len(f.all))
		require.Empty(t, unconverged, "every object converges")
		require.Empty(t, f.overlaps, "no two replicas reconcile one key at the same time")
		require.Empty(t, stale, "no write is accepted from a replica that did not hold the key's shard")
	})
}

// TestReplicas runs seeded schedules of a sharded Loop's replicas under
// crashes, partitions, lease expiries, joins and leaves.
func TestReplicas(t *testing.T) {
	seeds := 8
	if testing.Short() {
		seeds = 2
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { simulateReplicas(t, seed) })
	}
}
