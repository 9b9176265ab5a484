package reconciletest

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/lease"
)

// Process is one incarnation of the simulated controller process. Everything
// built on it (stores, caches, the Loop, the reconciler) lives and dies with
// it: a crash kills it, and the next incarnation starts from nothing but the
// store.
type Process struct {
	// Incarnation counts the processes of a schedule from 0.
	Incarnation int
	// Backend is this process's view of the store, through which the
	// harness injects faults. Build stores on it with NewStore.
	Backend kv.Backend
	// Other is this process's view of a second store, for a controller
	// whose children live in another store than its primary objects: a
	// memstore of its own, with revisions unrelated to Backend's, seen
	// through the same faults (gated writes that conflict, fail, lose their
	// reply or crash the process; watch events dropped, duplicated,
	// delayed, reordered; watches expired), time travel excepted. The
	// lease lives in Backend's store, so a write to Other cannot carry the
	// term's fence: write to it with store.WithoutFence(ctx), and make
	// such writes idempotent or owned, since a deposed process may still
	// make one (the harness does not fail a schedule for an unfenced write
	// to Other). Build stores on it with NewOtherStore.
	Other kv.Backend
	// Rand is a random source seeded from the schedule and the incarnation,
	// for reconcilers that need randomness and still want a seed to replay.
	// It is not safe for concurrent use.
	Rand *rand.Rand

	w      *world
	ctx    context.Context
	cancel context.CancelFunc
	dead   chan struct{}
	once   sync.Once
	opts   []reconcile.Option
	srcs   []reconcile.Source[string]
	caches []func(context.Context) error
	goes   []func(context.Context) error // Go's functions
	follow *follower
	revs   []spaceRev              // the caches' revisions, with their space
	byPfx  map[string]func() int64 // the same, by the prefix each lists (tagged with its space)
	done   chan struct{}

	// Guarded by w.mu.
	fence  int64            // the revision of the leader key of its last term
	travel map[string]int64 // prefix → the revision its first listing is served at
	// lagFor holds the watch that follows a time-travelled listing back
	// for this long: the lagging replica stays behind a while.
	lagFor time.Duration
	lagged map[string]bool // prefix → its listing travelled, its watch is still to come
}

// Use adds Loop options for this incarnation's Loop. Call it from Setup.
func (p *Process) Use(opts ...reconcile.Option) { p.opts = append(p.opts, opts...) }

// Watch adds sources of hints to this incarnation's Loop, beside the
// primary kind's, such as reconcile.FromOwned(children, kind). Call it from
// Setup.
func (p *Process) Watch(srcs ...reconcile.Source[string]) { p.srcs = append(p.srcs, srcs...) }

// Go runs fn for the life of this incarnation, beside its Loop and
// caches: another Loop of the controller, such as a garbage collector
// (gc.New) built in Setup over caches of NewCache. fn must return when its
// ctx ends (the process dies or the schedule ends); an error it returns
// before that fails the schedule. Call it from Setup.
//
// fn's Loop is not gated by the scheduler: its writes are (they are
// faulty and ordered like every write of the process), but its reconciles
// are not steps, so a seed replays its fault schedule and checks, not
// always its trace step for step.
func (p *Process) Go(fn func(ctx context.Context) error) { p.goes = append(p.goes, fn) }

// Elector returns the elector to give every other Loop this incarnation
// runs (reconcile.WithElector): it leads while the harness's Loop leads,
// with the same term and fence, as a manager.Manager's Loops share one
// term. Without simulated leadership it leads as long as the process
// lives, and writes carry no fence.
func (p *Process) Elector() lease.Elector {
	if p.follow == nil {
		p.follow = &follower{changed: make(chan struct{})}
	}
	return p.follow
}

// follower hands the term of the harness's Loop to the other Loops of a
// process.
type follower struct {
	mu      sync.Mutex
	term    context.Context // nil before the first term
	fence   store.Fence
	changed chan struct{}
}

func (f *follower) publish(term context.Context, fence store.Fence) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.term, f.fence = term, fence
	close(f.changed)
	f.changed = make(chan struct{})
}

// Campaign implements lease.Elector: it returns once the harness's Loop
// leads, with a term that ends with that term or with ctx.
func (f *follower) Campaign(ctx context.Context) (context.Context, store.Fence, error) {
	for {
		f.mu.Lock()
		term, fence, changed := f.term, f.fence, f.changed
		f.mu.Unlock()
		if term != nil && term.Err() == nil {
			t, cancel := context.WithCancelCause(ctx)
			stop := context.AfterFunc(term, func() { cancel(context.Cause(term)) })
			context.AfterFunc(t, func() { stop() })
			if fence.Key != "" {
				t = lease.WithFence(t, fence)
			}
			return t, fence, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, store.Fence{}, ctx.Err()
		}
	}
}

// kill marks the process dead: from now on its backend view fails every
// call with store.ErrUnavailable, as a crashed process can reach nothing.
func (p *Process) kill() {
	p.once.Do(func() { close(p.dead) })
}

// spaceRev is the revision of one cache, and the space it follows.
type spaceRev struct {
	sp  *space
	rev func() int64
}

// holds reports whether every cache of p over space sp holds revision
// rev (the Loop compares a revision only with caches of its backend).
func (p *Process) holds(sp *space, rev int64) bool {
	for _, r := range p.revs {
		if r.sp == sp && r.rev() < rev {
			return false
		}
	}
	return true
}

func (p *Process) isDead() bool {
	select {
	case <-p.dead:
		return true
	default:
		return false
	}
}

// Env is what Setup gets for one incarnation: the process, and the store and
// cache of the primary kind over the process's faulty view of the store.
// The harness runs every cache built with NewCache and the Loop.
type Env[S, T any] struct {
	*Process
	// Store is the primary kind's store; write through Store.As(manager).
	Store *store.Store[S, T]
	// Cache is the primary kind's cache, the Loop's primary source.
	Cache *cache.Cache[S, T]
	// Manager is the manager the reconciler must write as.
	Manager string
}

// NewStore returns a store of kind over p's faulty backend, with UIDs the
// schedule generates deterministically, and opts (such as store.WithVersion).
func NewStore[S, T any](p *Process, kind string, opts ...store.Option) (*store.Store[S, T], error) {
	return newStore[S, T](p.Backend, kind, p.w.nextUID, opts)
}

// NewOtherStore returns a store of kind over p's faulty view of the second
// store (Process.Other), as NewStore does over Backend.
func NewOtherStore[S, T any](p *Process, kind string, opts ...store.Option) (*store.Store[S, T], error) {
	return newStore[S, T](p.Other, kind, p.w.nextUID, opts)
}

// NewCache returns a cache over st that the harness runs for the life of
// p, with a seeded relist backoff and a mutation detector that reports
// modified cached objects as violations.
func NewCache[S, T any](p *Process, st *store.Store[S, T]) *cache.Cache[S, T] {
	pol := backoff.Policy{Base: 10e6, Factor: 2, Cap: relistCap, Jitter: 0.2, Rand: p.w.newRand().Float64}
	c := cache.New[S, T](st,
		cache.WithRelistBackoff(pol),
		cache.WithMutationDetector(func(err error) { p.w.violate(HarmContract, "cache of %s: %v", kindName(st), err) }))
	sp := p.w.main
	if st.Backend() == p.Other {
		sp = p.w.other
	}
	p.caches = append(p.caches, c.Run)
	p.revs = append(p.revs, spaceRev{sp: sp, rev: c.Revision})
	if p.byPfx == nil {
		p.byPfx = map[string]func() int64{}
	}
	p.byPfx[sp.tag+st.Prefix()] = c.Revision
	return c
}

// kindName names st's kind in reports: the kind, and @version for a
// versioned kind (see store.WithVersion).
func kindName[S, T any](st *store.Store[S, T]) string {
	if v := storeVersion(st); v != "" {
		return st.Kind() + "@" + v
	}
	return st.Kind()
}

// lockedRand is a seeded source safe for concurrent use. Draws are taken in
// whatever order callers come, which is deterministic when the schedule is.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) Float64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}

// newStore returns a Store of kind over b whose Creates take their UIDs
// from uids (set before the Store is used).
func newStore[S, T any](b kv.Backend, kind string, uids func() string, opts []store.Option) (*store.Store[S, T], error) {
	st, err := store.New[S, T](b, kind, opts...)
	if err != nil {
		return nil, err
	}
	storeaccess.Of(st).(interface{ SetUIDs(func() string) }).SetUIDs(uids)
	return st, nil
}

// storeVersion is st's served version, "" for a kind without versions.
func storeVersion(st any) string {
	if v, ok := storeaccess.Of(st).(interface{ Version() string }); ok {
		return v.Version()
	}
	return ""
}
