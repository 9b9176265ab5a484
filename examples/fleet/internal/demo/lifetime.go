package demo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// errCrash is the cause of a controller lifetime that the demo ended after
// the k-th write, in the middle of whatever it was doing.
var errCrash = errors.New("controller crashed")

// supervisor runs the controller, and restarts it after a crash with
// nothing carried over: a new cache, a new Loop, a new queue. Only the
// store and the fleet (the world) survive, plus the demo's counters.
type supervisor struct {
	groups  *store.Store[GroupSpec, GroupStatus]
	fleet   *Fleet
	count   *counters
	metrics *metrics
	note    func(format string, args ...any)
	elector Elector // nil: the controller always works
	objects int     // how many groups there are (sizes resync and retries)
	debug   Debugger

	crashAt   int64 // crash after this many writes; 0 never
	lifetimes atomic.Int64

	mu      sync.Mutex
	crash   context.CancelCauseFunc              // the current lifetime's
	current *cache.Cache[GroupSpec, GroupStatus] // the current lifetime's
	writes  int64
	crashed string // the write the crash followed
}

// afterWrite counts the controller's writes and crashes it after the
// crashAt-th, while the reconcile that made it is still running.
func (s *supervisor) afterWrite(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	if s.writes == s.crashAt && s.crash != nil {
		s.crashed = what
		s.crash(errCrash)
	}
}

// cache returns the current lifetime's cache of the groups, which may not
// be synced yet, or nil before the first lifetime. The judge reads it.
func (s *supervisor) cache() *cache.Cache[GroupSpec, GroupStatus] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

// Run runs lifetimes until ctx ends.
func (s *supervisor) Run(ctx context.Context) error {
	for {
		lctx, crash := context.WithCancelCause(ctx)
		s.mu.Lock()
		s.crash = crash
		s.mu.Unlock()
		n := s.lifetimes.Add(1)
		err := s.lifetime(lctx)
		crash(nil)
		if ctx.Err() != nil {
			return err
		}
		if !errors.Is(context.Cause(lctx), errCrash) {
			return fmt.Errorf("controller lifetime %d ended: %w", n, err)
		}
		s.mu.Lock()
		what := s.crashed
		s.mu.Unlock()
		s.note("controller crashed mid-reconcile, right after write #%d (the %s); restarting with an empty cache and queue", s.crashAt, what)
	}
}

// lifetime is one run of the controller: a fresh cache over the store,
// fleet events as hints, and a Loop.
func (s *supervisor) lifetime(ctx context.Context) error {
	groupCache := cache.New(s.groups)
	s.mu.Lock()
	s.current = groupCache
	s.mu.Unlock()
	events := s.fleet.Subscribe()
	defer s.fleet.Unsubscribe(events)
	ctl := &controller{groups: s.groups, cache: groupCache, fleet: s.fleet, count: s.count}
	opts := []reconcile.Option{
		reconcile.WithWorkers(4),
		// Resync often, for the demo: it is what repairs dropped events.
		// A resync reconciles every group, so its period grows with their
		// number (100µs a group: 10s at 100,000) to keep it a small share
		// of the work.
		reconcile.WithResync(max(2*time.Second, time.Duration(s.objects)*100*time.Microsecond), 0.1),
		reconcile.WithBackoff(backoff.Policy{Base: 20 * time.Millisecond, Factor: 2, Cap: time.Second, Jitter: 0.2}),
		// The overall retry bucket protects a shared backend from a storm
		// of retries; the simulated fleet needs less protection than the
		// default 10/s with a 30s ceiling, which at high fault rates would
		// pace the last retries long after the faults stopped. The faults
		// strike a share of the groups, so the budget grows with them: a
		// fixed 100/s made 100,000 groups wait minutes for their retries.
		reconcile.WithRetryLimit(backoff.BucketConfig{Rate: rate.Limit(max(100, float64(s.objects)/5)), Burst: max(200, s.objects/2), Ceiling: time.Second}),
		reconcile.WithMetrics(s.debug.Metrics(s.metrics)),
		reconcile.WithDrainTimeout(5 * time.Second),
	}
	if s.elector != nil {
		// Workers run only while this replica leads; every write of a
		// term carries its fence, so a deposed leader's writes fail.
		opts = append(opts, reconcile.WithElector(s.elector))
	}
	// The groups come from the store, the fleet's events are hints, and
	// at every resync and new term the groups only the fleet still knows
	// are keys too (orphans).
	src := reconcile.Sources(reconcile.FromStore(groupCache, s.groups), reconcile.FromChannel(events), reconcile.Keys(ctl.orphans))
	loop, err := reconcile.New(ControllerName, ctl, src, opts...)
	if err != nil {
		return err
	}
	s.debug.Track(loop, groupCache)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return groupCache.Run(gctx) })
	g.Go(func() error { return loop.Run(gctx) })
	return g.Wait()
}
