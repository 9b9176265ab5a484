package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// An Update sets the caller's obj.Meta only when it lands (to what was
// stored, at the new revision) or finds nothing to write (to the current
// Meta): a write the Backend refuses (here a fence that no longer holds)
// leaves it as the caller's read gave it, in a Store that remembers values
// (an attempt from its memory, then from a read) and in one that does not.
func TestUpdateSetsMetaOnlyWhenItLands(t *testing.T) {
	for _, opts := range [][]store.Option{nil, {store.WithLastValues(0)}} {
		ctx := t.Context()
		mem := memstore.New()
		rev, err := mem.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "leader", Value: []byte("me")})
		require.NoError(t, err)
		term := store.WithFence(ctx, store.Fence{Key: "leader", Revision: rev})
		// The key deleted: the term is over, and every fenced write fails.
		_, err = mem.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: "leader"})
		require.NoError(t, err)

		st, err := store.New[AppSpec, AppStatus](mem, "App", opts...)
		require.NoError(t, err)
		w := st.As("user")
		_, err = w.Create(ctx, &store.Object[AppSpec, AppStatus]{Meta: store.Meta{Name: "a", Labels: map[string]string{"k": "v"}}, Spec: AppSpec{Image: "i", Replicas: 1}})
		require.NoError(t, err)

		obj, err := st.Get(ctx, "a")
		require.NoError(t, err)
		read := obj.Meta
		obj.Spec.Replicas = 2
		_, err = w.Update(term, obj)
		require.ErrorIs(t, err, store.ErrFenced)
		require.Equal(t, read, obj.Meta, "a refused Update changed the caller's Meta")

		// Nothing to write: no Txn, so the fence is not asked; the Meta
		// is the current one, whatever the caller made of the parts the
		// store owns.
		obj.Spec.Replicas = 1
		obj.Meta.Generation, obj.Meta.LastWrite = 99, store.LastWrite{}
		got, err := w.Update(term, obj)
		require.NoError(t, err)
		require.Equal(t, read.Revision, got)
		require.Equal(t, read, obj.Meta)

		obj.Spec.Replicas = 3
		got, err = w.Update(ctx, obj)
		require.NoError(t, err)
		stored, err := st.Get(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, stored.Meta, obj.Meta)
		require.Equal(t, got, obj.Meta.Revision)
		require.Equal(t, read.Generation+1, obj.Meta.Generation)
	}
}
