package predicate_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/predicate"
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
