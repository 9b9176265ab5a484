package pgstore_test

import (
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// Black-box tests of the Backend's public API against its documentation
// and kv.Backend's: odd keys, the order in which conds fail on each write
// path, options, Compact's edges, a watch from a future revision.

func bbPut(t *testing.T, b kv.Backend, key, value string, conds ...kv.Cond) int64 {
	t.Helper()
	rev, err := b.Txn(t.Context(), conds, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(value)})
	require.NoError(t, err)
	return rev
}

func bbNext(t *testing.T, ch <-chan kv.Event) kv.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			require.True(t, ok, "watch channel closed")
			require.NoError(t, ev.Err)
			if !ev.Progress {
				return ev
			}
		case <-timeout:
			require.FailNow(t, "no watch event within 10s")
		}
	}
}

// TestBlackbox51OddKeys: keys of any bytes (NUL, 0xff, invalid UTF-8) are
// stored, read, listed by prefix (also a prefix of 0xff bytes, which has
// no end key), watched and deleted; an empty value is a put, not a delete,
// in a watch; a put of a key too long for PostgreSQL's index fails with
// ErrInvalid and writes nothing, while a Get or a cond on such a key
// finds it absent.
func TestBlackbox51OddKeys(t *testing.T) {
	b := newBackend(t, newPool(t))
	ctx := t.Context()
	keys := []string{"p/\x00", "p/\x00\x00", "p/\xff", "p/\xff\xff", "p/a\x00b", "p/\xc3\x28", "p/" + strings.Repeat("x", 2000)}
	ch, err := b.Watch(ctx, "p/", 0)
	require.NoError(t, err)
	for i, k := range keys {
		rev := bbPut(t, b, k, k)
		got, err := b.Get(ctx, k)
		require.NoError(t, err, "key %d", i)
		require.Equal(t, kv.KeyValue{Key: k, Value: []byte(k), CreateRevision: rev, ModRevision: rev}, got)
		ev := bbNext(t, ch)
		require.Equal(t, k, ev.KV.Key)
		require.Equal(t, rev, ev.Revision)
	}
	l, err := b.List(ctx, "p/", kv.ListOptions{})
	require.NoError(t, err)
	require.Len(t, l.KVs, len(keys))
	for i := 1; i < len(l.KVs); i++ {
		require.Less(t, l.KVs[i-1].Key, l.KVs[i].Key, "bytewise key order")
	}
	for prefix, n := range map[string]int{"p/\x00": 2, "p/\xff": 2, "p/\xff\xff": 1} {
		l, err := b.List(ctx, prefix, kv.ListOptions{})
		require.NoError(t, err)
		require.Len(t, l.KVs, n, "prefix %q", prefix)
	}
	ffs, err := b.Watch(ctx, "p/\xff\xff", 3) // from the write of p/\xff, before p/\xff\xff's
	require.NoError(t, err)
	require.Equal(t, "p/\xff\xff", bbNext(t, ffs).KV.Key, "a watch on a prefix of 0xff bytes")

	// An empty value is a value.
	rev := bbPut(t, b, "p/empty", "")
	ev := bbNext(t, ch)
	require.Equal(t, kv.EventPut, ev.Type, "the put of an empty value")
	require.Equal(t, rev, ev.KV.ModRevision)

	head := rev
	long := make([]byte, 3000)
	_, _ = rand.Read(long) // random: PostgreSQL cannot compress it under its limit
	_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "p/" + string(long), Value: []byte("v")})
	require.ErrorIs(t, err, store.ErrInvalid, "a put of a key over the index's limit")
	_, err = b.Get(ctx, "p/"+string(long))
	require.ErrorIs(t, err, store.ErrNotFound)
	rev, err = b.Txn(ctx, []kv.Cond{{Key: "p/" + string(long), Target: kv.CreateRevision}}, kv.Write{Kind: kv.WritePut, Key: "q", Value: nil})
	require.NoError(t, err, "a cond on a key too long to exist")
	require.Equal(t, head+1, rev, "the refused put used no revision")

	for _, k := range keys {
		_, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: k})
		require.NoError(t, err)
		ev := bbNext(t, ch)
		require.Equal(t, kv.EventDelete, ev.Type)
		require.Equal(t, k, ev.KV.Key)
		require.Equal(t, k, string(ev.Prev.Value))
	}
}
