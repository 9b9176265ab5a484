package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// A caller may keep the object an Update took and edit its maps and slices
// in place for the next Update: every edit is stored, also when the Store
// read the current value without remembering it (evicted, or another
// client's write), which it then reads taking the caller's Meta as a guess
// (decodeRawAs) and must not keep the caller's maps as its memory of it.
func TestUpdateStoresInPlaceEditsAfterAReadTheStoreDidNotRemember(t *testing.T) {
	t.Run("forgotten", func(t *testing.T) { testInPlaceEdits(t, true) })
	t.Run("remembering nothing", func(t *testing.T) { testInPlaceEdits(t, false, store.WithLastValues(0)) })
}

func testInPlaceEdits(t *testing.T, forget bool, opts ...store.Option) {
	ctx := t.Context()
	b := memstore.New()
	st, err := store.New[typedSpec, typedStatus](b, "Widget", opts...)
	require.NoError(t, err)
	w := st.As("u")
	obj := &typedObj{Meta: store.Meta{Name: "a", Labels: map[string]string{"l": "1"}, Annotations: map[string]string{"n": "1"}, Finalizers: []string{"f1"}}}
	_, err = w.Create(ctx, obj)
	require.NoError(t, err)
	obj, err = st.Get(ctx, "a")
	require.NoError(t, err)

	if forget {
		st.ForgetLastValues()
	}
	obj.Spec.Replicas = 2
	_, err = w.Update(ctx, obj)
	require.NoError(t, err)

	obj.Meta.Labels["l"] = "2"
	obj.Meta.Annotations["n"] = "2"
	obj.Meta.Finalizers[0] = "f2"
	obj.Spec.Replicas = 3
	_, err = w.Update(ctx, obj)
	require.NoError(t, err)

	other := newTypedStore(t, b) // reads the Backend, remembering nothing of st's
	got, err := other.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"l": "2"}, got.Meta.Labels)
	require.Equal(t, map[string]string{"n": "2"}, got.Meta.Annotations)
	require.Equal(t, []string{"f2"}, got.Meta.Finalizers)
	require.Equal(t, 3, int(got.Spec.Replicas))
}
