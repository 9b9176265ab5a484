package reconciletest_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/reconciletest"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
)

// A user's kind: a Greeting whose status must echo its spec.
type greetingSpec struct {
	Text string `json:"text"`
}

type greetingStatus struct {
	Echo string `json:"echo"`
}

type greeting = store.Object[greetingSpec, greetingStatus]

// echo is the user's reconciler: it reads from the cache, writes the
// status only when it differs, and returns every error.
type echo struct {
	cache *cache.Cache[greetingSpec, greetingStatus]
	w     *store.Writer[greetingSpec, greetingStatus]
}

func (e echo) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	g, ok := e.cache.Get(name)
	if !ok || g.Status.Echo == g.Spec.Text {
		return reconcile.Result{}, nil
	}
	cp := *g // cached objects are read-only
	cp.Status.Echo = g.Spec.Text
	rev, err := e.w.UpdateStatus(ctx, &cp)
	reconcile.RecordWrite(ctx, rev)
	return reconcile.Result{}, err
}

// echoConfig is all a user writes to put echo through the harness.
func echoConfig() reconciletest.Config[greetingSpec, greetingStatus] {
	return reconciletest.Config[greetingSpec, greetingStatus]{
		Kind:    "Greeting",
		Objects: 8,
		Object: func(i int, rng *rand.Rand) *greeting {
			return &greeting{Meta: store.Meta{Name: fmt.Sprintf("g%d", i)},
				Spec: greetingSpec{Text: fmt.Sprint("hello ", rng.IntN(100))}}
		},
		Setup: func(env *reconciletest.Env[greetingSpec, greetingStatus]) (reconcile.Reconciler[string], error) {
			return echo{cache: env.Cache, w: env.Store.As(env.Manager)}, nil
		},
		Converged: func(_ context.Context, _ kv.Backend, g *greeting) error {
			if g.Status.Echo != g.Spec.Text {
				return fmt.Errorf("status echoes %q, spec says %q", g.Status.Echo, g.Spec.Text)
			}
			return nil
		},
		// Another manager rewrites greetings now and then.
		Compete: func(ctx context.Context, b kv.Backend, w *store.Writer[greetingSpec, greetingStatus], name string, rng *rand.Rand) error {
			st, err := store.New[greetingSpec, greetingStatus](b, "Greeting")
			if err != nil {
				return err
			}
			g, err := st.Get(ctx, name)
			if err != nil {
				return err
			}
			g.Spec.Text = fmt.Sprint("changed ", rng.IntN(100))
			_, err = w.Update(ctx, g)
			return err
		},
		Faults: reconciletest.AllFaults(),
	}
}

// Users put their own reconciler through the harness from a test:
//
//	func TestEcho(t *testing.T) {
//		reconciletest.Run(t, echoConfig())
//	}
//
// Run needs a *testing.T (each schedule runs in a testing/synctest bubble),
// which an Example does not have; so this example checks the Config, and
// the package's TestEchoExample runs exactly this Config through Run.
func Example() {
	cfg := echoConfig()
	fmt.Println(reconciletest.Validate(cfg))
	// Output: <nil>
}
