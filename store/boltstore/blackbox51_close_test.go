package boltstore_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/boltstore"
	"github.com/steady-go/steady/store/kv"
)

// TestBlackbox51AfterClose: every call on a closed Store fails with an
// error wrapping ErrClosed, none panics or hangs, and Close stays
// idempotent.
func TestBlackbox51AfterClose(t *testing.T) {
	s, err := boltstore.Open(filepath.Join(t.TempDir(), "steady.db"))
	require.NoError(t, err)
	ctx := t.Context()
	put(t, s, "k", "v")
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "a second Close")

	_, err = s.Get(ctx, "k")
	require.ErrorIs(t, err, boltstore.ErrClosed, "Get")
	_, err = s.List(ctx, "", kv.ListOptions{})
	require.ErrorIs(t, err, boltstore.ErrClosed, "List")
	_, err = s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("w")})
	require.ErrorIs(t, err, boltstore.ErrClosed, "Txn")
	_, err = s.Watch(ctx, "", 0)
	require.ErrorIs(t, err, boltstore.ErrClosed, "Watch")
	require.ErrorIs(t, s.Compact(ctx, 1), boltstore.ErrClosed, "Compact")
}
