package etcdstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/etcdstore"
	"github.com/steady-go/steady/store/kv"
)

// TestCallsWithoutQuorumEndUnavailable: with two of three members gone, the
// survivor cannot serve a linearizable read or commit a write, and the etcd
// client retries such a call for as long as its ctx allows. Every call of
// the Backend is bounded by its call timeout even when the caller's ctx has
// no deadline, and ends with store.ErrUnavailable, not blocked for ever.
func TestCallsWithoutQuorumEndUnavailable(t *testing.T) {
	c := startCluster(t, 3)
	cli := c.client()
	const timeout = 500 * time.Millisecond
	b, err := etcdstore.New(cli, etcdstore.WithPrefix("/"+t.Name()+"/"), etcdstore.WithCallTimeout(timeout))
	require.NoError(t, err)
	put(t, b, "k", "v")
	survivor := c.leader()
	for i := range c.members {
		if i != survivor {
			c.kill(i)
		}
	}

	calls := map[string]func(ctx context.Context) error{
		"Get":  func(ctx context.Context) error { _, err := b.Get(ctx, "k"); return err },
		"List": func(ctx context.Context) error { _, err := b.List(ctx, "", kv.ListOptions{}); return err },
		"Txn": func(ctx context.Context) error {
			_, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("w")})
			return err
		},
	}
	for _, name := range []string{"Get", "List", "Txn"} {
		done := make(chan error, 1)
		go func() { done <- calls[name](context.Background()) }() // no deadline
		select {
		case err := <-done:
			require.ErrorIs(t, err, store.ErrUnavailable, "%s without quorum", name)
			require.ErrorContains(t, err, fmt.Sprint(timeout), "the error names the timeout")
		case <-time.After(30 * timeout): // a liveness guard, not a measurement
			t.Fatalf("%s without quorum still blocked after %v, with a call timeout of %v", name, 30*timeout, timeout)
		}
	}

	// A caller's deadline shorter than the call timeout is the caller's.
	ctx, cancel := context.WithTimeout(context.Background(), timeout/10)
	defer cancel()
	_, err = b.Get(ctx, "k")
	require.ErrorIs(t, err, context.DeadlineExceeded)
}
