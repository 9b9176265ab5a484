package cache_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// A Cache follows one kind's objects: a controller reads from it, is told of
// changes by a handler, and waits for its own writes with WaitFor.
func ExampleCache() {
	type Spec struct{ Replicas int }
	type Status struct{ Ready int }

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, _ := store.New[Spec, Status](memstore.New(), "Widget")
	w := st.As("example")
	_, _ = w.Create(ctx, &store.Object[Spec, Status]{Meta: store.Meta{Name: "web", Labels: map[string]string{"app": "shop"}}})

	c := cache.New(st)
	changes := make(chan string, 10)
	c.AddHandler(func(old, new *store.Object[Spec, Status]) {
		switch {
		case old == nil:
			changes <- "added " + new.Meta.Name
		case new == nil:
			changes <- "deleted " + old.Meta.Name
		default:
			changes <- fmt.Sprintf("modified %s: replicas %d -> %d", new.Meta.Name, old.Spec.Replicas, new.Spec.Replicas)
		}
	})
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	_ = c.WaitForSync(ctx)
	fmt.Println(<-changes)

	// Read, copy, change, write; then wait until the cache shows the write.
	cur, _ := c.Get("web")
	next := *cur // cached objects are shared: change a copy
	next.Spec.Replicas = 3
	rev, _ := w.Update(ctx, &next)
	_ = c.WaitFor(ctx, rev)
	fmt.Println(<-changes)
	got, _ := c.Get("web")
	fmt.Println("cached replicas:", got.Spec.Replicas)
	fmt.Println("app=shop:", len(c.ByLabel("app", "shop")))

	rev, _ = w.Delete(ctx, "web")
	_ = c.WaitFor(ctx, rev)
	fmt.Println(<-changes)

	cancel()
	fmt.Println("Run:", <-done)
	// Output:
	// added web
	// modified web: replicas 0 -> 3
	// cached replicas: 3
	// app=shop: 1
	// deleted web
	// Run: <nil>
}

// An index files objects under values computed from them; every Cache has
// IndexOwnerUID, which finds an owner's dependents.
func ExampleCache_ByIndex() {
	type Spec struct{ Team string }
	type Status struct{}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, _ := store.New[Spec, Status](memstore.New(), "Job")
	w := st.As("example")
	for name, team := range map[string]string{"a": "red", "b": "blue", "c": "red"} {
		_, _ = w.Create(ctx, &store.Object[Spec, Status]{Meta: store.Meta{Name: name}, Spec: Spec{Team: team}})
	}

	c := cache.New(st)
	_ = c.AddIndex("team", func(obj *store.Object[Spec, Status]) []string { return []string{obj.Spec.Team} })
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	_ = c.WaitForSync(ctx)
	for _, obj := range c.ByIndex("team", "red") {
		fmt.Println(obj.Meta.Name)
	}
	cancel()
	<-done
	// Output:
	// a
	// c
}

// The mutation detector reports code that modifies an object the Cache
// serves. Tests turn it on with this option or, for every Cache of the test
// binary, with STEADY_CACHE_MUTATION_DETECTOR=1 in TestMain.
func ExampleWithMutationDetector() {
	type Spec struct{ Replicas int }
	type Status struct{}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, _ := store.New[Spec, Status](memstore.New(), "Widget")
	_, _ = st.As("example").Create(ctx, &store.Object[Spec, Status]{Meta: store.Meta{Name: "web"}})

	c := cache.New(st, cache.WithMutationDetector(func(err error) { fmt.Println(err) }))
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	_ = c.WaitForSync(ctx)

	obj, _ := c.Get("web")
	obj.Spec.Replicas = 5 // wrong: change a copy instead
	var me *cache.MutationError
	fmt.Println(errors.As(c.Check(), &me), me.Name)
	cancel()
	<-done
	// Output:
	// true web
}
