package otelsteady_test

import (
	"iter"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
	"github.com/steady-go/steady/tracing/otelsteady"
)

// TestBlackbox51NilWrapped: wrapping a nil Backend or Reconciler (typed
// or not) gives nil, which store.New and reconcile.New refuse with an
// error, instead of a wrapper that passes their nil checks and panics at
// its first call.
func TestBlackbox51NilWrapped(t *testing.T) {
	var typedNil *memstore.Store
	for _, b := range []kv.Backend{nil, typedNil} {
		w := otelsteady.Backend(b, nil)
		require.Nil(t, w)
		_, err := store.New[spec, status](w, "App")
		require.ErrorIs(t, err, store.ErrInvalid)
	}
	var typedNilR reconcile.Func[string]
	for _, r := range []reconcile.Reconciler[string]{nil, typedNilR} {
		w := otelsteady.Reconciler(r, otelsteady.Config[string]{Loop: "l"})
		require.Nil(t, w)
		_, err := reconcile.New("l", w, reconcile.Keys(func() iter.Seq[string] { return slices.Values([]string{"k"}) }))
		require.Error(t, err)
	}
}
