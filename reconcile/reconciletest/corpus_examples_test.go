package reconciletest_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/reconciletest"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
)

// The examples' controllers, whose module the root module cannot import,
// reimplemented as they are there (their Reconcile methods, with the
// demos' bookkeeping left out).

// examples/unreconcilable: an app references a secret; without it the app
// is Blocked (Stalled), and a change of the secret wakes the app through
// a mapped source over a cache index.
type (
	secretAppSpec struct {
		Image     string `json:"image"`
		SecretRef string `json:"secretRef"`
	}
	secretAppStatus struct {
		SecretRevision int64 `json:"secretRevision,omitempty"`
	}
	secretSpec struct {
		Data map[string]string `json:"data"`
	}
	secretApp = store.Object[secretAppSpec, secretAppStatus]
	secret    = store.Object[secretSpec, struct{}]
)

const secretIndex = "secretRef"

type appReconciler struct {
	apps    *cache.Cache[secretAppSpec, secretAppStatus]
	secrets *cache.Cache[secretSpec, struct{}]
	st      *store.Store[secretAppSpec, secretAppStatus]
	// attempts is the demo's timeline, nil here (a send on it is
	// skipped): the field keeps Reconcile the example's.
	attempts chan<- attempt
}

// attempt is one call of the reconciler, as the example's timeline shows it.
type attempt struct {
	at  time.Time
	err error
}

func (r *appReconciler) Reconcile(ctx context.Context, name string) (res reconcile.Result, err error) {
	defer func() {
		select {
		case r.attempts <- attempt{at: time.Now(), err: err}:
		default:
		}
	}()
	app, ok := r.apps.Get(name)
	if !ok {
		return reconcile.Result{}, nil // gone: nothing to do
	}
	secret, ok := r.secrets.Get(app.Spec.SecretRef)
	if !ok {
		return reconcile.Result{}, reconcile.Blocked("SecretMissing",
			fmt.Errorf("secret %q not found", app.Spec.SecretRef))
	}
	// Configure the app (here: record which secret revision it uses) and
	// report Ready. Cached objects are shared: change a copy.
	next := *app
	next.Status.SecretRevision = secret.Meta.Revision
	if _, err := conditions.Set(&next.Conditions, store.Condition{
		Type: conditions.Ready, Status: store.ConditionTrue, Reason: "Configured",
		Message: fmt.Sprintf("using secret %q", secret.Meta.Name), ObservedGeneration: app.Meta.Generation,
	}, time.Now()); err != nil {
		return reconcile.Result{}, err
	}
	_, err = r.st.As("app-controller").UpdateStatus(ctx, &next)
	return reconcile.Result{}, err
}

func unreconcilableConfig() reconciletest.Config[secretAppSpec, secretAppStatus] {
	secrets := []string{"db-0", "db-1"}
	return reconciletest.Config[secretAppSpec, secretAppStatus]{
		Name: "app-controller", // the manager the example's Reconcile writes as
		Kind: "App",
		Object: func(i int, rng *rand.Rand) *secretApp {
			ref := secrets[rng.IntN(len(secrets))]
			if rng.IntN(8) == 0 {
				ref = "missing" // never created: Stalled
			}
			return &secretApp{Meta: store.Meta{Name: fmt.Sprintf("app%d", i)}, Spec: secretAppSpec{Image: "billing:1.4", SecretRef: ref}}
		},
		Fixtures: func(ctx context.Context, b kv.Backend) error {
			st, err := store.New[secretSpec, struct{}](b, "Secret")
			if err != nil {
				return err
			}
			for _, n := range secrets {
				if _, err := st.As("user").Create(ctx, &secret{Meta: store.Meta{Name: n}, Spec: secretSpec{Data: map[string]string{"password": "hunter2"}}}); err != nil {
					return err
				}
			}
			return nil
		},
		Setup: func(env *reconciletest.Env[secretAppSpec, secretAppStatus]) (reconcile.Reconciler[string], error) {
			secrets, err := reconciletest.NewStore[secretSpec, struct{}](env.Process, "Secret")
			if err != nil {
				return nil, err
			}
			secretCache := reconciletest.NewCache(env.Process, secrets)
			appCache := env.Cache
			if err := appCache.AddIndex(secretIndex, func(a *secretApp) []string { return []string{a.Spec.SecretRef} }); err != nil {
				return nil, err
			}
			// A secret's change is a hint for every app that references it.
			env.Watch(reconcile.FromCacheMapped(secretCache, func(s *secret) []string {
				var names []string
				for _, a := range appCache.ByIndex(secretIndex, s.Meta.Name) {
					names = append(names, a.Meta.Name)
				}
				return names
			}))
			return &appReconciler{apps: appCache, secrets: secretCache, st: env.Store}, nil
		},
		Converged: func(ctx context.Context, b kv.Backend, a *secretApp) error {
			if err := reconciletest.ReadyConverged(ctx, b, a); err != nil {
				return err
			}
			st, err := store.New[secretSpec, struct{}](b, "Secret")
			if err != nil {
				return err
			}
			s, err := st.Get(ctx, a.Spec.SecretRef)
			if err != nil {
				return err
			}
			if a.Status.SecretRevision != s.Meta.Revision {
				return fmt.Errorf("configured with secret revision %d, the secret is at %d", a.Status.SecretRevision, s.Meta.Revision)
			}
			return nil
		},
		Unreconcilable: func(a *secretApp) bool { return a.Spec.SecretRef == "missing" },
		// A user rotates secrets and moves apps between them.
		Compete: func(ctx context.Context, b kv.Backend, w *store.Writer[secretAppSpec, secretAppStatus], name string, rng *rand.Rand) error {
			if rng.IntN(2) == 0 {
				st, err := store.New[secretSpec, struct{}](b, "Secret")
				if err != nil {
					return err
				}
				s, err := st.Get(ctx, secrets[rng.IntN(len(secrets))])
				if err != nil {
					return err
				}
				s.Spec.Data = map[string]string{"password": fmt.Sprint("rotated-", rng.IntN(1000))}
				_, err = st.As("user").Update(ctx, s)
				return err
			}
			apps, err := store.New[secretAppSpec, secretAppStatus](b, "App")
			if err != nil {
				return err
			}
			a, err := apps.Get(ctx, name)
			if err != nil || a.Spec.SecretRef == "missing" {
				return err
			}
			a.Spec.SecretRef = secrets[rng.IntN(len(secrets))]
			_, err = w.Update(ctx, a)
			return err
		},
		Faults: reconciletest.AllFaults(),
	}
}

// examples/fieldowners: a defaulter sets .spec.replicas, by Apply (owning
// that field alone) or by Update of its cached copy; a user edits the
// image meanwhile.
type (
	ownedSpec struct {
		Image    string `json:"image,omitempty"`
		Replicas *int   `json:"replicas,omitempty"`
	}
	ownedApp = store.Object[ownedSpec, struct{}]
)

type defaulter struct {
	manager string
	want    int
	apply   bool
	st      *store.Store[ownedSpec, struct{}]
	cache   *cache.Cache[ownedSpec, struct{}]

	// The demo's bookkeeping: kept so that Reconcile is the example's.
	writes       atomic.Int64
	lastConflict atomic.Pointer[ownership.ConflictError]
}

func (d *defaulter) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	obj, ok := d.cache.Get(name)
	if !ok {
		return reconcile.Result{}, nil
	}
	if d.apply {
		// Only the fields present in the config are applied (and owned):
		// here .spec.replicas alone. Apply creates what does not exist, and
		// the cache may still show an App that was deleted since (a restart
		// against a lagging replica): WithRevision makes the apply fail with
		// ErrConflict unless the App is still the one read. The Loop retries
		// a conflict, and the next read finds it gone, or current.
		want := d.want
		res, err := d.st.As(d.manager).Apply(ctx, name, ownedSpec{Replicas: &want}, store.WithRevision(obj.Meta.Revision))
		if c, ok := errors.AsType[*ownership.ConflictError](err); ok {
			d.lastConflict.Store(c)
			// Retrying a field conflict gives the same answer: report it and
			// wait for the next change instead.
			return reconcile.Result{}, reconcile.Terminal(err)
		}
		if res.Changed {
			d.writes.Add(1)
			reconcile.RecordWrite(ctx, res.Revision)
		}
		return reconcile.Result{}, err
	}
	if obj.Spec.Replicas != nil && *obj.Spec.Replicas == d.want {
		return reconcile.Result{}, nil
	}
	next := *obj // cached objects are shared: change a copy
	want := d.want
	next.Spec.Replicas = &want
	if _, err := d.st.As(d.manager).Update(ctx, &next); err != nil {
		return reconcile.Result{}, err
	}
	d.writes.Add(1)
	return reconcile.Result{}, nil
}

func fieldOwnersConfig(apply bool) func() reconciletest.Config[ownedSpec, struct{}] {
	return func() reconciletest.Config[ownedSpec, struct{}] {
		return reconciletest.Config[ownedSpec, struct{}]{
			Kind: "App",
			Object: func(i int, rng *rand.Rand) *ownedApp {
				return &ownedApp{Meta: store.Meta{Name: fmt.Sprintf("app%d", i)}, Spec: ownedSpec{Image: fmt.Sprintf("web:%d", rng.IntN(3))}}
			},
			Setup: func(env *reconciletest.Env[ownedSpec, struct{}]) (reconcile.Reconciler[string], error) {
				return &defaulter{manager: env.Manager, want: 3, apply: apply, st: env.Store, cache: env.Cache}, nil
			},
			Converged: func(_ context.Context, _ kv.Backend, a *ownedApp) error {
				if a.Spec.Replicas == nil || *a.Spec.Replicas != 3 {
					return fmt.Errorf("replicas %v, want 3", a.Spec.Replicas)
				}
				return nil
			},
			Compete: func(ctx context.Context, b kv.Backend, w *store.Writer[ownedSpec, struct{}], name string, rng *rand.Rand) error {
				st, err := store.New[ownedSpec, struct{}](b, "App")
				if err != nil {
					return err
				}
				a, err := st.Get(ctx, name) // Apply would create a deleted app again
				if err != nil {
					return store.IgnoreNotFound(err)
				}
				_, err = w.Apply(ctx, name, ownedSpec{Image: fmt.Sprintf("web:%d", rng.IntN(3))}, store.WithForce(), store.WithRevision(a.Meta.Revision))
				return err
			},
			Faults: reconciletest.AllFaults(),
		}
	}
}

// unguardedDefaulter is the fieldowners example's defaulter as it was
// before it applied with store.WithRevision: it applies from its cache
// without a precondition. Apply creates what does not exist, so a cache
// that still shows a deleted app (a restart against a lagging replica)
// brings the app back.
type unguardedDefaulter struct{ *defaulter }

func (d unguardedDefaulter) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	if _, ok := d.cache.Get(name); !ok {
		return reconcile.Result{}, nil
	}
	want := d.want
	res, err := d.st.As(d.manager).Apply(ctx, name, ownedSpec{Replicas: &want})
	if c, ok := errors.AsType[*ownership.ConflictError](err); ok {
		return reconcile.Result{}, reconcile.Terminal(c)
	}
	if res.Changed {
		reconcile.RecordWrite(ctx, res.Revision)
	}
	return reconcile.Result{}, err
}

// The harness finds the unguarded defaulter's resurrection: the app the
// test deleted still exists at the bound. (The corpus runs the example's
// defaulter, which applies with WithRevision.)
func TestFieldOwnersApplyFromStaleCacheIsCaught(t *testing.T) {
	cfg := fieldOwnersConfig(true)()
	cfg.Setup = func(env *reconciletest.Env[ownedSpec, struct{}]) (reconcile.Reconciler[string], error) {
		return unguardedDefaulter{&defaulter{manager: env.Manager, want: 3, apply: true, st: env.Store, cache: env.Cache}}, nil
	}
	for seed := range uint64(100) {
		rep := reconciletest.Simulate(t, cfg, seed)
		if !rep.Failed() {
			continue
		}
		require.Equal(t, reconciletest.HarmNotConverged, rep.Harms[0], "%s", rep)
		require.Contains(t, rep.Violations[0], "was deleted by the test but still exists")
		require.Contains(t, strings.Join(rep.Trace, "\n"), "(as controller, Apply)")
		return
	}
	t.Fatal("the defaulter that applies from a stale cache was not caught in 100 schedules")
}

// TestExampleControllersAreTheExamples keeps the corpus's copies of
// examples/unreconcilable and examples/fieldowners honest (the root module
// cannot import the examples module): their Reconcile methods are the
// examples', byte for byte, demo bookkeeping included (it needs fields
// the copies keep), except the fieldowners example's type Spec, which is
// ownedSpec here.
func TestExampleControllersAreTheExamples(t *testing.T) {
	for _, c := range []struct {
		example, sig string
		rename       *strings.Replacer
	}{
		{"unreconcilable/main.go", "func (r *appReconciler) Reconcile(", strings.NewReplacer()},
		{"fieldowners/main.go", "func (d *defaulter) Reconcile(", strings.NewReplacer("Spec{", "ownedSpec{")},
	} {
		ex, err := os.ReadFile("../../examples/" + c.example)
		require.NoError(t, err)
		here, err := os.ReadFile("corpus_examples_test.go")
		require.NoError(t, err)
		assert.Equal(t, c.rename.Replace(methodOf(t, string(ex), c.sig)), methodOf(t, string(here), c.sig),
			"the corpus's copy of %s differs from examples/%s", c.sig, c.example)
	}
}

// methodOf returns the function of src that starts with sig, up to its
// closing brace at the start of a line.
func methodOf(t *testing.T, src, sig string) string {
	t.Helper()
	i := strings.Index(src, sig)
	require.GreaterOrEqual(t, i, 0, "%s is gone", sig)
	j := strings.Index(src[i:], "\n}\n")
	require.Greater(t, j, 0, "%s has no end", sig)
	return src[i : i+j+3]
}
