package reconciletest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/gc"
	"github.com/steady-go/steady/reconcile/reconciletest"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
)

// The README's whole controller (examples/readme/controller.go), whose
// module the root module cannot import: its types and its appController
// as they are there (TestReadmeControllerIsTheExamples checks the
// Reconcile method byte for byte), run as the README runs it, with the
// GC as a second Loop under the same term.

type AppSpec struct {
	Replicas int    `json:"replicas"`
	Image    string `json:"image"`
}
type AppStatus struct {
	Replicas int `json:"replicas"` // Replicas at the current image, as last observed
}
type ReplicaSpec struct {
	Image string `json:"image"`
}
type ReplicaStatus struct{}

const fieldManager = "app-controller" // the field manager the app controller writes as

type appController struct {
	apps     *cache.Cache[AppSpec, AppStatus]
	appSt    *store.Store[AppSpec, AppStatus]
	replicas *cache.Cache[ReplicaSpec, ReplicaStatus]
	repSt    *store.Store[ReplicaSpec, ReplicaStatus]
}

func (c *appController) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	app, ok := c.apps.Get(name)
	if !ok || app.Meta.DeletionRequested {
		return reconcile.Result{}, nil // gone: the GC loop deletes its Replicas
	}
	if app.Spec.Replicas < 0 || app.Spec.Replicas > 100 {
		// No retry can fix a bad spec: Stalled now (reason Terminal), and
		// no retry until the App changes.
		return reconcile.Result{}, reconcile.Terminal(fmt.Errorf("replicas %d: want 0 to 100", app.Spec.Replicas))
	}
	owned := map[string]*store.Object[ReplicaSpec, ReplicaStatus]{}
	for _, r := range c.replicas.ByIndex(cache.IndexOwnerUID, app.Meta.UID) {
		owned[r.Meta.Name] = r // a Replica left by an earlier App of this name has another owner UID
	}
	w := c.repSt.As(fieldManager)
	for i := range app.Spec.Replicas {
		n := fmt.Sprintf("%s-%d", name, i) // deterministic: a crash mid-loop never duplicates
		r, ok := owned[n]
		delete(owned, n)
		switch {
		case !ok:
			_, err := w.Create(ctx, &store.Object[ReplicaSpec, ReplicaStatus]{
				Meta: store.Meta{Name: n, Owners: []store.OwnerRef{
					{Kind: "App", Name: name, UID: app.Meta.UID, Controller: true}}},
				Spec: ReplicaSpec{Image: app.Spec.Image},
			})
			if err := store.IgnoreAlreadyExists(err); err != nil {
				return reconcile.Result{}, err // retried with capped backoff; Stalled after 5 failures
			}
		case r.Spec.Image != app.Spec.Image:
			fresh := *r // the cache's objects are read-only: change a copy
			fresh.Spec.Image = app.Spec.Image
			if _, err := w.Update(ctx, &fresh); err != nil {
				return reconcile.Result{}, err // a conflict too: the next pass reads again
			}
		}
	}
	for n, r := range owned { // beyond the spec's count
		if _, err := w.Delete(ctx, n, store.WithUID(r.Meta.UID)); store.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, err
		}
	}
	// Status from what this pass made true, and Ready at this generation;
	// WithObserved refuses it if the spec moved on meanwhile or the App was
	// deleted and recreated (the next pass reads the new one).
	ready := store.Condition{Type: conditions.Ready, Status: store.ConditionTrue, ObservedGeneration: app.Meta.Generation}
	_, err := c.appSt.As(fieldManager).ApplyStatus(ctx, name, AppStatus{Replicas: app.Spec.Replicas},
		[]store.Condition{ready}, store.WithObserved(app.Meta))
	return reconcile.Result{}, store.IgnoreNotFound(err)
}

type app = store.Object[AppSpec, AppStatus]

func readmeConfig() reconciletest.Config[AppSpec, AppStatus] {
	return reconciletest.Config[AppSpec, AppStatus]{
		Kind:    "App",
		Manager: fieldManager,
		Objects: 4,
		Object: func(i int, rng *rand.Rand) *app {
			a := &app{Meta: store.Meta{Name: fmt.Sprintf("app%d", i)}, Spec: AppSpec{Replicas: rng.IntN(4), Image: fmt.Sprintf("img:v%d", rng.IntN(3))}}
			if rng.IntN(8) == 0 {
				a.Spec.Replicas = -1 // no retry can fix it: Terminal
			}
			return a
		},
		Setup: func(env *reconciletest.Env[AppSpec, AppStatus]) (reconcile.Reconciler[string], error) {
			replicas, err := reconciletest.NewStore[ReplicaSpec, ReplicaStatus](env.Process, "Replica")
			if err != nil {
				return nil, err
			}
			replicaCache := reconciletest.NewCache(env.Process, replicas)
			env.Watch(reconcile.FromOwned(replicaCache, "App"))
			gcLoop, err := gc.New("replica-gc", replicaCache, replicas, []gc.Owner{gc.OwnerKind(env.Cache, env.Store)},
				reconcile.WithElector(env.Elector()), reconcile.WithLogger(quiet))
			if err != nil {
				return nil, err
			}
			env.Go(gcLoop.Run)
			return &appController{apps: env.Cache, appSt: env.Store, replicas: replicaCache, repSt: replicas}, nil
		},
		Converged: func(ctx context.Context, b kv.Backend, a *app) error {
			if err := reconciletest.ReadyConverged(ctx, b, a); err != nil {
				return err
			}
			st, err := store.New[ReplicaSpec, ReplicaStatus](b, "Replica")
			if err != nil {
				return err
			}
			l, err := st.List(ctx, store.ListOptions{})
			if err != nil {
				return err
			}
			n := 0
			for _, r := range l.Items {
				for _, o := range r.Meta.Owners {
					if o.Controller && o.UID == a.Meta.UID {
						n++
						if r.Spec.Image != a.Spec.Image {
							return fmt.Errorf("replica %s runs %q, want %q", r.Meta.Name, r.Spec.Image, a.Spec.Image)
						}
					}
				}
			}
			if n != a.Spec.Replicas || a.Status.Replicas != a.Spec.Replicas {
				return fmt.Errorf("%d replicas (status says %d), want %d", n, a.Status.Replicas, a.Spec.Replicas)
			}
			return nil
		},
		Unreconcilable: func(a *app) bool { return a.Spec.Replicas < 0 || a.Spec.Replicas > 100 },
		// A user scales and updates Apps; someone deletes a replica.
		Compete: func(ctx context.Context, b kv.Backend, w *store.Writer[AppSpec, AppStatus], name string, rng *rand.Rand) error {
			apps, err := store.New[AppSpec, AppStatus](b, "App")
			if err != nil {
				return err
			}
			a, err := apps.Get(ctx, name)
			if err != nil || a.Spec.Replicas < 0 {
				return err
			}
			if rng.IntN(2) == 0 {
				reps, err := store.New[ReplicaSpec, ReplicaStatus](b, "Replica")
				if err != nil {
					return err
				}
				_, err = reps.As("intruder").Delete(ctx, fmt.Sprintf("%s-0", name))
				return store.IgnoreNotFound(err)
			}
			a.Spec.Replicas = rng.IntN(4)
			a.Spec.Image = fmt.Sprintf("img:v%d", rng.IntN(3))
			_, err = w.Update(ctx, a)
			return err
		},
		Faults: reconciletest.AllFaults(),
	}
}

// The corpus runs the README's controller as it is: its Reconcile method
// here is examples/readme/controller.go's, byte for byte.
func TestReadmeControllerIsTheExamples(t *testing.T) {
	ex, err := os.ReadFile("../../examples/readme/controller.go")
	require.NoError(t, err)
	here, err := os.ReadFile("corpus_readme_test.go")
	require.NoError(t, err)
	method := func(src []byte) string {
		s := string(src)
		i := strings.Index(s, "func (c *appController) Reconcile(")
		require.GreaterOrEqual(t, i, 0)
		j := strings.Index(s[i:], "\n}\n")
		require.Greater(t, j, 0)
		return s[i : i+j+3]
	}
	require.Equal(t, method(ex), method(here))
}
