package reconciletest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/lease"
)

// simulate plays one schedule and, unless the history check is off, the
// schedule injects nothing or the controller wrote no children, its
// fault-free reference run, and compares the two; it must run inside a
// synctest bubble.
func simulate[S, T any](ctx context.Context, cfg Config[S, T], seed uint64) *Report {
	rep, w := play(ctx, cfg, seed)
	ref := cfg.Faults.reference()
	if w == nil || cfg.SkipHistory || (ref == cfg.Faults && (cfg.Compete == nil || cfg.Faults.CompetingWrites == 0)) {
		return rep
	}
	if len(w.children) == 0 && len(w.leftover) == 0 {
		return rep // no children: nothing to compare
	}
	rcfg := cfg
	rcfg.Faults = ref
	rcfg.Compete = nil
	rrep, rw := play(ctx, rcfg, seed)
	rep.Reference = rrep
	if rw == nil {
		return rep
	}
	if rrep.Failed() {
		// The bug shows without faults too: the same harm.
		w.violate(rrep.Harms[0], "the fault-free reference run of this seed shows it too: %s", rrep.Violations[0])
	}
	w.compareHistory(rw)
	rep.Violations, rep.Harms = w.violations, w.harms
	return rep
}

// play plays one schedule of cfg. It returns the world too, for the
// history check; nil if the schedule could not start.
func play[S, T any](ctx context.Context, cfg Config[S, T], seed uint64) (*Report, *world) {
	w := newWorld(seed, cfg.Faults)
	w.kind = cfg.Kind
	w.manager = cfg.Manager
	w.leadership = cfg.Faults.LeadershipLosses > 0
	w.bound = cfg.bound()
	w.reconcileTime = cfg.ReconcileTime
	w.passes = cfg.Passes
	w.rep.Bound = w.bound
	fail := func(format string, args ...any) (*Report, *world) {
		w.violate(HarmContract, format, args...)
		w.rep.Violations, w.rep.Harms = w.violations, w.harms
		return w.rep, nil
	}

	primary, err := newStore[S, T](w.raw, cfg.Kind, w.nextPrimaryUID, cfg.StoreOptions)
	if err != nil {
		return fail("reconciletest: primary store: %v", err)
	}
	creator := primary.As(creatorManager)
	objRand := w.newRand()
	var names []string
	for i := range cfg.Objects {
		obj := cfg.Object(i, objRand)
		if obj == nil {
			return fail("reconciletest: Config.Object(%d) returned nil", i)
		}
		if _, err := creator.Create(ctx, obj); err != nil {
			return fail("reconciletest: creating object %d: %v", i, err)
		}
		names = append(names, obj.Meta.Name)
		w.counts(obj.Meta.Name)
	}
	w.names = names
	w.prefix = primary.Prefix()
	if cfg.Fixtures != nil {
		if err := cfg.Fixtures(ctx, w.raw); err != nil {
			return fail("reconciletest: Config.Fixtures: %v", err)
		}
	}
	w.work.del = func(ctx context.Context, name string) (int64, error) {
		rev, err := creator.Delete(ctx, name)
		return rev, store.IgnoreNotFound(err)
	}
	w.work.rec = func(ctx context.Context, i int, name string, rng *rand.Rand) error {
		obj := cfg.Object(i, rng)
		if obj == nil {
			return fmt.Errorf("Config.Object(%d) returned nil", i)
		}
		obj.Meta.Name = name
		_, err := creator.Create(ctx, obj)
		return err
	}
	if cfg.Compete != nil {
		comp := primary.As(competitorManager)
		w.competeFn = func(ctx context.Context, name string, rng *rand.Rand) error {
			return cfg.Compete(ctx, w.raw, comp, name, rng)
		}
	}
	w.newProc = func(n int) (*Process, error) { return startProcess(w, cfg, n, primary.Prefix()) }

	conv := &convergence[S, T]{cfg: cfg, st: primary, names: names, w: w}
	checkAt := func(deadline bool) {
		if deadline {
			conv.final(ctx, "within the bound", true)
			return
		}
		if conv.idleCheck(ctx) {
			w.rep.ConvergedAfter = max(time.Since(w.start)-w.rep.FaultsStopped, time.Nanosecond)
		}
	}
	if err := w.run(cfg.settle(), checkAt); err != nil {
		return fail("reconciletest: %v", err)
	}
	conv.final(ctx, "a resync period after the bound", false)
	conv.bounds()
	w.leftover = w.finalChildren(ctx)
	if !cfg.SkipHistory {
		w.flagOrphans()
	}
	w.rep.Violations, w.rep.Harms = w.violations, w.harms
	return w.rep, w
}

// startProcess builds and starts incarnation n of the controller: its
// view of the store, the primary store and cache, Setup's reconciler and
// the Loop, with the harness's seeded timing options.
func startProcess[S, T any](w *world, cfg Config[S, T], n int, prefix string) (*Process, error) {
	pctx, cancel := context.WithCancel(context.Background())
	p := &Process{Incarnation: n, w: w, ctx: pctx, cancel: cancel,
		dead: make(chan struct{}), done: make(chan struct{}), Rand: w.newRand()}
	p.Backend = &procBackend{w: w, p: p, prefix: prefix, sp: w.main}
	p.Other = &procBackend{w: w, p: p, prefix: prefix, sp: w.other}
	fail := func(err error) (*Process, error) {
		cancel()
		return nil, err
	}
	st, err := NewStore[S, T](p, cfg.Kind, cfg.StoreOptions...)
	if err != nil {
		return fail(err)
	}
	c := NewCache(p, st)
	r, err := cfg.Setup(&Env[S, T]{Process: p, Store: st, Cache: c, Manager: cfg.Manager})
	if err != nil {
		return fail(fmt.Errorf("setup of process %d: %w", n, err))
	}
	if r == nil {
		return fail(fmt.Errorf("setup of process %d returned a nil reconciler", n))
	}
	// The keys of each resync and new term are listed in name order, so
	// that a seed replays the order in which they are queued.
	primary := reconcile.FromStore(c, st, reconcile.WithSortedKeys[S, T]())
	opts := []reconcile.Option{
		reconcile.WithWorkers(cfg.Workers),
		reconcile.WithResync(w.spread(cfg.Resync), 0),
		reconcile.WithBackoff(backoff.Policy{Base: 10 * time.Millisecond, Factor: 2, Cap: cfg.BackoffCap,
			Jitter: 0.2, Rand: (&lockedRand{r: w.newRand()}).Float64}),
		reconcile.WithRetryLimit(backoff.BucketConfig{Rate: rate.Inf}),
		reconcile.WithFieldManager(cfg.Manager),
		reconcile.WithReadYourWritesTimeout(readYourWritesCap),
		// Hundreds of schedules of injected failures would flood the test
		// log; Config.Options may set a logger of its own.
		reconcile.WithLogger(slog.New(slog.DiscardHandler)),
	}
	el := &gatedElector{w: w, p: p}
	if w.leadership {
		inner, err := lease.New(&procBackend{w: w, p: p, elector: true}, leaseKey, fmt.Sprintf("process-%d", n),
			lease.WithTTL(leaseTTL), lease.WithRenewInterval(w.spread(leaseRenew)),
			lease.WithRetryPeriod(w.spread(leaseRetry)), lease.WithoutRelease())
		if err != nil {
			return fail(err)
		}
		el.inner = inner
	}
	opts = append(opts, reconcile.WithElector(el))
	opts = append(opts, p.opts...)
	opts = append(opts, cfg.Options...)
	loop, err := reconcile.New(cfg.Name, &gated{w: w, p: p, r: r}, reconcile.Sources(append([]reconcile.Source[string]{primary}, p.srcs...)...), opts...)
	if err != nil {
		return fail(err)
	}
	var wg sync.WaitGroup
	for _, run := range p.caches {
		wg.Go(func() {
			if err := run(pctx); err != nil {
				w.violate(HarmContract, "process %d: cache: %v", n, err)
			}
		})
	}
	for _, fn := range p.goes {
		wg.Go(func() {
			if err := fn(pctx); err != nil && pctx.Err() == nil {
				w.violate(HarmContract, "process %d: a function of Process.Go: %v", n, err)
			}
		})
	}
	wg.Go(func() {
		if err := loop.Run(pctx); err != nil {
			w.violate(HarmContract, "process %d: loop: %v", n, err)
		}
	})
	go func() {
		wg.Wait()
		close(p.done)
	}()
	return p, nil
}

// spread returns d shortened by up to 1% from the seed: periods of round
// lengths would otherwise make unrelated timers fire at one virtual
// instant, where the order of the goroutines they wake is up to the
// runtime.
func (w *world) spread(d time.Duration) time.Duration {
	return d - time.Duration(w.rng.Int64N(int64(d)/100+1))
}

// gated wraps the user's reconciler: each reconcile waits for the scheduler,
// takes ReconcileTime of virtual time, and runs with its key in ctx so its
// writes are attributed and open to write faults.
type gated struct {
	w *world
	p *Process
	r reconcile.Reconciler[string]
}

func (g *gated) Reconcile(ctx context.Context, key string) (reconcile.Result, error) {
	r, err := g.w.wait(ctx, &gate{p: g.p, key: key})
	if err != nil {
		return reconcile.Result{}, err
	}
	if r.d > 0 {
		t := time.NewTimer(r.d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return reconcile.Result{}, context.Cause(ctx)
		}
	}
	rec := &reconcileRec{key: key}
	res, err := g.r.Reconcile(context.WithValue(ctx, ctxKey{}, rec), key)
	if err == nil && (res.RequeueAfterWrite || res.Requeue) && res.RequeueAfter <= 0 {
		// The Loop waits, in each space written, for that space's caches.
		for _, last := range rec.last() {
			if !g.p.holds(last.sp, last.rev) {
				g.w.awaitWrite(g.p, last.sp, last.key, last.rev)
			}
		}
	}
	if err != nil && !errors.Is(err, errDead) {
		g.w.mu.Lock()
		if g.w.pastBound {
			g.w.counts(key).afterErrors++
		}
		g.w.mu.Unlock()
		g.w.trace("reconciled %s: error: %v", key, err)
	} else if err == nil {
		g.w.trace("reconciled %s: %+v", key, res)
	}
	return res, err
}

// compete lets the competing writer write a random object.
func (w *world) compete() {
	name := w.names[w.rng.IntN(len(w.names))]
	w.mu.Lock()
	w.rep.Faults["competing-write"]++
	w.disturbLocked(name)
	w.counts(name).stale = true
	w.competed[name] = true
	w.traceLocked("fault competing-write: %s", name)
	w.travelTo = append(w.travelTo, w.mem.Revision())
	w.mu.Unlock()
	w.actor = "competitor"
	defer func() { w.actor = "" }()
	if err := w.competeFn(context.Background(), name, w.rng); err != nil {
		w.trace("competing write of %s failed: %v", name, err)
	}
}

// ctxKey marks the ctx of a reconcile with its record.
type ctxKey struct{}

// reconcileRec is what the harness learns about one reconcile while it runs.
type reconcileRec struct {
	key string

	mu       sync.Mutex
	maxes    []lastWrite // per space written: the highest revision its writes got there
	attempts int         // writes attempted
}

// attempt counts a write attempt and returns its number, from 1.
func (r *reconcileRec) attempt() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts++
	return r.attempts
}

// lastWrite is the last write of a reconcile to one space: the Loop waits
// for that space's caches to hold it.
type lastWrite struct {
	sp  *space
	key string // tagged with its space
	rev int64
}

// wrote records a write of the reconcile to space sp.
func (r *reconcileRec) wrote(sp *space, key string, rev int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.maxes {
		if r.maxes[i].sp == sp {
			if rev > r.maxes[i].rev {
				r.maxes[i].rev, r.maxes[i].key = rev, key
			}
			return
		}
	}
	r.maxes = append(r.maxes, lastWrite{sp: sp, key: key, rev: rev})
}

// last returns the last write of the reconcile to each space it wrote.
func (r *reconcileRec) last() []lastWrite {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.maxes)
}

func recordOf(ctx context.Context) *reconcileRec {
	r, _ := ctx.Value(ctxKey{}).(*reconcileRec)
	return r
}

func reconcileKey(ctx context.Context) (string, bool) {
	if r := recordOf(ctx); r != nil {
		return r.key, true
	}
	return "", false
}
