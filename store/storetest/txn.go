package storetest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
)

var txnTests = []test{
	{"CreateIfAbsent", func(t *testing.T, b store.Backend) {
		absent := store.Cond{Key: "k", Target: store.CreateRevision, Revision: 0}
		r1 := put(t, b, "k", "v1", absent)
		_, err := b.Txn(t.Context(), []store.Cond{absent}, store.Write{Kind: store.WritePut, Key: "k", Value: []byte("v2")})
		requireCondFailed(t, err, 0, absent, r1)
		require.Equal(t, "v1", string(get(t, b, "k").Value), "a failed create writes nothing")
		requireNextRevision(t, b, r1)
	}},
	{"UpdateIfUnchanged", func(t *testing.T, b store.Backend) {
		r1 := put(t, b, "k", "v1")
		r2 := put(t, b, "k", "v2", store.Cond{Key: "k", Target: store.ModRevision, Revision: r1})
		stale := store.Cond{Key: "k", Target: store.ModRevision, Revision: r1}
		_, err := b.Txn(t.Context(), []store.Cond{stale}, store.Write{Kind: store.WritePut, Key: "k", Value: []byte("v3")})
		requireCondFailed(t, err, 0, stale, r2)
		requireKV(t, store.KV{Key: "k", Value: []byte("v2"), CreateRevision: r1, ModRevision: r2}, get(t, b, "k"), "after a stale update")
		requireNextRevision(t, b, r2)
	}},
	{"DeleteIfUnchanged", func(t *testing.T, b store.Backend) {
		r1 := put(t, b, "k", "v1")
		r2 := put(t, b, "k", "v2")
		stale := store.Cond{Key: "k", Target: store.ModRevision, Revision: r1}
		_, err := b.Txn(t.Context(), []store.Cond{stale}, store.Write{Kind: store.WriteDelete, Key: "k"})
		requireCondFailed(t, err, 0, stale, r2)
		get(t, b, "k")
		r3 := del(t, b, "k", store.Cond{Key: "k", Target: store.ModRevision, Revision: r2})
		require.Equal(t, r2+1, r3)
		_, err = b.Get(t.Context(), "k")
		require.ErrorIs(t, err, store.ErrNotFound)
	}},
	{"DeleteAbsent", func(t *testing.T, b store.Backend) {
		r := put(t, b, "other", "v")
		_, err := b.Txn(t.Context(), nil, store.Write{Kind: store.WriteDelete, Key: "k"})
		require.ErrorIs(t, err, store.ErrNotFound)
		requireNextRevision(t, b, r)
	}},
	{"AbsentKeyComparesAsZero", func(t *testing.T, b store.Backend) {
		for _, target := range []store.CondTarget{store.ModRevision, store.CreateRevision} {
			put(t, b, "k", "v", store.Cond{Key: "absent", Target: target, Revision: 0})
		}
	}},
	{"FenceOnOtherKey", func(t *testing.T, b store.Backend) {
		term := put(t, b, "lease", "leader-1")
		fence := store.Fence{Key: "lease", Revision: term}.Cond()
		put(t, b, "obj", "by-leader-1", fence)
		put(t, b, "lease", "leader-1-renewed") // a renewal keeps the CreateRevision
		put(t, b, "obj", "still-leader-1", fence)

		del(t, b, "lease")
		next := put(t, b, "lease", "leader-2")
		_, err := b.Txn(t.Context(), []store.Cond{fence}, store.Write{Kind: store.WritePut, Key: "obj", Value: []byte("stale")})
		requireCondFailed(t, err, 0, fence, next)
		require.Equal(t, "still-leader-1", string(get(t, b, "obj").Value), "a deposed leader's write is rejected")
		requireNextRevision(t, b, next)
	}},
	{"FirstFailingCond", func(t *testing.T, b store.Backend) {
		ra := put(t, b, "a", "v")
		rb := put(t, b, "b", "v")
		conds := []store.Cond{
			{Key: "a", Target: store.ModRevision, Revision: ra},
			{Key: "b", Target: store.CreateRevision, Revision: rb},
			{Key: "c", Target: store.CreateRevision, Revision: 7},    // fails: c is absent
			{Key: "a", Target: store.ModRevision, Revision: 1 << 40}, // fails too, but later
		}
		_, err := b.Txn(t.Context(), conds, store.Write{Kind: store.WritePut, Key: "target", Value: []byte("v")})
		requireCondFailed(t, err, 2, conds[2], 0)
		_, err = b.Get(t.Context(), "target")
		require.ErrorIs(t, err, store.ErrNotFound, "nothing is written when a cond fails")
		requireNextRevision(t, b, rb)
	}},
	{"OneRevisionPerWrite", func(t *testing.T, b store.Backend) {
		last := put(t, b, "k/0", "v")
		writes := []store.Write{
			{Kind: store.WritePut, Key: "k/1", Value: []byte("a")},
			{Kind: store.WritePut, Key: "k/0", Value: []byte("b")},
			{Kind: store.WriteDelete, Key: "k/1"},
			{Kind: store.WritePut, Key: "k/1", Value: []byte("c")},
			{Kind: store.WritePut, Key: "k/2", Value: nil},
			{Kind: store.WriteDelete, Key: "k/0"},
		}
		for i, w := range writes {
			rev, err := b.Txn(t.Context(), nil, w)
			require.NoError(t, err)
			require.Equal(t, last+1, rev, "write %d advances the revision by exactly one", i)
			last = rev
			if w.Kind == store.WritePut {
				require.Equal(t, rev, get(t, b, w.Key).ModRevision, "the written key's ModRevision is the new revision")
			}
		}
		require.Equal(t, last, currentRevision(t, b))
	}},
	{"ValueSize", func(t *testing.T, b store.Backend) {
		for _, size := range []int{0, 1, 1000, store.MaxValueSize} {
			v := bytes.Repeat([]byte{'x'}, size)
			put(t, b, "k", string(v))
			require.True(t, bytes.Equal(v, get(t, b, "k").Value), "a %d-byte value round-trips", size)
		}
		last := currentRevision(t, b)
		_, err := b.Txn(t.Context(), nil, store.Write{Kind: store.WritePut, Key: "big", Value: make([]byte, store.MaxValueSize+1)})
		require.ErrorIs(t, err, store.ErrTooLarge, "a value over MaxValueSize is refused")
		_, err = b.Get(t.Context(), "big")
		require.ErrorIs(t, err, store.ErrNotFound)
		requireNextRevision(t, b, last)
	}},
}

func requireCondFailed(t *testing.T, err error, index int, cond store.Cond, actual int64) {
	t.Helper()
	require.ErrorIs(t, err, store.ErrCondFailed)
	var cf *store.CondFailedError
	require.True(t, errors.As(err, &cf), "the error is a *store.CondFailedError: %v", err)
	require.Equal(t, index, cf.Index, "Index names the first failing cond")
	require.Equal(t, cond, cf.Cond)
	require.Equal(t, actual, cf.Actual, "Actual is the compared revision's real value")
}
