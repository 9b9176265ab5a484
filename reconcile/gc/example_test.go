package gc_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/steady-go/steady/reconcile/gc"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// A Deployment-like owner and its replicas: deleting the owner deletes
// the replica it controlled, not the one a recreated owner controls.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	b := memstore.New()
	apps, _ := store.New[struct{}, struct{}](b, "App")
	pods, _ := store.New[struct{}, struct{}](b, "Pod")
	appCache, podCache := cache.New(apps), cache.New(pods)
	wg.Go(func() { _ = appCache.Run(ctx) })
	wg.Go(func() { _ = podCache.Run(ctx) })

	create := func(name string, owner *store.Object[struct{}, struct{}]) int64 {
		pod := &store.Object[struct{}, struct{}]{Meta: store.Meta{Name: name,
			Owners: []store.OwnerRef{{Kind: "App", Name: owner.Meta.Name, UID: owner.Meta.UID, Controller: true}}}}
		rev, _ := pods.As("app-controller").Create(ctx, pod)
		return rev
	}
	web := &store.Object[struct{}, struct{}]{Meta: store.Meta{Name: "web"}}
	_, _ = apps.As("user").Create(ctx, web)
	create("web-old", web)

	gone := make(chan string, 1)
	podCache.AddHandler(func(old, new *store.Object[struct{}, struct{}]) {
		if new == nil {
			gone <- old.Meta.Name
		}
	})
	loop, err := gc.New("gc", podCache, pods, []gc.Owner{gc.OwnerKind(appCache, apps)})
	if err != nil {
		fmt.Println(err)
		return
	}
	wg.Go(func() { _ = loop.Run(ctx) })

	// Delete the owner and recreate it under the same name: a new UID.
	_, _ = apps.As("user").Delete(ctx, "web")
	web = &store.Object[struct{}, struct{}]{Meta: store.Meta{Name: "web"}}
	_, _ = apps.As("user").Create(ctx, web)
	rev := create("web-new", web)

	fmt.Println("collected:", <-gone)
	_ = podCache.WaitFor(ctx, rev)
	fmt.Println("pods left:", podCache.Keys())
	// Output:
	// collected: web-old
	// pods left: [web-new]
}
