package predicate_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/predicate"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// And and Or keep their own list of predicates: a caller that reuses the
// slice it spread into them (building several compositions in a loop, say)
// must not change, or nil out, a composition it already handed to a source.
// Before, both closed over the caller's slice: a nil written into it later
// made the predicate panic on the cache's handler goroutine, and any other
// write silently changed what the source filtered.
func TestBlackbox51AndOrKeepTheirOwnList(t *testing.T) {
	yes := predicate.Predicate[spec, status](func(_, _ *obj) bool { return true })
	no := predicate.Predicate[spec, status](func(_, _ *obj) bool { return false })
	a := withMeta(1, nil, nil)

	ps := []predicate.Predicate[spec, status]{yes, yes}
	and := predicate.And(ps...)
	ps[0], ps[1] = no, nil
	require.NotPanics(t, func() { require.True(t, and(nil, a), "And asks the predicates it was given") })

	ps = []predicate.Predicate[spec, status]{no, no}
	or := predicate.Or(ps...)
	ps[0], ps[1] = yes, nil
	require.NotPanics(t, func() { require.False(t, or(nil, a), "Or asks the predicates it was given") })
}

// The package documentation's misuse promise, as a user meets it: a
// composition holding a nil predicate is nil, and the Loop refuses a source
// filtered by it when it is built (not when it runs), saying why.
func TestBlackbox51ANilCompositionIsRefusedByNew(t *testing.T) {
	st, err := store.New[spec, status](memstore.New(), "Widget")
	require.NoError(t, err)
	r := reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) { return reconcile.Result{}, nil })
	yes := predicate.Predicate[spec, status](func(_, _ *obj) bool { return true })
	p := predicate.Or(yes, predicate.And[spec, status](yes, nil))
	require.Nil(t, p)
	_, err = reconcile.New("widgets", r, reconcile.FromStore(cache.New(st), st, reconcile.WithPredicate(p)))
	require.ErrorIs(t, err, reconcile.ErrInvalidOption)
	require.ErrorContains(t, err, "nil predicate")

	l, err := reconcile.New("widgets", r, reconcile.FromStore(cache.New(st), st))
	require.NoError(t, err)
	_, err = l.AddSource(reconcile.FromOwned(cache.New(st), "Widget", reconcile.WithPredicate(p)))
	require.ErrorIs(t, err, reconcile.ErrInvalidOption)
}
