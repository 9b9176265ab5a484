package debugpage_test

import (
	"context"
	"iter"
	"net/http"
	"slices"

	"github.com/steady-go/steady/debugpage"
	"github.com/steady-go/steady/reconcile"
)

// The page is an http.Handler: mount it on your own mux, under a prefix,
// next to your other debug endpoints.
func Example() {
	r := reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) { return reconcile.Result{}, nil })
	loop, err := reconcile.New("apps", r, reconcile.Keys(func() iter.Seq[string] { return slices.Values([]string{"a", "b"}) }))
	if err != nil {
		panic(err)
	}
	page := debugpage.New()
	if err := page.AddLoop(loop); err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/steady/", http.StripPrefix("/debug/steady", page))
	_ = mux // serve it: http.ListenAndServe(addr, mux), and run the Loop
}
