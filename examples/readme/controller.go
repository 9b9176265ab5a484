// Command readme is the README's whole controller: an App wants N Replicas;
// the app controller creates them as children of the App, deletes the
// extra ones, and reports how many there are; the garbage collector deletes
// the Replicas of a deleted App; a Manager runs both Loops over shared caches.
package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/steady-go/steady/manager"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/gc"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
)

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

// appController reconciles one App by name: it observes the App and its
// Replicas in the caches, acts on the difference, and reports.
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

// run runs the app controller and the garbage collector on backend until
// ctx ends.
func run(ctx context.Context, backend kv.Backend) error {
	apps, err := store.New[AppSpec, AppStatus](backend, "App")
	if err != nil {
		return err
	}
	replicas, err := store.New[ReplicaSpec, ReplicaStatus](backend, "Replica")
	if err != nil {
		return err
	}
	appCache, replicaCache := cache.New(apps), cache.New(replicas) // one per kind, shared by both Loops

	ctl := &appController{apps: appCache, appSt: apps, replicas: replicaCache, repSt: replicas}
	appLoop, err := reconcile.New("apps", ctl, reconcile.Sources(
		reconcile.FromStore(appCache, apps),       // an App changed (and every App on resync)
		reconcile.FromOwned(replicaCache, "App")), // a Replica changed: reconcile its App
		reconcile.WithFieldManager(fieldManager))
	if err != nil {
		return err
	}
	// The GC deletes every Replica whose controller owner (an App, by UID)
	// is gone.
	gcLoop, err := gc.New("replica-gc", replicaCache, replicas, []gc.Owner{gc.OwnerKind(appCache, apps)})
	if err != nil {
		return err
	}

	m := manager.New() // caches first, Loops once they synced; ordered stop
	if err := errors.Join(m.AddCache(appCache), m.AddCache(replicaCache), m.AddLoop(appLoop), m.AddLoop(gcLoop)); err != nil {
		return err
	}
	return m.Run(ctx)
}
