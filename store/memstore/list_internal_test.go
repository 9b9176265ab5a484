package memstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// The undone state of a pinned listing (the keys written since its
// revision, with their revisions) serves its next pages and goes with its
// last page. Kept, it held a map of every key written since the listing's
// revision until the next pinned listing: ~700 KB of the controller
// benchmark's heap once its cache relisted 10,000 objects, ~70 MB at 1M.
func TestPinnedListingDropsItsUndoneStateAtItsLastPage(t *testing.T) {
	ctx := context.Background()
	s := New()
	put := func(i int) {
		_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("obj/%03d", i), Value: []byte{byte(i)}})
		require.NoError(t, err)
	}
	for i := range 100 {
		put(i)
	}
	rev := s.Revision()
	for i := range 50 {
		put(2 * i)
	}
	opts, pages, n := kv.ListOptions{Limit: 30, Revision: rev}, 0, 0
	for {
		l, err := s.List(ctx, "obj/", opts)
		require.NoError(t, err)
		pages++
		n += len(l.KVs)
		if l.Continue == "" {
			require.Nil(t, s.undo, "the last page drops the listing's undone state")
			break
		}
		require.NotNil(t, s.undo, "page %d keeps it for the next", pages)
		opts.Continue = l.Continue
	}
	require.Equal(t, 100, n)
	require.Equal(t, 4, pages)
}

// A listing whose revision left the history ends with ErrExpired, and its
// undone state goes with it: no page can use it any more. The Cache's
// relist whose pages expire lists the kind again in one unpinned page
// (store/cache wholeIfExpired), which never reaches a pinned last page.
func TestExpiredListingDropsItsUndoneState(t *testing.T) {
	ctx := context.Background()
	s := New(WithHistorySize(20))
	put := func(i int) {
		_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("obj/%03d", i), Value: []byte{byte(i)}})
		require.NoError(t, err)
	}
	for i := range 10 {
		put(i)
	}
	rev := s.Revision()
	put(0)
	l, err := s.List(ctx, "obj/", kv.ListOptions{Limit: 3, Revision: rev})
	require.NoError(t, err)
	require.NotNil(t, s.undo, "the first page keeps it for the next")
	for i := range 30 {
		put(i % 10)
	}
	_, err = s.List(ctx, "obj/", kv.ListOptions{Limit: 3, Revision: rev, Continue: l.Continue})
	require.ErrorIs(t, err, store.ErrExpired)
	require.Nil(t, s.undo, "the expired listing's undone state goes")
}
