package manager_test

// Black-box tests of the documented contract, written from the package
// documentation alone, with the misuse a controller-runtime user brings in
// mind.

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/manager"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
)

// runner is a Runner that runs until its ctx ends, or returns err at once
// when it is set.
type runner struct {
	name    string
	err     error
	started chan struct{}
}

func newRunner(name string) *runner { return &runner{name: name, started: make(chan struct{})} }

func (r *runner) Name() string { return r.name }

func (r *runner) Run(ctx context.Context) error {
	close(r.started)
	if r.err != nil {
		return r.err
	}
	<-ctx.Done()
	return nil
}

// syncedCache is synced from the start and runs until its ctx ends, or
// fails at once with err when it is set.
type syncedCache struct {
	err error
}

func (c *syncedCache) Run(ctx context.Context) error {
	if c.err != nil {
		return c.err
	}
	<-ctx.Done()
	return nil
}

func (c *syncedCache) WaitForSync(ctx context.Context) error {
	if c.err != nil {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}
func (c *syncedCache) HasSynced() bool { return c.err == nil }

// "Run runs the Manager until ctx ends": with a ctx already cancelled it
// returns at once, having started no Loop when a cache has not synced (an
// error wrapping reconcile.ErrNotSynced), and leaves nothing running.
func TestBlackbox49RunWithACancelledContextReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dead, cancel := context.WithCancel(context.Background())
		cancel()

		m := manager.New()
		require.NoError(t, m.AddLoop(newRunner("a")))
		require.NoError(t, m.Run(dead), "no cache to wait for: nothing failed")
		require.ErrorIs(t, m.Ready(), manager.ErrNotReady, "a Manager whose Run returned runs no Loop")
		require.NoError(t, m.Live())

		m = manager.New()
		l := newRunner("b")
		require.NoError(t, m.AddLoop(l))
		require.NoError(t, m.AddCache(downCache{}))
		require.ErrorIs(t, m.Run(dead), reconcile.ErrNotSynced)
		select {
		case <-l.started:
			t.Fatal("a Loop started before its caches synced")
		default:
		}
	})
}

// A cache whose Run fails before it synced fails the Manager: Run returns
// its error (not a sync timeout), no Loop starts, and Live and Ready say so.
func TestBlackbox49ACacheThatFailsBeforeSyncFailsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errDown := errors.New("cache down")
		m := manager.New()
		l := newRunner("a")
		require.NoError(t, m.AddLoop(l))
		require.NoError(t, m.AddCache(&syncedCache{}))
		require.NoError(t, m.AddCache(&syncedCache{err: errDown}))
		err := m.Run(context.Background())
		require.ErrorIs(t, err, errDown)
		require.NotErrorIs(t, err, reconcile.ErrNotSynced)
		require.ErrorIs(t, m.Live(), manager.ErrNotLive)
		require.ErrorIs(t, m.Live(), errDown)
		require.ErrorIs(t, m.Ready(), manager.ErrNotReady)
		select {
		case <-l.started:
			t.Fatal("a Loop started although a cache never synced")
		default:
		}
	})
}

// Ready is an error before Run (nothing runs yet) and once Run returned;
// nil while every Loop runs. Live is nil unless a part failed: a clean stop
// is no failure. Adding after Run, and a second Run, are refused.
func TestBlackbox49ReadyAndLiveAroundRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := manager.New(nil, manager.WithLogger(nil)) // nil options are skipped
		require.ErrorIs(t, m.Ready(), manager.ErrNotReady)
		require.NoError(t, m.Live())
		require.NoError(t, m.AddCache(&syncedCache{}))
		require.NoError(t, m.AddLoop(newRunner("a")))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- m.Run(ctx) }()
		synctest.Wait()
		require.NoError(t, m.Ready())
		require.NoError(t, m.Live())
		require.Error(t, m.AddLoop(newRunner("late")), "no add after Run")
		require.Error(t, m.AddCache(&syncedCache{}), "no add after Run")
		require.Error(t, m.Run(ctx), "a Manager runs once")
		cancel()
		require.NoError(t, <-done)
		require.ErrorIs(t, m.Ready(), manager.ErrNotReady, "stopped")
		require.NoError(t, m.Live(), "a clean stop is no failure")
	})
}

// Without a Manager elector, a Loop's Campaign through Manager.Elector
// returns at once while the Manager runs (always leading), with a term
// that ends with the Loop's ctx; a Campaign with a ctx that has ended
// returns that ctx's error, as a lease.Elector does, rather than a term.
func TestBlackbox49ElectorWithoutAnElectorLeadsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := manager.New()
		require.NoError(t, m.AddLoop(newRunner("a")))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- m.Run(ctx) }()
		synctest.Wait()

		loopCtx, stopLoop := context.WithCancel(context.Background())
		term, _, err := m.Elector().Campaign(loopCtx)
		require.NoError(t, err)
		require.NoError(t, term.Err())
		stopLoop()
		require.Error(t, term.Err(), "the term ends with the Loop's ctx")

		term, _, err = m.Elector().Campaign(loopCtx)
		require.ErrorIs(t, err, context.Canceled, "a Campaign with an ended ctx")
		require.Nil(t, term)
		cancel()
		require.NoError(t, <-done)
	})
}

// With an elector, Manager.Elector's Campaign returns only while the
// Manager leads: before Run it blocks until the Loop's ctx ends, and then
// returns that ctx's error.
func TestBlackbox49ElectorBeforeRunWaitsForLeadership(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		el := &handElector{grants: make(chan struct{})}
		m := manager.New(manager.WithElector(el))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _, err := m.Elector().Campaign(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		_, _, err = m.Elector().Campaign(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded, "again, with the ctx ended")
	})
}

// Ready reports whether every Loop is running: a Loop whose Run returned
// nil while the Manager runs is no failure (Live is nil and the Manager
// keeps running the others) but runs no more, and Ready names it.
func TestBlackbox49ReadyNamesALoopThatReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := manager.New()
		require.NoError(t, m.AddLoop(returnsAtOnce{}))
		other := newRunner("other")
		require.NoError(t, m.AddLoop(other))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- m.Run(ctx) }()
		synctest.Wait()
		err := m.Ready()
		require.ErrorIs(t, err, manager.ErrNotReady)
		require.ErrorContains(t, err, `"quitter"`)
		require.NoError(t, m.Live())
		select {
		case err := <-done:
			t.Fatalf("Run returned %v while ctx lives", err)
		default:
		}
		cancel()
		require.NoError(t, <-done)
	})
}

// returnsAtOnce is a Runner whose Run returns nil at once.
type returnsAtOnce struct{}

func (returnsAtOnce) Name() string              { return "quitter" }
func (returnsAtOnce) Run(context.Context) error { return nil }

// orderedElector leads at once. Like lease.StoreElector, it releases a
// term in its own goroutine after the term's ctx ended, which takes a
// second, and records when that is done; its Wait waits for it.
type orderedElector struct {
	ev    *events
	terms *sync.WaitGroup
}

func (e orderedElector) Campaign(ctx context.Context) (context.Context, store.Fence, error) {
	e.terms.Go(func() {
		<-ctx.Done()
		time.Sleep(time.Second) // the release's write
		e.ev.add("campaign stopped")
	})
	return ctx, store.Fence{}, nil
}

func (e orderedElector) Wait() { e.terms.Wait() }

// stoppingRunner records when its Run returns, after its ctx ended.
type stoppingRunner struct {
	name string
	ev   *events
}

func (r stoppingRunner) Name() string { return r.name }
func (r stoppingRunner) Run(ctx context.Context) error {
	<-ctx.Done()
	time.Sleep(time.Second) // draining
	r.ev.add(r.name + " stopped")
	return nil
}

// "It stops in the reverse order when its ctx ends: the Loops first (each
// drains its reconciles), then the campaign (releasing leadership: an
// elector with a Wait method [...] is waited for [...] until its release is
// done), then the caches."
func TestBlackbox49StopsLoopsThenCampaignThenCaches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := &events{}
		m := manager.New(manager.WithElector(orderedElector{ev, new(sync.WaitGroup)}))
		require.NoError(t, m.AddCache(newSlowCache(ev, "cache", time.Second)))
		require.NoError(t, m.AddLoop(stoppingRunner{"loop1", ev}))
		require.NoError(t, m.AddLoop(stoppingRunner{"loop2", ev}))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- m.Run(ctx) }()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		require.NoError(t, m.Ready())
		cancel()
		require.NoError(t, <-done)
		got := ev.list()
		idx := func(s string) int {
			i := slices.Index(got, s)
			require.GreaterOrEqual(t, i, 0, "%q missing from %v", s, got)
			return i
		}
		for _, l := range []string{"loop1", "loop2"} {
			require.Less(t, idx(l+" stopped"), idx("campaign stopped"), "%v", got)
		}
		require.Less(t, idx("campaign stopped"), idx("cache stopped"), "%v", got)
	})
}

// failingLater syncs at once and its Run fails after a while.
type failingLater struct {
	err   error
	after time.Duration
}

func (c failingLater) Run(ctx context.Context) error {
	select {
	case <-time.After(c.after):
		return c.err
	case <-ctx.Done():
		return nil
	}
}
func (failingLater) WaitForSync(context.Context) error { return nil }
func (failingLater) HasSynced() bool                   { return true }

// A cache that fails while the Loops run fails the Manager: Run stops the
// Loops and returns the cache's error, and Live and Ready report it.
func TestBlackbox49ACacheThatFailsLaterStopsTheLoops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errGone := errors.New("watch gone for good")
		ev := &events{}
		m := manager.New()
		require.NoError(t, m.AddCache(failingLater{err: errGone, after: time.Minute}))
		require.NoError(t, m.AddLoop(stoppingRunner{"loop", ev}))
		done := make(chan error)
		go func() { done <- m.Run(context.Background()) }()
		time.Sleep(time.Second)
		synctest.Wait()
		require.NoError(t, m.Ready())
		err := <-done
		require.ErrorIs(t, err, errGone)
		require.ErrorContains(t, err, "cache 0")
		require.Equal(t, []string{"loop stopped"}, ev.list())
		require.ErrorIs(t, m.Live(), errGone)
		require.ErrorIs(t, m.Ready(), manager.ErrNotReady)
	})
}
