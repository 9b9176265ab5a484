package etcdstore_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/etcdstore"
	"github.com/steady-go/steady/store/kv"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	os.Setenv(cache.MutationDetectorEnv, "1") // every Cache checks that nobody modifies what it serves
	goleak.VerifyTestMain(m,
		// Process-wide goroutines that etcd's server and gRPC start once and
		// never stop; they are not per-test leaks.
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
		goleak.IgnoreAnyFunction("go.etcd.io/etcd/pkg/v3/schedule.(*fifo).run"),
		goleak.IgnoreAnyFunction("github.com/golang/glog.(*fileSink).flushDaemon"),
	)
}

func newBackend(t *testing.T, c *cluster) *etcdstore.Backend {
	t.Helper()
	return newBackendOn(t, c.client())
}

func newBackendOn(t *testing.T, cli *clientv3.Client) *etcdstore.Backend {
	t.Helper()
	b, err := etcdstore.New(cli, etcdstore.WithPrefix("/"+t.Name()+"/"), etcdstore.WithProgressInterval(50*time.Millisecond))
	require.NoError(t, err)
	return b
}

func put(t *testing.T, b kv.Backend, key, val string) int64 {
	t.Helper()
	rev, err := b.Txn(context.Background(), nil, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(val)})
	require.NoError(t, err)
	return rev
}

func TestBackendBasics(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	ctx := context.Background()

	_, err := b.Get(ctx, "a")
	require.ErrorIs(t, err, store.ErrNotFound)

	r1 := put(t, b, "a", "1")
	kvp, err := b.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, kv.KeyValue{Key: "a", Value: []byte("1"), CreateRevision: r1, ModRevision: r1}, kvp)

	// A create cond on an existing key fails and names the cond.
	_, err = b.Txn(ctx, []kv.Cond{{Key: "a", Target: kv.CreateRevision}}, kv.Write{Kind: kv.WritePut, Key: "a", Value: []byte("2")})
	var cf *kv.CondFailedError
	require.ErrorAs(t, err, &cf)
	require.Equal(t, 0, cf.Index)
	require.Equal(t, r1, cf.Actual)
	require.ErrorIs(t, err, kv.ErrCondFailed)

	// An update cond on the right revision advances the revision by one.
	r2, err := b.Txn(ctx, []kv.Cond{{Key: "a", Target: kv.ModRevision, Revision: r1}}, kv.Write{Kind: kv.WritePut, Key: "a", Value: []byte("2")})
	require.NoError(t, err)
	require.Equal(t, r1+1, r2)

	// Deleting an absent key is ErrNotFound and writes nothing.
	_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: "nope"})
	require.ErrorIs(t, err, store.ErrNotFound)
	r3 := put(t, b, "b", "x")
	require.Equal(t, r2+1, r3)

	// Oversized values never reach etcd.
	_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "big", Value: make([]byte, kv.MaxValueSize+1)})
	require.ErrorIs(t, err, store.ErrTooLarge)
	_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "max", Value: make([]byte, kv.MaxValueSize)})
	require.NoError(t, err)
}

func TestListPaginatesAtOneRevision(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	ctx := context.Background()
	for i := range 25 {
		put(t, b, fmt.Sprintf("k/%02d", i), "v")
	}
	put(t, b, "other", "v")

	var got []string
	opts := kv.ListOptions{Limit: 10}
	first, err := b.List(ctx, "k/", opts)
	require.NoError(t, err)
	page := first
	for {
		for _, kvp := range page.KVs {
			got = append(got, kvp.Key)
		}
		if page.Continue == "" {
			break
		}
		// Writes between pages do not show up in this listing.
		put(t, b, "k/99-late", "v")
		page, err = b.List(ctx, "k/", kv.ListOptions{Limit: 10, Continue: page.Continue, Revision: first.Revision})
		require.NoError(t, err)
		require.Equal(t, first.Revision, page.Revision)
	}
	require.Len(t, got, 25)
	require.Equal(t, "k/00", got[0])
	require.Equal(t, "k/24", got[24])
}

func TestCompactionExpiresWatchAndList(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	ctx := context.Background()
	r1 := put(t, b, "a", "1")
	put(t, b, "a", "2")
	r3 := put(t, b, "a", "3")
	_, err := b.Client().Compact(ctx, r3)
	require.NoError(t, err)

	_, err = b.List(ctx, "", kv.ListOptions{Revision: r1})
	require.ErrorIs(t, err, store.ErrExpired)

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := b.Watch(wctx, "", r1)
	require.NoError(t, err)
	ev := <-ch
	require.ErrorIs(t, ev.Err, store.ErrExpired)
	_, open := <-ch
	require.False(t, open, "a failed watch closes its channel")
}

func TestWatchSurvivesMemberRestart(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := put(t, b, "seed", "0")
	ch, err := b.Watch(ctx, "k/", start)
	require.NoError(t, err)

	const n = 40
	for i := range n / 2 {
		put(t, b, fmt.Sprintf("k/%d", i), "v")
	}
	// Restart the only member on the same ports and data: the client's watch
	// reconnects and resumes from its last revision.
	c.members[0].Close()
	e, err := startMember(c.cfgs[0])
	require.NoError(t, err)
	c.members[0] = e
	for i := n / 2; i < n; i++ {
		require.Eventually(t, func() bool {
			_, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%d", i), Value: []byte("v")})
			return err == nil
		}, 20*time.Second, 20*time.Millisecond)
	}

	seen := map[string]int{}
	var last int64
	timeout := time.After(30 * time.Second)
	for len(seen) < n {
		select {
		case ev := <-ch:
			require.NoError(t, ev.Err)
			if ev.Progress {
				continue
			}
			require.Greater(t, ev.Revision, last, "events arrive in revision order")
			last = ev.Revision
			seen[ev.KV.Key]++
		case <-timeout:
			t.Fatalf("saw %d of %d events", len(seen), n)
		}
	}
	for k, v := range seen {
		require.Equal(t, 1, v, "event for %s delivered once", k)
	}
}

func TestWatchSendsProgressForOtherPrefixes(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := b.Watch(ctx, "quiet/", 0)
	require.NoError(t, err)
	rev := put(t, b, "busy/x", "1")
	for ev := range ch {
		require.NoError(t, ev.Err)
		require.True(t, ev.Progress)
		if ev.Revision >= rev {
			return
		}
	}
	t.Fatal("watch closed before a progress event reached the write's revision")
}

func TestNewRejectsBadInput(t *testing.T) {
	_, err := etcdstore.New(nil)
	require.ErrorContains(t, err, "nil etcd client")

	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:1"}})
	require.NoError(t, err)
	defer cli.Close()
	_, err = etcdstore.New(cli, etcdstore.WithProgressInterval(0))
	require.ErrorContains(t, err, "progress interval must be positive")
	_, err = etcdstore.New(cli, etcdstore.WithCallTimeout(0))
	require.ErrorContains(t, err, "call timeout must be positive")
	_, err = etcdstore.New(cli, nil, etcdstore.WithPrefix("/x/"), nil)
	require.NoError(t, err, "a nil option is skipped")
}
