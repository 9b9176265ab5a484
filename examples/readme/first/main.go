// Command first is the README's "A controller", whole: an App wants N
// replicas; the controller makes the fleet run that many and reports how
// many run in the App's status.
package main

import (
	"context"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

type AppSpec struct {
	Replicas int `json:"replicas"`
}
type AppStatus struct {
	Running int `json:"running"`
}

// Fleet is what the controller acts on: here a count per App in memory;
// yours starts machines or processes.
type Fleet struct {
	mu      sync.Mutex
	running map[string]int
}

// Scale makes name run n replicas and returns how many run. Calling it
// twice with the same n changes nothing (idempotent).
func (f *Fleet) Scale(name string, n int) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running[name] = n
	return n, nil
}

func run(ctx context.Context, apps *store.Store[AppSpec, AppStatus], fleet *Fleet) error {
	appCache := cache.New(apps) // list + watch; reads are served from memory
	go appCache.Run(ctx)

	r := reconcile.Func[string](func(ctx context.Context, name string) (reconcile.Result, error) {
		app, ok := appCache.Get(name)
		if !ok {
			return reconcile.Result{}, nil // gone: garbage collection handles children
		}
		running, err := fleet.Scale(name, app.Spec.Replicas) // observe and act, idempotently
		if err != nil {
			return reconcile.Result{}, err // capped backoff; Stalled after 5 failures
		}
		// Only on the App this pass read, at the spec it read.
		_, err = apps.As("app-controller").ApplyStatus(ctx, name, AppStatus{Running: running}, nil, store.WithObserved(app.Meta))
		return reconcile.Result{}, store.IgnoreNotFound(err)
	})
	loop, err := reconcile.New("apps", r, reconcile.FromStore(appCache, apps), reconcile.WithWorkers(4))
	if err != nil {
		return err
	}
	return loop.Run(ctx) // hints from the cache, resync every 10m, drains on exit
}

func main() {
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	apps, err := store.New[AppSpec, AppStatus](memstore.New(), "App") // or etcdstore
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- run(ctx, apps, &Fleet{running: map[string]int{}}) }()

	// A user (or your API) writes the desired state; the controller acts.
	web := &store.Object[AppSpec, AppStatus]{Meta: store.Meta{Name: "web"}, Spec: AppSpec{Replicas: 3}}
	if _, err := apps.As("user").Create(ctx, web); err != nil {
		log.Fatal(err)
	}
	for { // until the status says the fleet runs what the spec wants
		app, err := apps.Get(ctx, "web")
		if err != nil {
			log.Fatal(err) // 10s passed without it
		}
		if app.Status.Running == app.Spec.Replicas {
			fmt.Printf("web: %d of %d replicas running\n", app.Status.Running, app.Spec.Replicas)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		log.Fatal(err)
	}
}
