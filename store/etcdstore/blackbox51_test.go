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

// Black-box tests of the Backend's and the Elector's public API against
// their documentation: odd keys, prefixes, options, a watch from a future
// revision, campaigns that give up, odd election names.

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

// TestBlackbox51OddKeys: keys of any bytes are stored, read, listed by
// prefix (also one ending in 0xff, whose range end etcd computes) and
// watched; a watch from a revision above the current one delivers only
// the writes after it.
func TestBlackbox51OddKeys(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	ctx := context.Background()
	keys := []string{"p/\x00", "p/\x00\x00", "p/\xff", "p/\xff\xff", "p/a\x00b", "p/\xc3\x28"}
	for _, k := range keys {
		rev := put(t, b, k, k)
		got, err := b.Get(ctx, k)
		require.NoError(t, err)
		require.Equal(t, kv.KeyValue{Key: k, Value: []byte(k), CreateRevision: rev, ModRevision: rev}, got)
	}
	for prefix, n := range map[string]int{"p/": len(keys), "p/\x00": 2, "p/\xff": 2, "p/\xff\xff": 1} {
		l, err := b.List(ctx, prefix, kv.ListOptions{})
		require.NoError(t, err)
		require.Len(t, l.KVs, n, "prefix %q", prefix)
	}

	head := put(t, b, "p/x", "0")
	ch, err := b.Watch(ctx, "p/", head+2)
	require.NoError(t, err)
	put(t, b, "p/x", "1")
	put(t, b, "p/x", "2")
	want := put(t, b, "p/\xff", "3")
	ev := bbNext(t, ch)
	require.Equal(t, want, ev.Revision, "the first write after the watch's revision")
	require.Equal(t, "p/\xff", ev.KV.Key)
	require.Equal(t, "p/\xff", string(ev.Prev.Value))
}

// TestBlackbox51Prefixes: WithPrefix adds the trailing "/" it documents,
// so "/app" and "/app-staging" do not see each other's keys in Get, List
// or Watch; the empty prefix is the whole key space.
func TestBlackbox51Prefixes(t *testing.T) {
	c := startCluster(t, 1)
	cli := c.client()
	app, err := etcdstore.New(cli, etcdstore.WithPrefix("/app"), nil)
	require.NoError(t, err)
	require.Equal(t, "/app/", app.Prefix())
	staging, err := etcdstore.New(cli, etcdstore.WithPrefix("/app-staging"))
	require.NoError(t, err)
	all, err := etcdstore.New(cli, etcdstore.WithPrefix(""))
	require.NoError(t, err)
	ctx := context.Background()

	ch, err := app.Watch(ctx, "", 0)
	require.NoError(t, err)
	put(t, staging, "k", "staging")
	rev := put(t, app, "k", "app")
	ev := bbNext(t, ch)
	require.Equal(t, rev, ev.Revision, "the app's watch skips staging's write")
	require.Equal(t, "k", ev.KV.Key, "keys come back without the prefix")

	l, err := app.List(ctx, "", kv.ListOptions{})
	require.NoError(t, err)
	require.Len(t, l.KVs, 1)
	require.Equal(t, "app", string(l.KVs[0].Value))
	got, err := all.Get(ctx, "/app-staging/k")
	require.NoError(t, err)
	require.Equal(t, "staging", string(got.Value))
	l, err = all.List(ctx, "/app", kv.ListOptions{})
	require.NoError(t, err)
	require.Len(t, l.KVs, 2, "the empty prefix lists both")
}

// TestBlackbox51Options: New refuses a nil client and every option value
// its documentation calls out of range, with an error and no panic.
func TestBlackbox51Options(t *testing.T) {
	c := startCluster(t, 1)
	cli := c.client()
	for name, o := range map[string]etcdstore.Option{
		"zero call timeout":          etcdstore.WithCallTimeout(0),
		"negative call timeout":      etcdstore.WithCallTimeout(-time.Second),
		"zero watch events":          etcdstore.WithWatchLimits(0, 1),
		"negative watch bytes":       etcdstore.WithWatchLimits(1, -1),
		"zero progress interval":     etcdstore.WithProgressInterval(0),
		"negative progress interval": etcdstore.WithProgressInterval(-time.Second),
	} {
		_, err := etcdstore.New(cli, o)
		require.Error(t, err, name)
	}
	_, err := etcdstore.New(nil)
	require.Error(t, err, "a nil client")
}

// TestBlackbox51CampaignGivesUp: a candidate whose ctx ends while another
// leads returns the ctx's error at once, holds no term (Wait returns) and
// leaves the leader leading; the leader's Wait returns only after its
// term ended, and its fence is refused once a successor leads.
func TestBlackbox51CampaignGivesUp(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	a, err := etcdstore.NewElector(b, "ctl", "a", 2*time.Second)
	require.NoError(t, err)
	z, err := etcdstore.NewElector(b, "ctl", "z", 2*time.Second)
	require.NoError(t, err)
	z.Wait() // no term yet: returns at once

	actx, acancel := context.WithCancel(context.Background())
	defer acancel()
	termA, fenceA, err := a.Campaign(actx)
	require.NoError(t, err)

	zctx, zcancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer zcancel()
	_, _, err = z.Campaign(zctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	z.Wait()
	require.NoError(t, termA.Err(), "the leader leads on")
	got, err := b.Get(context.Background(), a.Key())
	require.NoError(t, err)
	require.Equal(t, "a", string(got.Value), "the election key holds the leader's identity")
	require.Equal(t, fenceA.Revision, got.CreateRevision, "the fence is the key's create revision")

	acancel()
	a.Wait()
	require.ErrorIs(t, termA.Err(), context.Canceled)
	_, err = b.Get(context.Background(), a.Key())
	require.ErrorIs(t, err, store.ErrNotFound, "the lease is revoked before Wait returns")
	zctx, zcancel = context.WithCancel(context.Background())
	defer zcancel()
	_, fenceZ, err := z.Campaign(zctx)
	require.NoError(t, err)
	require.Greater(t, fenceZ.Revision, fenceA.Revision)
	_, err = b.Txn(context.Background(), []kv.Cond{{Key: fenceA.Key, Target: kv.CreateRevision, Revision: fenceA.Revision}},
		kv.Write{Kind: kv.WritePut, Key: "x", Value: []byte("stale")})
	require.ErrorIs(t, err, kv.ErrCondFailed, "the deposed leader's fence")

	// A's Campaign again, once z resigns (lease.Elector: Campaign may be
	// called again after a term ends).
	zcancel()
	z.Wait()
	actx, acancel = context.WithCancel(context.Background())
	defer acancel()
	termA, fenceA2, err := a.Campaign(actx)
	require.NoError(t, err)
	require.Greater(t, fenceA2.Revision, fenceZ.Revision)
	require.NoError(t, termA.Err())
	acancel()
	a.Wait()
}

// TestBlackbox51ElectionNames: any name without "/" is an election of its
// own (spaces, NUL, non-UTF-8, ".."), Electors on Backends of different
// prefixes do not contend, and a name with "/" is refused.
func TestBlackbox51ElectionNames(t *testing.T) {
	c := startCluster(t, 1)
	cli := c.client()
	b1, err := etcdstore.New(cli, etcdstore.WithPrefix("/one"))
	require.NoError(t, err)
	b2, err := etcdstore.New(cli, etcdstore.WithPrefix("/two"))
	require.NoError(t, err)
	// Every term lives until the end: a campaign that contended with
	// another would run out of ctx's 10s instead.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	var electors []*etcdstore.Elector
	defer func() {
		cancel()
		for _, e := range electors {
			e.Wait()
		}
	}()
	for _, name := range []string{"a b", "x\x00y", "\xff", "..", "ctl"} {
		for _, b := range []*etcdstore.Backend{b1, b2} {
			e, err := etcdstore.NewElector(b, name, "me", 2*time.Second)
			require.NoError(t, err, "%q", name)
			electors = append(electors, e)
			_, fence, err := e.Campaign(ctx)
			require.NoError(t, err, "%q under %s: every election is its own", name, b.Prefix())
			require.Equal(t, etcdstore.ElectionKeyPrefix+name, fence.Key)
		}
	}
	_, err = etcdstore.NewElector(b1, "a/b", "me", 2*time.Second)
	require.Error(t, err, "a name with /")
}
