package etcdstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/etcdstore"
)

// kv.Backend: a watch from 0 "replays every change from revision 1 on, or
// ends with ErrExpired when that history is gone". etcd's own watch from
// revision 0 starts from now; etcdstore's replays the cluster's history
// under its prefix: on a cluster never compacted, every write ever made
// there, another Backend's writes (outside the prefix) left out; once the
// cluster is compacted, ErrExpired. The storetest case Watch/FromZero runs
// on a shared cluster that earlier cases compact, so it usually sees the
// ErrExpired side alone.
func TestWatchFromZeroReplaysTheClustersHistory(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	other, err := etcdstore.New(c.client(), etcdstore.WithPrefix("/"+t.Name()+"-other/"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	r1 := put(t, b, "k/1", "a")
	put(t, other, "k/1", "elsewhere")
	r3 := put(t, b, "k/2", "b")
	ch, err := b.Watch(ctx, "k/", 0)
	require.NoError(t, err)
	r4 := put(t, b, "k/1", "c")
	for _, want := range []int64{r1, r3, r4} {
		require.Equal(t, want, bbNext(t, ch).Revision, "a watch from 0 replays from the first write, not from now")
	}

	require.NoError(t, b.Compact(ctx, r3))
	ch, err = b.Watch(ctx, "k/", 0)
	require.NoError(t, err)
	select {
	case ev := <-ch:
		require.ErrorIs(t, ev.Err, store.ErrExpired, "a watch from 0 on a compacted cluster: got %+v", ev)
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no event within 10s from a watch from 0 on a compacted cluster")
	}
}
