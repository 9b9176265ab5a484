package etcdstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/etcdstore"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestKeySpacesAreSeparated reproduces the key space overlaps found on a
// real etcd: a Backend prefix without its slash listing another Backend's
// keys ("/app" read "/app-staging/..."), and a Store of kind "leases" broken
// by the election key ("leases/" + name used to be its object).
func TestKeySpacesAreSeparated(t *testing.T) {
	c := startCluster(t, 1)
	cli := c.client()
	ctx := context.Background()
	root := "/" + t.Name()

	t.Run("BackendPrefixWithoutSlash", func(t *testing.T) {
		app, err := etcdstore.New(cli, etcdstore.WithPrefix(root+"/app"))
		require.NoError(t, err)
		staging, err := etcdstore.New(cli, etcdstore.WithPrefix(root+"/app-staging"))
		require.NoError(t, err)
		require.Equal(t, root+"/app/", app.Prefix())
		put(t, staging, "Widget/web", "staging")
		put(t, app, "Widget/web", "app")

		res, err := app.List(ctx, "", kv.ListOptions{})
		require.NoError(t, err)
		require.Len(t, res.KVs, 1, "the app Backend lists only its own key, not %q", "/app-staging/Widget/web")
		require.Equal(t, "app", string(res.KVs[0].Value))
	})

	t.Run("ElectionKeyOutsideObjectKeys", func(t *testing.T) {
		b, err := etcdstore.New(cli, etcdstore.WithPrefix(root+"/leases"), etcdstore.WithProgressInterval(50*time.Millisecond))
		require.NoError(t, err)
		leases, err := store.New[storetest.WidgetSpec, storetest.WidgetStatus](b, "leases")
		require.NoError(t, err)
		_, err = leases.As("alice").Create(ctx, &storetest.Widget{Meta: store.Meta{Name: "ctl"}})
		require.NoError(t, err)

		e, err := etcdstore.NewElector(b, "ctl", "a", 2*time.Second)
		require.NoError(t, err)
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		_, _, err = e.Campaign(cctx)
		require.NoError(t, err, "the Store's object ctl does not hold the election")
		defer func() { cancel(); e.Wait() }()
		_, err = b.Get(ctx, e.Key())
		require.NoError(t, err, "the election key exists while a leads")

		list, err := leases.List(ctx, store.ListOptions{})
		require.NoError(t, err, "the election key is not an object of kind leases")
		require.Len(t, list.Items, 1)
		obj, err := leases.Get(ctx, "ctl")
		require.NoError(t, err)
		require.Equal(t, "alice", obj.Meta.LastWrite.Manager, "the object ctl is the Store's, not the election key")
	})
}
