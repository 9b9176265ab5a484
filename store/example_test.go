package store_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

type AppSpec struct {
	Image    string `json:"image"`
	Replicas int    `json:"replicas"`
}

type AppStatus struct {
	Ready int `json:"ready"`
}

func Example() {
	ctx := context.Background()
	apps, err := store.New[AppSpec, AppStatus](memstore.New(), "App")
	if err != nil {
		panic(err)
	}
	user, ctrl := apps.As("user"), apps.As("controller")

	app := &store.Object[AppSpec, AppStatus]{
		Meta: store.Meta{Name: "web", Labels: map[string]string{"team": "a"}},
		Spec: AppSpec{Image: "web:1", Replicas: 3},
	}
	if _, err := user.Create(ctx, app); err != nil {
		panic(err)
	}

	// The controller reads, observes, and reports status for generation 1.
	seen, _ := apps.Get(ctx, "web")
	seen.Status.Ready = 3
	if _, err := ctrl.UpdateStatus(ctx, seen, store.WithGeneration(seen.Meta.Generation)); err != nil {
		panic(err)
	}

	// A stale spec write is rejected, not lost.
	app.Spec.Replicas = 5
	_, err = user.Update(ctx, app) // app's revision predates the status write
	fmt.Println(errors.Is(err, store.ErrConflict))
	app, _ = apps.Get(ctx, "web")
	app.Spec.Replicas = 5
	if _, err := user.Update(ctx, app); err != nil {
		panic(err)
	}
	fmt.Println(app.Meta.Generation, app.Meta.LastWrite.Manager, app.Meta.LastWrite.Op)

	got, _ := apps.Get(ctx, "web")
	fmt.Println(got.Spec.Replicas, got.Status.Ready)
	// Output:
	// true
	// 2 user Update
	// 5 3
}

func ExampleParseSelector() {
	sel, err := store.ParseSelector("tier in (front, edge), app=web, !canary")
	if err != nil {
		panic(err)
	}
	fmt.Println(sel)
	fmt.Println(sel.Matches(map[string]string{"app": "web", "tier": "edge"}))
	fmt.Println(sel.Matches(map[string]string{"app": "web", "tier": "edge", "canary": "yes"}))
	_, err = store.ParseSelector("app=web tier=front")
	fmt.Println(err)
	// Output:
	// app=web,!canary,tier in (edge,front)
	// true
	// false
	// store: invalid: label selector "app=web tier=front": at offset 8: want ',' or the end
}

func ExampleValidateName() {
	fmt.Println(store.ValidateName("web-1.example.com"))
	fmt.Println(store.ValidateName("Web_1"))
	// Output:
	// <nil>
	// store: invalid name "Web_1": may contain only lowercase ASCII letters, digits, '-' and '.'
}

func ExampleWriter_Delete() {
	ctx := context.Background()
	apps, _ := store.New[AppSpec, AppStatus](memstore.New(), "App")
	w := apps.As("user")
	_, _ = w.Create(ctx, &store.Object[AppSpec, AppStatus]{
		Meta: store.Meta{Name: "web", Finalizers: []string{"example.com/dns"}},
	})

	// With a finalizer, Delete only requests deletion...
	_, _ = w.Delete(ctx, "web")
	app, _ := apps.Get(ctx, "web")
	fmt.Println(app.Meta.DeletionRequested)

	// ...and the object goes when its last finalizer is removed.
	app.Meta.Finalizers = nil
	_, _ = w.Update(ctx, app)
	_, err := apps.Get(ctx, "web")
	fmt.Println(errors.Is(err, store.ErrNotFound))

	// Deleting what is gone is an error that IgnoreNotFound makes success.
	_, err = w.Delete(ctx, "web")
	fmt.Println(store.IgnoreNotFound(err))
	// Output:
	// true
	// true
	// <nil>
}

func ExampleWithFence() {
	ctx := context.Background()
	b := memstore.New()
	apps, _ := store.New[AppSpec, AppStatus](b, "App")

	// store/lease normally hands out the fence; here the leader key is made
	// by hand.
	rev, _ := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "leader", Value: []byte("me")})
	term := store.WithFence(ctx, store.Fence{Key: "leader", Revision: rev})
	_, err := apps.As("leader").Create(term, &store.Object[AppSpec, AppStatus]{Meta: store.Meta{Name: "a"}})
	fmt.Println(err)

	// The term ends: the leader key is deleted (and maybe recreated).
	_, _ = b.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: "leader"})
	_, err = apps.As("leader").Create(term, &store.Object[AppSpec, AppStatus]{Meta: store.Meta{Name: "b"}})
	fmt.Println(errors.Is(err, store.ErrFenced))
	// Output:
	// <nil>
	// true
}

// FieldChanges tells a manager's own changes from other actors', field by
// field, from the object's field ownership.
func ExampleStore_FieldChanges() {
	ctx := context.Background()
	apps, _ := store.New[AppSpec, AppStatus](memstore.New(), "App")
	_, _ = apps.As("user").Apply(ctx, "web", map[string]any{"image": "web:1"})
	before, _ := apps.Get(ctx, "web")

	_, _ = apps.As("autoscaler").Apply(ctx, "web", map[string]any{"replicas": 3})
	after, _ := apps.Get(ctx, "web")
	next := *after
	next.Meta.Labels = map[string]string{"team": "a"}
	_, _ = apps.As("user").Update(ctx, &next)
	after, _ = apps.Get(ctx, "web")

	owned, foreign := apps.FieldChanges(before, after, "autoscaler")
	fmt.Println("autoscaler's own:", owned)
	fmt.Println("others':", foreign)
	// Output:
	// autoscaler's own: [.spec.replicas]
	// others': [.metadata.labels.team]
}
