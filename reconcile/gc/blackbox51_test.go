package gc_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/gc"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// OwnerKind and New take a cache and a store that must be of one kind;
// two kinds of the same Go types type-check whichever is passed. Given a
// store of another kind, the GC did nothing and said nothing: with the
// owners' store of another kind it ignored every dependent (their owner
// references name a kind it was not given), and with the dependents' store
// of another kind it found each garbage dependent gone on its fresh read.
// New now refuses both, naming the two kinds.
func TestBlackbox51NewRefusesACacheAndAStoreOfTwoKinds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, lag{})
		groups, err := store.New[setSpec, struct{}](e.b, "Group")
		require.NoError(t, err)
		others, err := store.New[childSpec, struct{}](e.b, "Other")
		require.NoError(t, err)

		_, err = gc.New("gc", e.kidC, e.kids, []gc.Owner{gc.OwnerKind(e.setC, groups)})
		require.ErrorIs(t, err, reconcile.ErrInvalidOption)
		require.ErrorContains(t, err, `owner 0: a cache of kind "Set" and a store of kind "Group"`)
		_, err = gc.New("gc", e.kidC, others, []gc.Owner{gc.OwnerKind(e.setC, e.sets)})
		require.ErrorIs(t, err, reconcile.ErrInvalidOption)
		require.ErrorContains(t, err, `a dependents cache of kind "Child" and a store of kind "Other"`)

		// A cache whose source tells no kind (a wrapper of the user's) is
		// taken on trust, as before.
		_, err = gc.New("gc", cache.New[childSpec, struct{}](frozen[childSpec, struct{}]{e.kids}), e.kids,
			[]gc.Owner{gc.OwnerKind(cache.New[setSpec, struct{}](frozen[setSpec, struct{}]{e.sets}), e.sets)})
		require.NoError(t, err)
	})
}
