package pgstore_test

import (
	"context"
	"log"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/lease"
	"github.com/steady-go/steady/store/pgstore"
)

type (
	AppSpec   struct{ Image string }
	AppStatus struct{ Ready bool }
)

// A controller replica on PostgreSQL: its objects live in the schema
// "my_platform", its cache follows them with a watch, and its Loop works
// only while this replica leads. Run the same program twice with different
// identities for an active and a standby. The log keeps the last 10,000
// writes (pgstore.WithHistorySize) for watches that resume. (Compiled, not run: it needs a
// server; the package's tests run the same pieces against one.)
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://steady@127.0.0.1:5432/steady")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close() // after the Loop and the cache have stopped

	b, err := pgstore.New(ctx, pool, pgstore.WithSchema("my_platform"))
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close() // ends its watches, before the pool closes
	apps, err := store.New[AppSpec, AppStatus](b, "App")
	if err != nil {
		log.Fatal(err)
	}
	appCache := cache.New(apps)
	go appCache.Run(ctx)

	elector, err := lease.New(b, "_leases/app-controller", "replica-a")
	if err != nil {
		log.Fatal(err)
	}
	r := reconcile.Func[string](func(ctx context.Context, name string) (reconcile.Result, error) {
		// ctx carries the term's fence: a write made after this replica
		// lost leadership fails with store.ErrFenced, in the same
		// PostgreSQL transaction that would have written it.
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
