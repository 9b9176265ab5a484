package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
)

// TestUpdateOfAGoneKeyFails checks the usual write's own path (an update
// conditioned on the key's ModRevision) when the key is gone: deleted
// since the revision the update read, or never written. The cond fails
// with Actual 0, nothing is written, and no revision is used up.
func TestUpdateOfAGoneKeyFails(t *testing.T) {
	b := newBackend(t, newPool(t))
	ctx := t.Context()
	r1, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("v")})
	require.NoError(t, err)
	r2, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: "k"})
	require.NoError(t, err)
	for _, key := range []string{"k", "never"} {
		cond := kv.Cond{Key: key, Target: kv.ModRevision, Revision: r1}
		_, err = b.Txn(ctx, []kv.Cond{cond}, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte("v2")})
		require.Equal(t, &kv.CondFailedError{Index: 0, Cond: cond, Actual: 0}, err, "an update of %q", key)
		_, err = b.Get(ctx, key)
		require.Error(t, err, "nothing is written")
	}
	r3, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "other", Value: []byte("v")})
	require.NoError(t, err)
	require.Equal(t, r2+1, r3, "the failed updates used no revision")
}

// TestEveryWriteNotifies checks that each kind of write, through either
// write function, NOTIFYs the schema's channel on commit: the wake-up of
// the watches, without which they would see writes only at their polls.
func TestEveryWriteNotifies(t *testing.T) {
	pool := newPool(t)
	b := newBackend(t, pool)
	ctx := t.Context()
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, "LISTEN "+b.Schema())
	require.NoError(t, err)
	r1, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("v1")})
	require.NoError(t, err)
	r2, err := b.Txn(ctx, []kv.Cond{{Key: "k", Target: kv.ModRevision, Revision: r1}}, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("v2")})
	require.NoError(t, err)
	_, err = b.Txn(ctx, []kv.Cond{{Key: "k", Target: kv.ModRevision, Revision: r2}}, kv.Write{Kind: kv.WriteDelete, Key: "k"})
	require.NoError(t, err)
	for i := range 3 {
		wait, cancel := context.WithTimeout(ctx, 30*time.Second)
		n, err := conn.Conn().WaitForNotification(wait)
		cancel()
		require.NoError(t, err, "3 writes (create, update, delete), notification %d missing", i+1)
		require.Equal(t, b.Schema(), n.Channel)
	}
}

// TestFencedUpdate checks the usual write of a leader, an update of a key
// at the revision it read under a fence (the lease key's CreateRevision):
// it lands while both hold, and otherwise fails on the first cond that
// does not hold, with its actual revision, using no revision.
func TestFencedUpdate(t *testing.T) {
	b := newBackend(t, newPool(t))
	ctx := t.Context()
	put := func(conds []kv.Cond, key, value string) (int64, error) {
		return b.Txn(ctx, conds, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(value)})
	}
	term, err := put(nil, "lease", "leader-1")
	require.NoError(t, err)
	rev, err := put(nil, "obj", "v1")
	require.NoError(t, err)
	fence := kv.Cond{Key: "lease", Target: kv.CreateRevision, Revision: term}
	own := kv.Cond{Key: "obj", Target: kv.ModRevision, Revision: rev}
	rev, err = put([]kv.Cond{own, fence}, "obj", "v2")
	require.NoError(t, err, "both conds hold")
	own.Revision = rev

	_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: "lease"})
	require.NoError(t, err)
	_, err = put([]kv.Cond{own, fence}, "obj", "v3")
	require.Equal(t, &kv.CondFailedError{Index: 1, Cond: fence, Actual: 0}, err, "the lease is gone")
	next, err := put(nil, "lease", "leader-2")
	require.NoError(t, err)
	_, err = put([]kv.Cond{own, fence}, "obj", "v3")
	require.Equal(t, &kv.CondFailedError{Index: 1, Cond: fence, Actual: next}, err, "another term")
	stale := kv.Cond{Key: "obj", Target: kv.ModRevision, Revision: rev - 1}
	_, err = put([]kv.Cond{stale, fence}, "obj", "v3")
	require.Equal(t, &kv.CondFailedError{Index: 0, Cond: stale, Actual: rev}, err, "both fail: the first is named")
	newFence := kv.Cond{Key: "lease", Target: kv.CreateRevision, Revision: next}
	_, err = put([]kv.Cond{stale, newFence}, "obj", "v3")
	require.Equal(t, &kv.CondFailedError{Index: 0, Cond: stale, Actual: rev}, err, "a stale update under a fence that holds")

	got, err := b.Get(ctx, "obj")
	require.NoError(t, err)
	require.Equal(t, kv.KeyValue{Key: "obj", Value: []byte("v2"), CreateRevision: 2, ModRevision: rev}, got, "no failed write landed")
	last, err := put([]kv.Cond{own, newFence}, "obj", "v3")
	require.NoError(t, err)
	require.Equal(t, next+1, last, "the failed writes used no revision")
}
