package boltstore_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/boltstore"
	"github.com/steady-go/steady/store/kv"
)

// Black-box tests of the Store's public API against its documentation and
// kv.Backend's: odd keys, calls after Close, options, Compact's edges.

// TestBlackbox51OddKeys: keys of any bytes (NUL, 0xff, invalid UTF-8, a
// key at bbolt's 32 KiB limit) are stored, read, listed by prefix, watched
// and deleted like any other; a key one byte over the limit is refused with
// ErrInvalid before anything is written.
func TestBlackbox51OddKeys(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	long := "p/" + strings.Repeat("x", 32768-2)
	keys := []string{"p/\x00", "p/\x00\x00", "p/\xff", "p/\xff\xfe", "p/a\x00b", "p/\xc3\x28", long}
	ch, err := s.Watch(ctx, "p/", 0)
	require.NoError(t, err)
	for i, k := range keys {
		rev := put(t, s, k, k)
		got, err := s.Get(ctx, k)
		require.NoError(t, err, "key %d", i)
		require.Equal(t, k, got.Key)
		require.Equal(t, k, string(got.Value))
		require.Equal(t, rev, got.ModRevision)
		ev := nextChange(t, ch)
		require.Equal(t, k, ev.KV.Key)
		require.Equal(t, rev, ev.Revision)
	}
	l, err := s.List(ctx, "p/", kv.ListOptions{})
	require.NoError(t, err)
	require.Len(t, l.KVs, len(keys))
	for i := 1; i < len(l.KVs); i++ {
		require.Less(t, l.KVs[i-1].Key, l.KVs[i].Key, "key order")
	}
	l, err = s.List(ctx, "p/\x00", kv.ListOptions{})
	require.NoError(t, err)
	require.Len(t, l.KVs, 2, "prefix p/\\x00")
	l, err = s.List(ctx, "p/\xff", kv.ListOptions{})
	require.NoError(t, err)
	require.Len(t, l.KVs, 2, "prefix p/\\xff")

	head := s.Revision()
	_, err = s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: long + "x", Value: []byte("v")})
	require.ErrorIs(t, err, store.ErrInvalid, "a key over 32 KiB")
	_, err = s.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: long + "x"})
	require.ErrorIs(t, err, store.ErrInvalid, "the delete of a key over 32 KiB")
	_, err = s.Get(ctx, long+"x")
	require.ErrorIs(t, err, store.ErrNotFound, "Get of a key over 32 KiB")
	// A cond may name any key, also one that can never exist.
	_, err = s.Txn(ctx, []kv.Cond{{Key: long + "x", Target: kv.CreateRevision}}, kv.Write{Kind: kv.WritePut, Key: "q/c", Value: []byte("v")})
	require.NoError(t, err, "a cond on a key over 32 KiB (absent: revision 0)")
	require.Equal(t, head+1, s.Revision())

	for _, k := range keys {
		_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: k})
		require.NoError(t, err)
		ev := nextChange(t, ch)
		require.Equal(t, kv.EventDelete, ev.Type)
		require.Equal(t, k, ev.KV.Key)
		require.Equal(t, k, string(ev.Prev.Value))
	}
}

// TestBlackbox51CloseDuringWrites: Txns racing Close each either commit
// (and are then in the file after a reopen) or fail with ErrClosed; none
// hangs and none is lost.
func TestBlackbox51CloseDuringWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "steady.db")
	s, err := boltstore.Open(path)
	require.NoError(t, err)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		acks = map[string]int64{}
	)
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				key := string(rune('a'+w)) + "/" + string(rune('0'+i%10))
				rev, err := s.Txn(context.Background(), nil, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte{byte(i)}})
				if err != nil {
					if !errors.Is(err, boltstore.ErrClosed) {
						t.Errorf("Txn racing Close: %v, want ErrClosed", err)
					}
					return
				}
				mu.Lock()
				acks[key] = rev
				mu.Unlock()
			}
		})
	}
	for s.Revision() < 50 {
		put(t, s, "z", "")
	}
	require.NoError(t, s.Close())
	wg.Wait()
	s2, err := boltstore.Open(path)
	require.NoError(t, err)
	defer s2.Close()
	for key, rev := range acks {
		got, err := s2.Get(t.Context(), key)
		require.NoError(t, err)
		require.Equal(t, rev, got.ModRevision, "key %q: the acknowledged write", key)
	}
}

// TestBlackbox51Options: out-of-range option values mean their documented
// minimum instead of failing or breaking the store, and a second Open of
// the file with a zero lock timeout fails at once with ErrLocked.
func TestBlackbox51Options(t *testing.T) {
	s := open(t, boltstore.WithHistorySize(-5), boltstore.WithWatchBuffer(0), boltstore.WithLockTimeout(-1))
	ctx := t.Context()
	ch, err := s.Watch(ctx, "", 0)
	require.NoError(t, err)
	require.Equal(t, 1, cap(ch), "WithWatchBuffer(0) means 1")
	for i := range 5 {
		rev := put(t, s, "k", string(rune('a'+i)))
		require.Equal(t, rev, nextChange(t, ch).Revision)
	}
	_, err = boltstore.Open(s.Path(), boltstore.WithLockTimeout(0))
	require.ErrorIs(t, err, boltstore.ErrLocked)
	_, err = boltstore.Open(filepath.Join(t.TempDir(), "no", "such", "dir", "f.db"))
	require.Error(t, err, "Open in a directory that does not exist")
	_, err = boltstore.Open(t.TempDir())
	require.Error(t, err, "Open of a directory")
}

// TestBlackbox51CompactEdges: Compact keeps storetest.Compactor's promise
// at its edges (a List pinned below rev and a Watch from below rev-1
// expire; at rev and rev-1 they work), is a no-op when repeated or lower,
// refuses a revision above the store's or a negative one with ErrInvalid.
func TestBlackbox51CompactEdges(t *testing.T) {
	s := open(t, boltstore.WithHistorySize(1<<20))
	ctx := t.Context()
	for i := range 10 {
		put(t, s, "k/"+string(rune('a'+i)), "v")
	}
	head := s.Revision()
	require.ErrorIs(t, s.Compact(ctx, head+1), store.ErrInvalid)
	require.ErrorIs(t, s.Compact(ctx, -1), store.ErrInvalid)
	rev := head - 3
	require.NoError(t, s.Compact(ctx, rev))
	require.NoError(t, s.Compact(ctx, rev), "repeated")
	require.NoError(t, s.Compact(ctx, 1), "lower")

	_, err := s.List(ctx, "k/", kv.ListOptions{Revision: rev - 1})
	require.ErrorIs(t, err, store.ErrExpired, "List pinned below rev")
	l, err := s.List(ctx, "k/", kv.ListOptions{Revision: rev})
	require.NoError(t, err, "List pinned at rev")
	require.Len(t, l.KVs, int(rev-(head-10)))
	_, err = s.List(ctx, "k/", kv.ListOptions{Revision: head + 1})
	require.ErrorIs(t, err, store.ErrInvalid, "List pinned above the store")

	ch, err := s.Watch(ctx, "k/", rev-1)
	require.NoError(t, err)
	require.Equal(t, rev, nextChange(t, ch).Revision, "Watch from rev-1")
	ch, err = s.Watch(ctx, "k/", rev-2)
	require.NoError(t, err)
	ev := recv(t, ch)
	require.ErrorIs(t, ev.Err, store.ErrExpired, "Watch from below rev-1")
	_, ok := <-ch
	require.False(t, ok, "the channel closes after the error event")
}

// TestBlackbox51ContinuePastPrefix: a Continue outside the prefix, before
// or after it, is ErrInvalid (kv.Backend's List), on a page at the current
// revision and on one pinned to an older revision, which is rebuilt from
// the history. It asserted the old behaviour (the keys under the prefix
// after it: all when before, none when after) until round 53.
func TestBlackbox51ContinuePastPrefix(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	for _, k := range []string{"a", "b/1", "b/2", "c"} {
		put(t, s, k, "v")
	}
	_, err := s.List(ctx, "b/", kv.ListOptions{Continue: "z"})
	require.ErrorIs(t, err, store.ErrInvalid, "Continue after the prefix")
	_, err = s.List(ctx, "b/", kv.ListOptions{Continue: "a"})
	require.ErrorIs(t, err, store.ErrInvalid, "Continue before the prefix")
	old := s.Revision()
	_, err = s.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: "b/2"})
	require.NoError(t, err)
	put(t, s, "b/3", "v")
	_, err = s.List(ctx, "b/", kv.ListOptions{Continue: "z", Revision: old})
	require.ErrorIs(t, err, store.ErrInvalid, "pinned, Continue after the prefix")
	l, err := s.List(ctx, "b/", kv.ListOptions{Continue: "b/1", Revision: old})
	require.NoError(t, err)
	require.Equal(t, []string{"b/2"}, listKeys(l.KVs), "pinned, after b/1")
}

// TestBlackbox51BigBatch: concurrent writes of MaxValueSize values, more
// than one commit holds, all commit, each with its own value; a value one
// byte over is refused with ErrTooLarge.
func TestBlackbox51BigBatch(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			v := bytes.Repeat([]byte{byte(i)}, kv.MaxValueSize)
			_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "big/" + string(rune('a'+i)), Value: v})
			if err != nil {
				t.Error(err)
			}
			v[0] ^= 1 // the caller may reuse its buffer once Txn returned
		})
	}
	wg.Wait()
	require.Equal(t, int64(20), s.Revision())
	l, err := s.List(ctx, "big/", kv.ListOptions{})
	require.NoError(t, err)
	require.Len(t, l.KVs, 20)
	for _, e := range l.KVs {
		i := byte(e.Key[len("big/")] - 'a')
		require.Equal(t, bytes.Repeat([]byte{i}, kv.MaxValueSize), e.Value, e.Key)
	}
	_, err = s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "big/x", Value: make([]byte, kv.MaxValueSize+1)})
	require.ErrorIs(t, err, store.ErrTooLarge)
}

func listKeys(kvs []kv.KeyValue) []string {
	var out []string
	for _, e := range kvs {
		out = append(out, e.Key)
	}
	return out
}
