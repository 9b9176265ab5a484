package reconcile

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

type appSpec struct {
	Replicas int    `json:"replicas"`
	Image    string `json:"image,omitempty"`
}

type appStatus struct {
	Phase    string `json:"phase,omitempty"`
	Replicas int    `json:"replicas,omitempty"`
}

type app = store.Object[appSpec, appStatus]

// env is a memstore with one kind, its cache running.
type env struct {
	b     *memstore.Store
	st    *store.Store[appSpec, appStatus]
	cache *cache.Cache[appSpec, appStatus]
	stop  func()
}

func newEnv(t *testing.T, kind string, b *memstore.Store, opts ...cache.Option) *env {
	t.Helper()
	if b == nil {
		b = memstore.New()
	}
	st, err := store.New[appSpec, appStatus](b, kind)
	require.NoError(t, err)
	c := cache.New[appSpec, appStatus](st, opts...)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.Run(ctx) })
	return &env{b: b, st: st, cache: c, stop: func() { cancel(); wg.Wait() }}
}

func (e *env) create(t *testing.T, manager string, obj *app) int64 {
	t.Helper()
	rev, err := e.st.As(manager).Create(context.Background(), obj)
	require.NoError(t, err)
	return rev
}

func (e *env) get(t *testing.T, name string) *app {
	t.Helper()
	obj, err := e.st.Get(context.Background(), name)
	require.NoError(t, err)
	return obj
}

// copyOf returns a copy of a cached object that may be changed.
func copyOf(o *app) *app {
	c := *o
	c.Conditions = append([]store.Condition(nil), o.Conditions...)
	c.Meta.Labels = cloneMap(o.Meta.Labels)
	return &c
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
