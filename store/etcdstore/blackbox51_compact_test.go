package etcdstore_test

import (
	"context"
	"testing"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/stretchr/testify/require"
)

// TestBlackbox51CompactEdges: Compact keeps storetest.Compactor's promise
// at its edges as the other backends do (a List pinned below rev and a
// Watch from below rev-1 expire; at rev and rev-1 they work), is a no-op
// when repeated or lower, and refuses a revision above the store's or a
// negative one with ErrInvalid.
func TestBlackbox51CompactEdges(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	ctx := context.Background()
	var head int64
	for range 10 {
		head = put(t, b, "k", "v")
	}
	require.ErrorIs(t, b.Compact(ctx, head+1), store.ErrInvalid)
	require.ErrorIs(t, b.Compact(ctx, -1), store.ErrInvalid)
	rev := head - 3
	require.NoError(t, b.Compact(ctx, rev))
	require.NoError(t, b.Compact(ctx, rev), "repeated")
	require.NoError(t, b.Compact(ctx, 1), "lower")

	_, err := b.List(ctx, "", kv.ListOptions{Revision: rev - 1})
	require.ErrorIs(t, err, store.ErrExpired, "List pinned below rev")
	_, err = b.List(ctx, "", kv.ListOptions{Revision: rev})
	require.NoError(t, err, "List pinned at rev")
	ch, err := b.Watch(ctx, "", rev-1)
	require.NoError(t, err)
	ev := <-ch
	require.NoError(t, ev.Err, "Watch from rev-1")
	require.Equal(t, rev, ev.Revision)
	ch, err = b.Watch(ctx, "", rev-2)
	require.NoError(t, err)
	require.ErrorIs(t, (<-ch).Err, store.ErrExpired, "Watch from below rev-1")
}
