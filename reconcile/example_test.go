package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

func ExampleBlocked() {
	errNoSecret := errors.New(`secret "db" not found`)
	r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
		return reconcile.Result{}, reconcile.Blocked("SecretMissing", errNoSecret)
	})
	_, err := r.Reconcile(context.Background(), "app")
	fmt.Println(errors.Is(err, reconcile.ErrBlocked), reconcile.BlockedReason(err), errors.Is(err, errNoSecret))
	// Output: true SecretMissing true
}

func ExampleLoop() {
	ctx, cancel := context.WithCancel(context.Background())
	r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
		fmt.Println("reconciling", key)
		if key == "world" {
			cancel() // stop after the last key
		}
		return reconcile.Result{}, nil
	})
	keys := reconcile.Keys(func() iter.Seq[string] { return slices.Values([]string{"hello", "world"}) })
	loop, err := reconcile.New("greeter", r, keys)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("stopped:", loop.Run(ctx))
	// Output:
	// reconciling hello
	// reconciling world
	// stopped: <nil>
}

// A Loop's keys can come from several sources: here a fixed list, listed at
// the start of each term and on every resync, and a channel of hints.
func ExampleSources() {
	ctx, cancel := context.WithCancel(context.Background())
	hints := make(chan string, 1)
	r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
		fmt.Println("reconciling", key)
		switch key {
		case "listed":
			hints <- "hinted" // something changed: a hint for another key
		case "hinted":
			cancel()
		}
		return reconcile.Result{}, nil
	})
	listed := reconcile.Keys(func() iter.Seq[string] { return slices.Values([]string{"listed"}) })
	loop, err := reconcile.New("example", r, reconcile.Sources(listed, reconcile.FromChannel(hints)))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("stopped:", loop.Run(ctx))
	// Output:
	// reconciling listed
	// reconciling hinted
	// stopped: <nil>
}

func ExampleNew_badOption() {
	r := reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) { return reconcile.Result{}, nil })
	_, err := reconcile.New("app", r, nil, reconcile.WithWorkers(0))
	fmt.Println(err)
	// Output: loop app: reconcile: invalid option: workers must be at least 1, got 0
}

// A Loop over a store: the cache feeds it hints and resync, and the Loop
// writes Stalled on objects that cannot be reconciled.
func ExampleFromStore() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, _ := store.New[struct{}, struct{}](memstore.New(), "App")
	cache := cache.New[struct{}, struct{}](st)
	cacheDone := make(chan struct{})
	go func() { cache.Run(ctx); close(cacheDone) }()
	defer func() { cancel(); <-cacheDone }()
	st.As("user").Create(ctx, &store.Object[struct{}, struct{}]{Meta: store.Meta{Name: "web"}})

	stalled := make(chan struct{})
	var once sync.Once
	cache.AddHandler(func(_, obj *store.Object[struct{}, struct{}]) {
		if obj != nil && conditions.IsTrue(obj.Conditions, conditions.Stalled) {
			once.Do(func() { close(stalled) })
		}
	})

	r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
		return reconcile.Result{}, reconcile.Blocked("SecretMissing", errors.New(`secret "db" not found`))
	})
	loop, _ := reconcile.New("app", r, reconcile.FromStore(cache, st))
	done := make(chan error)
	go func() { done <- loop.Run(ctx) }()
	<-stalled
	cancel()
	<-done

	obj, _ := st.Get(context.Background(), "web")
	c, _ := conditions.Get(obj.Conditions, conditions.Stalled)
	fmt.Println(c.Type, c.Status, c.Reason, obj.Meta.LastWrite.Manager)
	fmt.Println(c.Message)
	// Output:
	// Stalled True SecretMissing app-loop
	// app: secret "db" not found
}
