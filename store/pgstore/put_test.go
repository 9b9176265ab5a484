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
