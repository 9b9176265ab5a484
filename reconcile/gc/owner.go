package gc

import (
	"context"
	"fmt"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// Owner is a type-erased view of one owner kind: what the collector needs to
// know about owners of that kind, whatever their Spec and Status types.
// Build one with OwnerKind. The zero Owner is invalid; New rejects it.
type Owner struct {
	kind string
	// mismatch says why the Owner is unusable though built by OwnerKind
	// (a cache and a store of two kinds); New refuses it.
	mismatch string
	// cached returns the UID of the owner called name in the owner cache.
	cached func(name string) (uid string, ok bool)
	// live reads the owner called name from the store and returns its UID,
	// or an error wrapping store.ErrNotFound.
	live func(ctx context.Context, name string) (uid string, err error)
	// source turns owner changes into hints for the dependents that the
	// changed owner (before and after the change) owns, by UID.
	source func(dependents func(uid string) []string) reconcile.Source[string]
}

// OwnerKind returns the Owner view of the objects of c and st, which must be
// the cache and the store of the same kind. The collector reads owners from
// c (every pass) and, before it deletes anything, confirms from st that the
// owner is really gone, so a cache that lags behind its dependents' cache
// never causes a deletion. A change to an owner in c, its deletion above all,
// wakes the dependents it owned. New refuses the Owner of a c and an st of
// two kinds (when c's source tells its kind, as a *store.Store does).
func OwnerKind[S, T any](c *cache.Cache[S, T], st *store.Store[S, T]) Owner {
	if c == nil || st == nil {
		return Owner{}
	}
	if k := c.Kind(); k != "" && k != st.Kind() {
		return Owner{kind: st.Kind(), mismatch: fmt.Sprintf("a cache of kind %q and a store of kind %q", k, st.Kind())}
	}
	return Owner{
		kind: st.Kind(),
		cached: func(name string) (string, bool) {
			o, ok := c.Get(name)
			if !ok {
				return "", false
			}
			return o.Meta.UID, true
		},
		live: func(ctx context.Context, name string) (string, error) {
			o, err := st.Get(ctx, name)
			if err != nil {
				return "", err
			}
			return o.Meta.UID, nil
		},
		source: func(dependents func(uid string) []string) reconcile.Source[string] {
			return reconcile.FromCacheMapped(c, func(o *store.Object[S, T]) []string {
				return dependents(o.Meta.UID)
			})
		},
	}
}

// Kind returns the owner kind, "" for the zero Owner.
func (o Owner) Kind() string { return o.kind }
