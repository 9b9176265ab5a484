package storetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

var inputTests = []test{
	{"Invalid", func(t *testing.T, b kv.Backend) {
		ctx := t.Context()
		last := put(t, b, "k", "v")
		for name, w := range map[string]kv.Write{
			"empty key":    {Kind: kv.WritePut, Key: "", Value: []byte("v")},
			"no kind":      {Key: "k", Value: []byte("v")},
			"unknown kind": {Kind: 99, Key: "k"},
		} {
			_, err := b.Txn(ctx, nil, w)
			require.ErrorIs(t, err, store.ErrInvalid, name)
		}
		for name, c := range map[string]kv.Cond{
			"cond with empty key":       {Key: "", Target: kv.ModRevision},
			"cond with unknown target":  {Key: "k", Target: 99},
			"cond on negative revision": {Key: "k", Target: kv.ModRevision, Revision: -1},
		} {
			_, err := b.Txn(ctx, []kv.Cond{c}, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("v")})
			require.ErrorIs(t, err, store.ErrInvalid, name)
		}
		_, err := b.List(ctx, "", kv.ListOptions{Limit: -1})
		require.ErrorIs(t, err, store.ErrInvalid, "negative limit")
		_, err = b.List(ctx, "", kv.ListOptions{Revision: -1})
		require.ErrorIs(t, err, store.ErrInvalid, "negative revision")
		_, err = b.Watch(ctx, "", -1)
		require.ErrorIs(t, err, store.ErrInvalid, "negative watch revision")
		_, err = b.Get(ctx, "")
		require.ErrorIs(t, err, store.ErrInvalid, "Get of an empty key")
		requireNextRevision(t, b, last)
	}},
	{"CancelledContext", func(t *testing.T, b kv.Backend) {
		last := put(t, b, "k", "v")
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := b.Get(ctx, "k")
		require.ErrorIs(t, err, context.Canceled, "Get")
		_, err = b.List(ctx, "", kv.ListOptions{})
		require.ErrorIs(t, err, context.Canceled, "List")
		_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("w")})
		require.ErrorIs(t, err, context.Canceled, "Txn")
		_, err = b.Watch(ctx, "", last)
		require.ErrorIs(t, err, context.Canceled, "Watch")
		require.Equal(t, "v", string(get(t, b, "k").Value), "a cancelled Txn writes nothing")
		requireNextRevision(t, b, last)
	}},
}
