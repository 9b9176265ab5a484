package etcdstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/etcdstore"
	"github.com/steady-go/steady/store/kv"
	"github.com/stretchr/testify/require"
)

func TestElectorOneLeaderAndHandover(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	ctx := context.Background()

	a, err := etcdstore.NewElector(b, "ctl", "a", 2*time.Second)
	require.NoError(t, err)
	bb, err := etcdstore.NewElector(b, "ctl", "b", 2*time.Second)
	require.NoError(t, err)

	actx, acancel := context.WithCancel(ctx)
	termA, fenceA, err := a.Campaign(actx)
	require.NoError(t, err)
	require.Equal(t, a.Key(), fenceA.Key)
	f, ok := store.FenceFrom(termA)
	require.True(t, ok, "the term context carries the fence")
	require.Equal(t, fenceA, f)

	// b cannot lead while a does.
	type won struct {
		term  context.Context
		fence store.Fence
		err   error
	}
	got := make(chan won, 1)
	bctx, bcancel := context.WithCancel(ctx)
	defer bcancel()
	go func() {
		term, fence, err := bb.Campaign(bctx)
		got <- won{term, fence, err}
	}()
	select {
	case <-got:
		t.Fatal("a second leader was elected while the first still leads")
	case <-time.After(3 * time.Second): // longer than the TTL: a renews
	}
	require.NoError(t, termA.Err(), "a renews its lease and keeps leading")

	// a writes fenced; then steps down and b takes over at once (the lease is
	// revoked, nobody waits out the TTL).
	_, err = b.Txn(ctx, []kv.Cond{kv.Cond{Key: fenceA.Key, Target: kv.CreateRevision, Revision: fenceA.Revision}}, kv.Write{Kind: kv.WritePut, Key: "x", Value: []byte("a")})
	require.NoError(t, err)
	stepDown := time.Now()
	acancel()
	a.Wait() // the lease is revoked before Wait returns
	w := <-got
	require.NoError(t, w.err)
	require.Less(t, time.Since(stepDown), time.Second)
	require.NotEqual(t, fenceA, w.fence)

	// a's stale fence is refused by etcd itself; b's passes.
	_, err = b.Txn(ctx, []kv.Cond{kv.Cond{Key: fenceA.Key, Target: kv.CreateRevision, Revision: fenceA.Revision}}, kv.Write{Kind: kv.WritePut, Key: "x", Value: []byte("stale")})
	require.ErrorIs(t, err, kv.ErrCondFailed)
	_, err = b.Txn(ctx, []kv.Cond{kv.Cond{Key: w.fence.Key, Target: kv.CreateRevision, Revision: w.fence.Revision}}, kv.Write{Kind: kv.WritePut, Key: "x", Value: []byte("b")})
	require.NoError(t, err)
	kvp, err := b.Get(ctx, "x")
	require.NoError(t, err)
	require.Equal(t, "b", string(kvp.Value))
}

func TestElectorTermEndsWhenEtcdIsGone(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	e, err := etcdstore.NewElector(b, "ctl", "a", 3*time.Second)
	require.NoError(t, err)
	term, _, err := e.Campaign(context.Background())
	require.NoError(t, err)

	c.kill(0) // a graceful Close; keep-alives may be answered until it returns
	lost := time.Now()
	select {
	case <-term.Done():
		// Keep-alives stop, so the leader stops within 2/3 of the TTL: before
		// etcd could have handed the key to anyone else.
		require.Less(t, time.Since(lost), 3*time.Second*2/3+500*time.Millisecond)
		require.ErrorIs(t, context.Cause(term), etcdstore.ErrTermEnded)
	case <-time.After(10 * time.Second):
		t.Fatal("term did not end after etcd went away")
	}
}

func TestNewElectorRejectsBadInput(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	for _, tc := range []struct {
		name, ident string
		ttl         time.Duration
		want        string
	}{
		{"", "a", 5 * time.Second, "empty election name"},
		{"n", "", 5 * time.Second, "empty identity"},
		{"n", "a", time.Second, "under the 2s minimum"},
	} {
		_, err := etcdstore.NewElector(b, tc.name, tc.ident, tc.ttl)
		require.ErrorContains(t, err, tc.want)
	}
	_, err := etcdstore.NewElector(nil, "n", "a", 5*time.Second)
	require.ErrorContains(t, err, "nil backend")
}
