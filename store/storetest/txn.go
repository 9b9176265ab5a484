package storetest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

var txnTests = []test{
	{"CreateIfAbsent", func(t *testing.T, b kv.Backend) {
		absent := kv.Cond{Key: "k", Target: kv.CreateRevision, Revision: 0}
		r1 := put(t, b, "k", "v1", absent)
		_, err := b.Txn(t.Context(), []kv.Cond{absent}, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("v2")})
		requireCondFailed(t, err, 0, absent, r1)
		require.Equal(t, "v1", string(get(t, b, "k").Value), "a failed create writes nothing")
		requireNextRevision(t, b, r1)
	}},
	{"UpdateIfUnchanged", func(t *testing.T, b kv.Backend) {
		r1 := put(t, b, "k", "v1")
		r2 := put(t, b, "k", "v2", kv.Cond{Key: "k", Target: kv.ModRevision, Revision: r1})
		stale := kv.Cond{Key: "k", Target: kv.ModRevision, Revision: r1}
		_, err := b.Txn(t.Context(), []kv.Cond{stale}, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("v3")})
		requireCondFailed(t, err, 0, stale, r2)
		requireKV(t, kv.KeyValue{Key: "k", Value: []byte("v2"), CreateRevision: r1, ModRevision: r2}, get(t, b, "k"), "after a stale update")
		requireNextRevision(t, b, r2)
	}},
	{"DeleteIfUnchanged", func(t *testing.T, b kv.Backend) {
		r1 := put(t, b, "k", "v1")
		r2 := put(t, b, "k", "v2")
		stale := kv.Cond{Key: "k", Target: kv.ModRevision, Revision: r1}
		_, err := b.Txn(t.Context(), []kv.Cond{stale}, kv.Write{Kind: kv.WriteDelete, Key: "k"})
		requireCondFailed(t, err, 0, stale, r2)
		get(t, b, "k")
		r3 := del(t, b, "k", kv.Cond{Key: "k", Target: kv.ModRevision, Revision: r2})
		require.Equal(t, r2+1, r3)
		_, err = b.Get(t.Context(), "k")
		require.ErrorIs(t, err, store.ErrNotFound)
	}},
	{"DeleteAbsent", func(t *testing.T, b kv.Backend) {
		r := put(t, b, "other", "v")
		_, err := b.Txn(t.Context(), nil, kv.Write{Kind: kv.WriteDelete, Key: "k"})
		require.ErrorIs(t, err, store.ErrNotFound)
		requireNextRevision(t, b, r)
	}},
	{"AbsentKeyComparesAsZero", func(t *testing.T, b kv.Backend) {
		for _, target := range []kv.CondTarget{kv.ModRevision, kv.CreateRevision} {
			put(t, b, "k", "v", kv.Cond{Key: "absent", Target: target, Revision: 0})
		}
	}},
	{"FenceOnOtherKey", func(t *testing.T, b kv.Backend) {
		term := put(t, b, "lease", "leader-1")
		fence := kv.Cond{Key: "lease", Target: kv.CreateRevision, Revision: term}
		put(t, b, "obj", "by-leader-1", fence)
		put(t, b, "lease", "leader-1-renewed") // a renewal keeps the CreateRevision
		put(t, b, "obj", "still-leader-1", fence)

		del(t, b, "lease")
		next := put(t, b, "lease", "leader-2")
		_, err := b.Txn(t.Context(), []kv.Cond{fence}, kv.Write{Kind: kv.WritePut, Key: "obj", Value: []byte("stale")})
		requireCondFailed(t, err, 0, fence, next)
		require.Equal(t, "still-leader-1", string(get(t, b, "obj").Value), "a deposed leader's write is rejected")
		requireNextRevision(t, b, next)
	}},
	{"FirstFailingCond", func(t *testing.T, b kv.Backend) {
		ra := put(t, b, "a", "v")
		rb := put(t, b, "b", "v")
		conds := []kv.Cond{
			{Key: "a", Target: kv.ModRevision, Revision: ra},
			{Key: "b", Target: kv.CreateRevision, Revision: rb},
			{Key: "c", Target: kv.CreateRevision, Revision: 7},    // fails: c is absent
			{Key: "a", Target: kv.ModRevision, Revision: 1 << 40}, // fails too, but later
		}
		_, err := b.Txn(t.Context(), conds, kv.Write{Kind: kv.WritePut, Key: "target", Value: []byte("v")})
		requireCondFailed(t, err, 2, conds[2], 0)
		_, err = b.Get(t.Context(), "target")
		require.ErrorIs(t, err, store.ErrNotFound, "nothing is written when a cond fails")
		requireNextRevision(t, b, rb)
	}},
	{"OneRevisionPerWrite", func(t *testing.T, b kv.Backend) {
		last := put(t, b, "k/0", "v")
		writes := []kv.Write{
			{Kind: kv.WritePut, Key: "k/1", Value: []byte("a")},
			{Kind: kv.WritePut, Key: "k/0", Value: []byte("b")},
			{Kind: kv.WriteDelete, Key: "k/1"},
			{Kind: kv.WritePut, Key: "k/1", Value: []byte("c")},
			{Kind: kv.WritePut, Key: "k/2", Value: nil},
			{Kind: kv.WriteDelete, Key: "k/0"},
		}
		for i, w := range writes {
			rev, err := b.Txn(t.Context(), nil, w)
			require.NoError(t, err)
			require.Equal(t, last+1, rev, "write %d advances the revision by exactly one", i)
			last = rev
			if w.Kind == kv.WritePut {
				require.Equal(t, rev, get(t, b, w.Key).ModRevision, "the written key's ModRevision is the new revision")
			}
		}
		require.Equal(t, last, currentRevision(t, b))
	}},
	{"ValueSize", func(t *testing.T, b kv.Backend) {
		for _, size := range []int{0, 1, 1000, kv.MaxValueSize} {
			v := bytes.Repeat([]byte{'x'}, size)
			put(t, b, "k", string(v))
			require.True(t, bytes.Equal(v, get(t, b, "k").Value), "a %d-byte value round-trips", size)
		}
		last := currentRevision(t, b)
		_, err := b.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: "big", Value: make([]byte, kv.MaxValueSize+1)})
		require.ErrorIs(t, err, store.ErrTooLarge, "a value over MaxValueSize is refused")
		_, err = b.Get(t.Context(), "big")
		require.ErrorIs(t, err, store.ErrNotFound)
		requireNextRevision(t, b, last)
	}},
}

func requireCondFailed(t *testing.T, err error, index int, cond kv.Cond, actual int64) {
	t.Helper()
	require.ErrorIs(t, err, kv.ErrCondFailed)
	var cf *kv.CondFailedError
	require.True(t, errors.As(err, &cf), "the error is a *kv.CondFailedError: %v", err)
	require.Equal(t, index, cf.Index, "Index names the first failing cond")
	require.Equal(t, cond, cf.Cond)
	require.Equal(t, actual, cf.Actual, "Actual is the compared revision's real value")
}
