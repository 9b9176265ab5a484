package etcdstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// A closed etcd client is store.ErrClosed (kv.Backend: "calls after Close
// ... return an error wrapping ErrClosed"): every call fails with it, not
// with the ErrUnavailable of a write that may have committed, and a running
// watch ends with an event wrapping it, not ErrExpired, which would send
// its reader to relist on a client that is gone. Before, calls gave gRPC's
// Canceled wrapping no sentinel, and the watch ended with ErrExpired.
func TestClosedClientIsErrClosed(t *testing.T) {
	c := startCluster(t, 1)
	cli := c.client()
	b := newBackendOn(t, cli)
	ctx := context.Background()
	rev := put(t, b, "w/1", "v")
	ch, err := b.Watch(ctx, "w/", rev)
	require.NoError(t, err)
	require.NoError(t, cli.Close())

	timeout := time.After(10 * time.Second)
	var last kv.Event
	for open := true; open; {
		select {
		case ev, ok := <-ch:
			if ok {
				last = ev
			}
			open = ok
		case <-timeout:
			t.Fatal("the watch did not end after its client closed")
		}
	}
	require.ErrorIs(t, last.Err, store.ErrClosed, "the watch's last event")
	require.False(t, errors.Is(last.Err, store.ErrExpired), "not a history to relist")

	_, err = b.Get(ctx, "w/1")
	require.ErrorIs(t, err, store.ErrClosed, "Get")
	require.False(t, errors.Is(err, store.ErrUnavailable), "Get")
	_, err = b.List(ctx, "w/", kv.ListOptions{})
	require.ErrorIs(t, err, store.ErrClosed, "List")
	_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "w/2", Value: []byte("v")})
	require.ErrorIs(t, err, store.ErrClosed, "Txn")
	require.False(t, errors.Is(err, store.ErrUnavailable), "Txn: nothing was sent, nothing can have committed")
	require.ErrorIs(t, b.Compact(ctx, rev), store.ErrClosed, "Compact")
	_, err = b.Watch(ctx, "w/", rev)
	require.ErrorIs(t, err, store.ErrClosed, "Watch")
}
