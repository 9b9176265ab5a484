package gc_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/gc"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

type setSpec struct {
	Replicas int `json:"replicas"`
}

type childSpec struct {
	Index int `json:"index"`
}

type (
	set   = store.Object[setSpec, struct{}]
	child = store.Object[childSpec, struct{}]
)

// env is one backend holding owners (kind Set) and dependents (kind Child),
// with both caches running. Create it inside a synctest bubble.
type env struct {
	b      *memstore.Store
	gate   *crashGate // between the dependents' store and b
	sets   *store.Store[setSpec, struct{}]
	kids   *store.Store[childSpec, struct{}]
	setC   *cache.Cache[setSpec, struct{}]
	kidC   *cache.Cache[childSpec, struct{}]
	start  sync.Once
	ctx    context.Context // the caches'
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// lag says which caches are frozen after their first listing.
type lag struct{ owners, dependents bool }

// newEnv builds the stores and the caches, frozen as lag says. The caches
// start with the first GC, so a frozen cache holds what was created before.
func newEnv(t *testing.T, lag lag) *env {
	t.Helper()
	e := &env{b: memstore.New()}
	e.gate = &crashGate{Backend: e.b}
	var err error
	e.sets, err = store.New[setSpec, struct{}](e.b, "Set")
	require.NoError(t, err)
	e.kids, err = store.New[childSpec, struct{}](e.gate, "Child")
	require.NoError(t, err)
	var setSrc cache.ListWatcher[setSpec, struct{}] = e.sets
	if lag.owners {
		setSrc = frozen[setSpec, struct{}]{e.sets}
	}
	var kidSrc cache.ListWatcher[childSpec, struct{}] = e.kids
	if lag.dependents {
		kidSrc = frozen[childSpec, struct{}]{e.kids}
	}
	e.setC = cache.New(setSrc)
	e.kidC = cache.New(kidSrc)
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	e.ctx = ctx
	t.Cleanup(func() { cancel(); e.wg.Wait() })
	return e
}

func (e *env) startCaches() {
	e.start.Do(func() {
		e.wg.Go(func() { _ = e.setC.Run(e.ctx) })
		e.wg.Go(func() { _ = e.kidC.Run(e.ctx) })
	})
}

// startGC runs a GC loop until the returned stop is called; stop returns
// Run's error.
func (e *env) startGC(t *testing.T, opts ...reconcile.Option) (stop func() error) {
	t.Helper()
	e.startCaches()
	loop, err := gc.New("gc", e.kidC, e.kids, []gc.Owner{gc.OwnerKind(e.setC, e.sets)}, opts...)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- loop.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func (e *env) createSet(t *testing.T, name string) *set {
	t.Helper()
	s := &set{Meta: store.Meta{Name: name}, Spec: setSpec{Replicas: 1}}
	_, err := e.sets.As("user").Create(context.Background(), s)
	require.NoError(t, err)
	return s
}

func (e *env) deleteSet(t *testing.T, name string) {
	t.Helper()
	_, err := e.sets.As("user").Delete(context.Background(), name)
	require.NoError(t, err)
}

// createChild creates a dependent whose controller owner is owner (nil: no
// owner), with the given finalizers.
func (e *env) createChild(t *testing.T, name string, owner *set, finalizers ...string) *child {
	t.Helper()
	c := &child{Meta: store.Meta{Name: name, Finalizers: finalizers}}
	if owner != nil {
		c.Meta.Owners = []store.OwnerRef{{Kind: "Set", Name: owner.Meta.Name, UID: owner.Meta.UID, Controller: true}}
	}
	_, err := e.kids.As("ctrl").Create(context.Background(), c)
	require.NoError(t, err)
	return c
}

// child reads a dependent from the store; ok is false when it is gone.
func (e *env) child(t *testing.T, name string) (*child, bool) {
	t.Helper()
	c, err := e.kids.Get(context.Background(), name)
	if err != nil {
		require.ErrorIs(t, err, store.ErrNotFound)
		return nil, false
	}
	return c, true
}

func (e *env) exists(t *testing.T, name string) bool {
	t.Helper()
	_, ok := e.child(t, name)
	return ok
}

// frozen wraps a ListWatcher so that its cache lists once and then sees no
// change at all: a cache that lags behind for ever.
type frozen[S, T any] struct{ cache.ListWatcher[S, T] }

func (f frozen[S, T]) Watch(ctx context.Context, _ int64) (<-chan store.Event[S, T], error) {
	ch := make(chan store.Event[S, T])
	go func() { <-ctx.Done(); close(ch) }()
	return ch, nil
}

// crashGate passes every call to its Backend until armed with crashAfter(k):
// then the k+1-th delete hangs until its ctx ends, as if the process died
// in the middle of it, and crashed is closed.
type crashGate struct {
	kv.Backend
	mu      sync.Mutex
	left    int // deletes still allowed; -1 when not armed
	crashed chan struct{}
}

func (g *crashGate) crashAfter(k int) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.left, g.crashed = k, make(chan struct{})
	return g.crashed
}

func (g *crashGate) disarm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.crashed = nil
}

func (g *crashGate) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	if w.Kind == kv.WriteDelete {
		g.mu.Lock()
		hang := false
		if g.crashed != nil {
			if g.left == 0 {
				hang = true
				select {
				case <-g.crashed:
				default:
					close(g.crashed)
				}
			} else {
				g.left--
			}
		}
		g.mu.Unlock()
		if hang {
			<-ctx.Done()
			return 0, context.Cause(ctx)
		}
	}
	return g.Backend.Txn(ctx, conds, w)
}
