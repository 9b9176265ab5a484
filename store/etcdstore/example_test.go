package etcdstore_test

import (
	"context"
	"log"
	"time"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/etcdstore"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A controller replica on an etcd cluster: its objects live under a prefix,
// and its Loop works only while this replica leads. Run the same program on
// two machines with different identities for an active and a standby.
// (Compiled, not run: it needs a live etcd cluster.)
func Example() {
	ctx := context.Background()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:2379"}, DialTimeout: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()

	b, err := etcdstore.New(cli, etcdstore.WithPrefix("/my-platform/"))
	if err != nil {
		log.Fatal(err)
	}
	apps, err := store.New[GroupSpec, GroupStatus](b, "App")
	if err != nil {
		log.Fatal(err)
	}
	appCache := cache.New(apps)
	go appCache.Run(ctx)

	elector, err := etcdstore.NewElector(b, "app-controller", "replica-a", 15*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer elector.Wait() // let the lease revoke land before the client closes

	r := reconcile.Func[string](func(ctx context.Context, name string) (reconcile.Result, error) {
		// ctx carries the term's fence: a write made after this replica
		// lost leadership is rejected by etcd with store.ErrFenced.
		return reconcile.Result{}, nil
	})
	loop, err := reconcile.New("apps", r, reconcile.FromStore(appCache, apps), reconcile.WithElector(elector))
	if err != nil {
		log.Fatal(err)
	}
	if err := loop.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
