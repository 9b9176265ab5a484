package gc

import (
	"fmt"
	"iter"
	"slices"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// New returns a Loop named name that collects the garbage among the objects
// of dependents (the cache) and st (the store of the same kind): a dependent
// whose controller owner (the OwnerRef with Controller set) of one of the
// owners' kinds no longer exists, matched by UID, is deleted.
//
// The Loop is keyed by dependent name. Its sources are the dependents'
// cache (every dependent is a key, listed again on every resync and every
// leadership term) and each owner kind's cache (a changed or deleted owner
// wakes the dependents filed under its UID in cache.IndexOwnerUID). It writes
// as the Loop's field manager (name, unless opts hold
// reconcile.WithFieldManager) and
// only ever calls Delete.
//
// opts are passed on to reconcile.New: workers, resync, elector, logger,
// metrics and clock are the caller's choice. A GC
// usually runs with the same elector as the controllers, so only the leader
// deletes, and its deletes carry the term's fence.
//
// New returns an error wrapping reconcile.ErrInvalidOption for a nil cache or
// store, a cache and a store of two kinds (the dependents', or an Owner's;
// known when the cache's source tells its kind, as a *store.Store does), a
// zero Owner, two Owners of one kind, or whatever reconcile.New rejects.
func New[S, T any](name string, dependents *cache.Cache[S, T], st *store.Store[S, T], owners []Owner, opts ...reconcile.Option) (*reconcile.Loop[string], error) {
	if dependents == nil || st == nil {
		return nil, fmt.Errorf("gc %s: %w: nil dependents cache or store", name, reconcile.ErrInvalidOption)
	}
	// Two kinds of the same Go types type-check; the GC over them would
	// find every garbage dependent already gone on its fresh read.
	if k := dependents.Kind(); k != "" && k != st.Kind() {
		return nil, fmt.Errorf("gc %s: %w: a dependents cache of kind %q and a store of kind %q", name, reconcile.ErrInvalidOption, k, st.Kind())
	}
	byKind := make(map[string]Owner, len(owners))
	for i, o := range owners {
		if o.mismatch != "" {
			// It would ignore every dependent (their owner references name
			// the cache's kind), or never be woken by an owner's deletion.
			return nil, fmt.Errorf("gc %s: %w: owner %d: %s (OwnerKind takes the cache and the store of one kind)", name, reconcile.ErrInvalidOption, i, o.mismatch)
		}
		if o.kind == "" || o.cached == nil || o.live == nil || o.source == nil {
			return nil, fmt.Errorf("gc %s: %w: owner %d is the zero Owner (use OwnerKind)", name, reconcile.ErrInvalidOption, i)
		}
		if _, dup := byKind[o.kind]; dup {
			return nil, fmt.Errorf("gc %s: %w: owner kind %q given twice", name, reconcile.ErrInvalidOption, o.kind)
		}
		byKind[o.kind] = o
	}
	c := &collector[S, T]{deps: dependents, st: st, owners: byKind}
	dependentsOf := func(uid string) []string {
		objs := dependents.ByIndex(cache.IndexOwnerUID, uid)
		out := make([]string, len(objs))
		for i, d := range objs {
			out[i] = d.Meta.Name
		}
		return out
	}
	// Every change to a dependent is a hint for it, and every dependent is
	// listed on resync and at the start of a term. (FromStore would do
	// both, but it also measures convergence from Ready conditions, which
	// mean nothing to a collector, and writes Stalled.)
	self := reconcile.FromCacheMapped(dependents, func(o *store.Object[S, T]) []string { return []string{o.Meta.Name} })
	keys := reconcile.Keys(func() iter.Seq[string] { return slices.Values(dependents.Keys()) })
	srcs := []reconcile.Source[string]{self, keys}
	for _, o := range owners {
		srcs = append(srcs, o.source(dependentsOf))
	}
	loop, err := reconcile.New[string](name, c, reconcile.Sources(srcs...), opts...)
	if err != nil {
		return nil, err
	}
	c.w = st.As(loop.Info().FieldManager)
	return loop, nil
}
