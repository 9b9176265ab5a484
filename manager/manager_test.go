package manager_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/manager"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
)

// events records what happened, in order.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(s string) {
	e.mu.Lock()
	e.log = append(e.log, s)
	e.mu.Unlock()
}

func (e *events) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.log)
}

// slowCache syncs after a delay and records its start and stop.
type slowCache struct {
	ev     *events
	name   string
	delay  time.Duration
	synced chan struct{}
}

func newSlowCache(ev *events, name string, delay time.Duration) *slowCache {
	return &slowCache{ev: ev, name: name, delay: delay, synced: make(chan struct{})}
}

func (c *slowCache) Run(ctx context.Context) error {
	c.ev.add(c.name + " started")
	select {
	case <-time.After(c.delay):
		c.ev.add(c.name + " synced")
		close(c.synced)
	case <-ctx.Done():
	}
	<-ctx.Done()
	c.ev.add(c.name + " stopped")
	return nil
}

func (c *slowCache) WaitForSync(ctx context.Context) error {
	select {
	case <-c.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *slowCache) HasSynced() bool {
	select {
	case <-c.synced:
		return true
	default:
		return false
	}
}

// recLoop is a Loop wrapper that records start and stop.
type recLoop struct {
	*reconcile.Loop[string]
	ev *events
}

func (l recLoop) Run(ctx context.Context) error {
	l.ev.add(l.Name() + " started")
	err := l.Loop.Run(ctx)
	l.ev.add(l.Name() + " stopped")
	return err
}

func TestManagerStartsAndStopsInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := &events{}
		m := manager.New()
		require.NoError(t, m.AddCache(newSlowCache(ev, "cacheA", time.Second)))
		require.NoError(t, m.AddCache(newSlowCache(ev, "cacheB", 3*time.Second)))
		for _, name := range []string{"loop1", "loop2"} {
			r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
				ev.add(name + " reconciled " + key)
				return reconcile.Result{}, nil
			})
			l, err := reconcile.New(name, r, keySet("k"), reconcile.WithElector(m.Elector()), reconcile.WithResync(time.Hour, 0))
			require.NoError(t, err)
			require.NoError(t, m.AddLoop(recLoop{l, ev}))
		}
		require.ErrorIs(t, m.AddLoop(nil), reconcile.ErrInvalidOption)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- m.Run(ctx) }()
		synctest.Wait()
		require.ErrorIs(t, m.Ready(), manager.ErrNotReady, "caches not synced")
		require.NoError(t, m.Live())
		time.Sleep(5 * time.Second)
		synctest.Wait()
		require.NoError(t, m.Ready())
		require.Error(t, m.AddLoop(recLoop{}), "no adds after Run")
		cancel()
		require.NoError(t, <-done)
		got := ev.list()
		// Caches first; loops only after both synced; loops stop before caches.
		idx := func(s string) int {
			i := slices.Index(got, s)
			require.GreaterOrEqual(t, i, 0, "%q missing from %v", s, got)
			return i
		}
		for _, l := range []string{"loop1", "loop2"} {
			require.Greater(t, idx(l+" started"), idx("cacheB synced"))
			require.Greater(t, idx(l+" reconciled k"), idx(l+" started"))
			require.Less(t, idx(l+" stopped"), idx("cacheA stopped"))
			require.Less(t, idx(l+" stopped"), idx("cacheB stopped"))
		}
		require.Error(t, m.Run(context.Background()), "a Manager runs once")
	})
}

func TestManagerSharesOneElector(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		el := &handElector{grants: make(chan struct{})}
		m := manager.New(manager.WithElector(el))
		var mu sync.Mutex
		fences := map[string]store.Fence{}
		for _, name := range []string{"loop1", "loop2"} {
			r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
				f, _ := store.FenceFrom(ctx)
				mu.Lock()
				fences[name] = f
				mu.Unlock()
				return reconcile.Result{}, nil
			})
			l, err := reconcile.New(name, r, keySet("k"), reconcile.WithElector(m.Elector()))
			require.NoError(t, err)
			require.NoError(t, m.AddLoop(l))
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- m.Run(ctx) }()
		time.Sleep(time.Minute)
		synctest.Wait()
		mu.Lock()
		require.Empty(t, fences, "no work before the Manager leads")
		mu.Unlock()
		el.grants <- struct{}{} // one campaign for both loops
		synctest.Wait()
		mu.Lock()
		require.Len(t, fences, 2)
		require.Equal(t, fences["loop1"], fences["loop2"], "both loops write under the Manager's fence")
		require.Equal(t, leaseKey, fences["loop1"].Key)
		mu.Unlock()
		cancel()
		require.NoError(t, <-done)
	})
}

func TestManagerReportsAFailedLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errBroken := errors.New("broken source")
		m := manager.New()
		bad, err := reconcile.New("bad", nop, reconcile.SourceFunc[string](func(context.Context, reconcile.Sink[string]) error { return errBroken }))
		require.NoError(t, err)
		good, err := reconcile.New("good", nop, nil)
		require.NoError(t, err)
		require.NoError(t, m.AddLoop(bad))
		require.NoError(t, m.AddLoop(good))
		err = m.Run(context.Background())
		require.ErrorIs(t, err, errBroken)
		require.ErrorContains(t, err, "loop bad")
		require.ErrorIs(t, m.Live(), manager.ErrNotLive)
		require.ErrorIs(t, m.Ready(), manager.ErrNotReady)
	})
}

// Misuse: a Loop added twice, or two Loops of one name, and a cache added
// twice are refused by the Add call, not found when Run fails with "already
// running". Two equal values of a non-pointer cache type are two caches.
func TestManagerRefusesAPartAddedTwice(t *testing.T) {
	m := manager.New()
	l, err := reconcile.New("deployer", nop, nil)
	require.NoError(t, err)
	require.NoError(t, m.AddLoop(l))
	err = m.AddLoop(l)
	require.ErrorIs(t, err, reconcile.ErrInvalidOption)
	require.ErrorContains(t, err, `"deployer" added twice`)
	other, err := reconcile.New("deployer", nop, nil)
	require.NoError(t, err)
	require.ErrorContains(t, m.AddLoop(other), `"deployer" added twice`)
	second, err := reconcile.New("pruner", nop, nil)
	require.NoError(t, err)
	require.NoError(t, m.AddLoop(second))

	c := &downCachePtr{}
	require.NoError(t, m.AddCache(c))
	err = m.AddCache(c)
	require.ErrorIs(t, err, reconcile.ErrInvalidOption)
	require.ErrorContains(t, err, "added twice")
	require.NoError(t, m.AddCache(&downCachePtr{}), "another cache of the same type")
	require.NoError(t, m.AddCache(downCache{}))
	require.NoError(t, m.AddCache(downCache{}), "equal values are not one part")
}

type downCachePtr struct {
	downCache
	_ int // not zero-sized: two zero-sized allocations may share an address
}

// downCache never syncs, and says why.
type downCache struct{}

func (downCache) Run(ctx context.Context) error         { <-ctx.Done(); return nil }
func (downCache) WaitForSync(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
func (downCache) HasSynced() bool                       { return false }
func (downCache) LastError() error                      { return errors.New("backend down: connection refused") }

// Ready names a cache that has not synced and its last list or watch error;
// a Run cancelled while it waits says which cache never synced, and why.
func TestManagerReadyNamesACacheThatHasNotSynced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		m := manager.New(manager.WithLogger(newLogger(&logs)))
		require.NoError(t, m.AddCache(downCache{}))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- m.Run(ctx) }()
		time.Sleep(65 * time.Second)
		synctest.Wait()
		err := m.Ready()
		require.ErrorIs(t, err, manager.ErrNotReady)
		require.ErrorContains(t, err, "cache 0 (manager_test.downCache) has not synced; last error: backend down")
		require.Equal(t, 2, strings.Count(logs.String(), `level=WARN msg="manager waiting for a cache to sync"`), "every 30s")
		cancel()
		err = <-done
		require.ErrorIs(t, err, reconcile.ErrNotSynced)
		require.ErrorContains(t, err, "backend down")
	})
}
