package manager_test

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/steady-go/steady/manager"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// A Manager runs two Loops over one shared cache: it syncs the cache first,
// then starts the Loops, and stops them before the cache.
func Example() {
	st, _ := store.New[struct{}, struct{}](memstore.New(), "App")
	_, _ = st.As("user").Create(context.Background(), &store.Object[struct{}, struct{}]{Meta: store.Meta{Name: "web"}})
	cache := cache.New[struct{}, struct{}](st)

	m := manager.New()
	_ = m.AddCache(cache)
	seen := make(chan string, 16)
	for _, name := range []string{"deployer", "auditor"} {
		r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
			seen <- name + " reconciled " + key
			return reconcile.Result{}, nil
		})
		loop, err := reconcile.New(name, r, reconcile.FromStore(cache, st), reconcile.WithElector(m.Elector()))
		if err != nil {
			fmt.Println(err)
			return
		}
		_ = m.AddLoop(loop)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()
	got := []string{<-seen, <-seen}
	slices.Sort(got) // the Loops run concurrently
	fmt.Println(got[0])
	fmt.Println(got[1])
	cancel()
	fmt.Println("stopped:", <-done)
	// Health checks: a stopped Manager is not ready, and nothing failed.
	fmt.Println("not ready:", errors.Is(m.Ready(), manager.ErrNotReady), "live:", m.Live())
	// Output:
	// auditor reconciled web
	// deployer reconciled web
	// stopped: <nil>
	// not ready: true live: <nil>
}
