package reconcile

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// The kind of the rolling upgrade: v2 renamed v1's image and added
// replicas and a status message.
type (
	rollSpecV1 struct {
		Image string `json:"image"`
	}
	rollStatusV1 struct {
		Ready bool `json:"ready"`
	}
	rollSpecV2 struct {
		ContainerImage string `json:"containerImage"`
		Replicas       int    `json:"replicas,omitempty"`
	}
	rollStatusV2 struct {
		Ready   bool   `json:"ready"`
		Message string `json:"message,omitempty"`
	}
)

func rollVersions(t *testing.T, storage string) *store.Versions {
	t.Helper()
	vs, err := store.NewVersions(storage,
		store.VersionOf("v1", store.Conversion[rollSpecV1, rollStatusV1, rollSpecV2, rollStatusV2]{
			ToHub: func(s rollSpecV1, st rollStatusV1) (rollSpecV2, rollStatusV2, error) {
				return rollSpecV2{ContainerImage: s.Image}, rollStatusV2{Ready: st.Ready}, nil
			},
			FromHub: func(s rollSpecV2, st rollStatusV2) (rollSpecV1, rollStatusV1, error) {
				return rollSpecV1{Image: s.ContainerImage}, rollStatusV1{Ready: st.Ready}, nil
			},
			Renames: []store.Rename{{From: ".spec.image", To: ".spec.containerImage"}},
		}),
		store.VersionOf("v2", store.Conversion[rollSpecV2, rollStatusV2, rollSpecV2, rollStatusV2]{}))
	require.NoError(t, err)
	return vs
}

// runVersioned starts a Store serving one version, its cache and a Loop.
func runVersioned[S, T any](t *testing.T, b kv.Backend, name, served string, vs *store.Versions, m *MemMetrics,
	rec func(*store.Store[S, T], *cache.Cache[S, T]) Reconciler[string]) (*store.Store[S, T], func()) {
	t.Helper()
	st, err := store.New[S, T](b, "App", store.WithVersion(served, vs))
	require.NoError(t, err)
	c := cache.New[S, T](st)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.Run(ctx) })
	l, err := New(name, rec(st, c), FromStore(c, st), append(fixedBackoff(), WithFieldManager(name), WithMetrics(m))...)
	require.NoError(t, err)
	stop := start(t, l)
	return st, func() {
		require.NoError(t, stop())
		cancel()
		wg.Wait()
	}
}

// A rolling upgrade: the old program (serving v1, storing v1) and the new
// one (serving v2, storing v2) reconcile the same objects at once. Each
// writes its own fields; neither fights the other (no oscillation report,
// no Stalled condition), the writes stop, and no field of either version is
// lost, though the stored version flips with every write.
func TestRollingUpgradeTwoVersionsReconcileWithoutFighting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memstore.New()
		var oldWrites, newWrites atomic.Int64
		mOld, mNew := NewMemMetrics(), NewMemMetrics()
		// The old controller marks objects ready (status, v1).
		_, stopOld := runVersioned(t, b, "old-ctl", "v1", rollVersions(t, "v1"), mOld,
			func(st *store.Store[rollSpecV1, rollStatusV1], c *cache.Cache[rollSpecV1, rollStatusV1]) Reconciler[string] {
				return Func[string](func(ctx context.Context, key string) (Result, error) {
					o, ok := c.Get(key)
					if !ok || o.Status.Ready {
						return Result{}, nil
					}
					cp := *o
					cp.Status.Ready = true
					_, err := st.As("old-ctl").UpdateStatus(ctx, &cp)
					if err == nil {
						oldWrites.Add(1)
					}
					return Result{}, store.IgnoreNotFound(err)
				})
			})
		// The new controller defaults replicas (spec, apply) and writes a
		// message (status, v2 only).
		st2, stopNew := runVersioned(t, b, "new-ctl", "v2", rollVersions(t, "v2"), mNew,
			func(st *store.Store[rollSpecV2, rollStatusV2], c *cache.Cache[rollSpecV2, rollStatusV2]) Reconciler[string] {
				return Func[string](func(ctx context.Context, key string) (Result, error) {
					o, ok := c.Get(key)
					if !ok {
						return Result{}, nil
					}
					if o.Spec.Replicas == 0 {
						res, err := st.As("new-ctl").Apply(ctx, key, map[string]any{"replicas": 3})
						if err != nil {
							return Result{}, err
						}
						if res.Changed {
							newWrites.Add(1)
						}
						return Result{RequeueAfterWrite: true}, nil // its own write does not trigger it
					}
					if o.Status.Message != "serving "+o.Spec.ContainerImage {
						cp := *o
						cp.Status.Message = "serving " + o.Spec.ContainerImage
						_, err := st.As("new-ctl").UpdateStatus(ctx, &cp)
						if err == nil {
							newWrites.Add(1)
						}
						return Result{}, store.IgnoreNotFound(err)
					}
					return Result{}, nil
				})
			})
		defer stopOld()
		defer stopNew()
		user, err := store.New[rollSpecV1, rollStatusV1](b, "App", store.WithVersion("v1", rollVersions(t, "v1")))
		require.NoError(t, err)
		for _, name := range []string{"a", "b", "c"} {
			_, err := user.As("user").Create(context.Background(), &store.Object[rollSpecV1, rollStatusV1]{
				Meta: store.Meta{Name: name}, Spec: rollSpecV1{Image: "img:" + name}})
			require.NoError(t, err)
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()

		for _, name := range []string{"a", "b", "c"} {
			got, err := st2.Get(context.Background(), name)
			require.NoError(t, err)
			require.Equal(t, rollSpecV2{ContainerImage: "img:" + name, Replicas: 3}, got.Spec)
			require.Equal(t, rollStatusV2{Ready: true, Message: "serving img:" + name}, got.Status)
			_, stalled := conditions.Get(got.Conditions, conditions.Stalled)
			require.False(t, stalled, "%s: no Stalled condition", name)
		}
		for _, k := range []oscillation.Kind{oscillation.Fight, oscillation.NoProgress, oscillation.TooManyWrites} {
			require.Zero(t, mOld.Oscillations("old-ctl", k), "old: %s", k)
			require.Zero(t, mNew.Oscillations("new-ctl", k), "new: %s", k)
		}
		require.Equal(t, int64(3), oldWrites.Load(), "one ready write per object")
		require.Equal(t, int64(6), newWrites.Load(), "one apply and one message per object")
	})
}

// The Loop names a versioned kind's source with its version, as it names
// the kind: FromStore(App@v2).
func TestFromStoreNamesTheVersion(t *testing.T) {
	st, err := store.New[rollSpecV2, rollStatusV2](memstore.New(), "App", store.WithVersion("v2", rollVersions(t, "v2")))
	require.NoError(t, err)
	src := FromStore(cache.New[rollSpecV2, rollStatusV2](st), st)
	require.Equal(t, "FromStore(App@v2)", src.(interface{ String() string }).String())
}
