package etcdstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/stretchr/testify/require"
)

// TestBlackbox51HugeKeys: a key too long for etcd's request limits is
// refused with ErrTooLarge, not ErrUnavailable: nothing was sent, so no
// write can have committed, and a caller that retries an unavailable
// store would retry it for ever. Get of such a key fails the same way.
// The revision does not move.
func TestBlackbox51HugeKeys(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	ctx := context.Background()
	head := put(t, b, "k", "v")
	for name, w := range map[string]kv.Write{
		"over the server's limit": {Kind: kv.WritePut, Key: strings.Repeat("k", 1<<19), Value: make([]byte, kv.MaxValueSize)},
		"over the client's limit": {Kind: kv.WritePut, Key: strings.Repeat("k", 3<<20), Value: []byte("v")},
		"a delete":                {Kind: kv.WriteDelete, Key: strings.Repeat("k", 3<<20)},
	} {
		_, err := b.Txn(ctx, nil, w)
		require.ErrorIs(t, err, store.ErrTooLarge, name)
		require.False(t, errors.Is(err, store.ErrUnavailable), "%s: %v", name, err)
	}
	_, err := b.Get(ctx, strings.Repeat("k", 3<<20))
	require.ErrorIs(t, err, store.ErrTooLarge, "Get")
	require.Equal(t, head+1, put(t, b, "k", "w"), "nothing written")
}
