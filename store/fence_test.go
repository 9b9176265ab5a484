package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// A term's fence lives in the backend that holds the lease. A write of the
// term to a store over another backend cannot be fenced there, so it fails
// loudly, naming the cause and the way out, instead of calling the term over.
func TestAFenceFromAnotherBackendIsNamedAndCanBeLeftOut(t *testing.T) {
	ctx := t.Context()
	leases, children := memstore.New(), memstore.New()
	rev, err := leases.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "leader", Value: []byte("me")})
	require.NoError(t, err)
	term := store.WithFence(ctx, store.Fence{Key: "leader", Revision: rev})

	pods, err := store.New[AppSpec, AppStatus](children, "Pod")
	require.NoError(t, err)
	_, err = pods.As("c").Create(term, &store.Object[AppSpec, AppStatus]{Meta: store.Meta{Name: "p"}})
	require.ErrorIs(t, err, store.ErrFenced)
	require.ErrorContains(t, err, "another backend")
	require.ErrorContains(t, err, "store.WithoutFence")

	// Left out, the write lands; the ctx still ends with the term.
	unfenced := store.WithoutFence(term)
	_, ok := store.FenceFrom(unfenced)
	require.False(t, ok)
	_, err = pods.As("c").Create(unfenced, &store.Object[AppSpec, AppStatus]{Meta: store.Meta{Name: "p"}})
	require.NoError(t, err)
	_, err = pods.As("c").Delete(unfenced, "p")
	require.NoError(t, err)

	end, cancel := context.WithCancel(term)
	cancel()
	_, err = pods.As("c").Create(store.WithoutFence(end), &store.Object[AppSpec, AppStatus]{Meta: store.Meta{Name: "q"}})
	require.ErrorIs(t, err, context.Canceled)
}
