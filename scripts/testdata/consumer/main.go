// Command consumer is a dependent's program, built by scripts/gogetcheck.sh
// in a module outside the repository that go gets steady's modules from a
// proxy, with no replace line. It uses every published module: the root
// (store, cache, reconcile), store/boltstore as the backend, traced by
// tracing/otelsteady, the Loop reporting to metrics/prometheus, and
// store/etcdstore's and store/pgstore's Backends as store.Backends (they
// need a server to run).
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace/noop"

	steadyprom "github.com/steady-go/steady/metrics/prometheus"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/boltstore"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/etcdstore"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/pgstore"
	"github.com/steady-go/steady/tracing/otelsteady"
)

type AppSpec struct {
	Replicas int `json:"replicas"`
}
type AppStatus struct {
	Running int `json:"running"`
}

var (
	_ kv.Backend = (*etcdstore.Backend)(nil)
	_ kv.Backend = (*pgstore.Backend)(nil)
)

func main() {
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	dir, err := os.MkdirTemp("", "consumer")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bolt, err := boltstore.Open(filepath.Join(dir, "apps.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer bolt.Close()
	tp := noop.NewTracerProvider()
	apps, err := store.New[AppSpec, AppStatus](otelsteady.Backend(bolt, tp), "App")
	if err != nil {
		log.Fatal(err)
	}
	reg := prom.NewRegistry()
	metrics, err := steadyprom.New(reg)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := apps.As("user").Create(ctx, &store.Object[AppSpec, AppStatus]{Meta: store.Meta{Name: "web"}, Spec: AppSpec{Replicas: 2}}); err != nil {
		log.Fatal(err)
	}
	c := cache.New(apps)
	r := reconcile.Func[string](func(ctx context.Context, name string) (reconcile.Result, error) {
		app, ok := c.Get(name)
		if !ok {
			return reconcile.Result{}, nil
		}
		_, err := apps.As("app-controller").ApplyStatus(ctx, name, AppStatus{Running: app.Spec.Replicas}, nil)
		return reconcile.Result{}, err
	})
	loop, err := reconcile.New("apps", otelsteady.Reconciler(r, otelsteady.Config[string]{Loop: "apps", TracerProvider: tp}),
		reconcile.FromStore(c, apps), reconcile.WithMetrics(metrics))
	if err != nil {
		log.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 2)
	go func() { done <- c.Run(runCtx) }()
	go func() { done <- loop.Run(runCtx) }()
	for {
		app, err := apps.Get(ctx, "web")
		if err != nil {
			log.Fatal(err)
		}
		if app.Status.Running == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	<-done
	families, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	var names []string
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "controller_runtime_reconcile_total") {
			names = append(names, f.GetName())
		}
	}
	fmt.Printf("consumer: web converged on boltstore, traced by otelsteady, counted in %v; etcdstore's and pgstore's Backends are store.Backends\n", names)
}
