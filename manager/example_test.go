package manager_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/steady-go/steady/manager"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/shard"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// A Manager runs two Loops over one shared cache: it syncs the cache first,
// then starts the Loops, and stops them before the cache.
func Example() {
	st, _ := store.New[struct{}, struct{}](memstore.New(), "App")
	_, _ = st.As("user").Create(context.Background(), &store.Object[struct{}, struct{}]{Meta: store.Meta{Name: "web"}})
	cache := cache.New[struct{}, struct{}](st)

	m := manager.New()
	_ = m.AddCache(cache)
	seen := make(chan string, 16)
	for _, name := range []string{"deployer", "auditor"} {
		r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
			seen <- name + " reconciled " + key
			return reconcile.Result{}, nil
		})
		loop, err := reconcile.New(name, r, reconcile.FromStore(cache, st), reconcile.WithElector(m.Elector()))
		if err != nil {
			fmt.Println(err)
			return
		}
		_ = m.AddLoop(loop)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()
	got := []string{<-seen, <-seen}
	slices.Sort(got) // the Loops run concurrently
	fmt.Println(got[0])
	fmt.Println(got[1])
	cancel()
	fmt.Println("stopped:", <-done)
	// Health checks: a stopped Manager is not ready, and nothing failed.
	fmt.Println("not ready:", errors.Is(m.Ready(), manager.ErrNotReady), "live:", m.Live())
	// Output:
	// auditor reconciled web
	// deployer reconciled web
	// stopped: <nil>
	// not ready: true live: <nil>
}

// Two replicas of one controller, each a Manager with WithSharding (its
// own identity, the same backend and shard options), split the keys of
// every Loop they run. In production each replica is its own process, with
// its pod name as the identity and etcdstore as the backend.
func ExampleWithSharding() {
	backend := memstore.New() // shared by every replica: etcdstore.New(cli)
	keys := reconcile.Keys(func() iter.Seq[string] { return slices.Values([]string{"a", "b", "c", "d", "e", "f", "g", "h"}) })
	var mu sync.Mutex
	worked := map[string]bool{} // the replicas that reconciled a key
	both := make(chan struct{}) // closed when both have

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stopped sync.WaitGroup
	for _, identity := range []string{"pod-0", "pod-1"} {
		m := manager.New(manager.WithSharding(backend, identity, shard.WithShards(16), shard.WithRetryPeriod(50*time.Millisecond)),
			manager.WithLogger(slog.New(slog.DiscardHandler))) // the sharders log there too
		r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
			mu.Lock()
			if !worked[identity] {
				worked[identity] = true
				if len(worked) == 2 {
					close(both)
				}
			}
			mu.Unlock()
			return reconcile.Result{}, nil
		})
		// No WithElector and no WithSharding: the Manager shards it.
		loop, err := reconcile.New("deployer", r, keys)
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := m.AddLoop(loop); err != nil {
			fmt.Println(err)
			return
		}
		stopped.Go(func() { _ = m.Run(ctx) })
	}
	<-both
	cancel()
	stopped.Wait() // each replica released its shards
	fmt.Println("both replicas reconciled their shards' keys")
	// Output:
	// both replicas reconciled their shards' keys
}
