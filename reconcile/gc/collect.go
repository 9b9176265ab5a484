package gc

import (
	"context"
	"errors"
	"fmt"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// collector is the GC's Reconciler. It holds no state about what it
// deleted: every pass derives the decision from the caches, and confirms it
// from the store, so a crash at any point loses nothing.
type collector[S, T any] struct {
	deps   *cache.Cache[S, T]
	st     *store.Store[S, T]
	w      *store.Writer[S, T]
	owners map[string]Owner
}

// Reconcile deletes the dependent called name if its controller owner is
// gone. The cache proposes, the store confirms: the deletion happens only
// after a fresh read of the dependent and of its owner, and only if the
// dependent is still at the revision that read returned.
func (c *collector[S, T]) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	obj, ok := c.deps.Get(name)
	if !ok {
		return reconcile.Result{}, nil
	}
	ref, owner, ok := c.candidate(&obj.Meta)
	if !ok {
		return reconcile.Result{}, nil
	}
	if uid, ok := owner.cached(ref.Name); ok && uid == ref.UID {
		return reconcile.Result{}, nil // the owner lives
	}

	fresh, err := c.st.Get(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("gc: read %s: %w", name, err)
	}
	ref, owner, ok = c.candidate(&fresh.Meta)
	if !ok {
		return reconcile.Result{}, nil
	}
	uid, err := owner.live(ctx, ref.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("gc: read owner %s %s of %s: %w", ref.Kind, ref.Name, name, err)
	case uid == ref.UID:
		return reconcile.Result{}, nil // the owner lives; its cache lags
	}

	rev, err := c.w.Delete(ctx, name, store.WithRevision(fresh.Meta.Revision))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return reconcile.Result{}, nil
	case err != nil:
		// ErrConflict: written since the fresh read (perhaps adopted);
		// the retry decides again from the new state.
		return reconcile.Result{}, fmt.Errorf("gc: delete %s (owner %s %s uid %s gone): %w", name, ref.Kind, ref.Name, ref.UID, err)
	}
	reconcile.RecordWrite(ctx, rev)
	return reconcile.Result{}, nil
}

// candidate returns the controller owner reference of m and its Owner view
// when m is a dependent the collector judges: not already being deleted,
// with a controller owner that has a UID and a kind the collector knows.
func (c *collector[S, T]) candidate(m *store.Meta) (store.OwnerRef, Owner, bool) {
	if m.DeletionRequested {
		return store.OwnerRef{}, Owner{}, false // its finalizers decide now
	}
	for _, ref := range m.Owners {
		if !ref.Controller {
			continue
		}
		o, ok := c.owners[ref.Kind]
		if !ok || ref.UID == "" {
			return store.OwnerRef{}, Owner{}, false
		}
		return ref, o, true
	}
	return store.OwnerRef{}, Owner{}, false
}
