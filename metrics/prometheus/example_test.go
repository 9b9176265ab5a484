package prometheus_test

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"slices"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	steadyprom "github.com/steady-go/steady/metrics/prometheus"
	"github.com/steady-go/steady/reconcile"
)

// Register steady's series on your registry, give the Metrics to every
// Loop, and serve the registry.
func Example() {
	reg := prom.NewRegistry()
	m, err := steadyprom.New(reg)
	if err != nil {
		panic(err)
	}
	r := reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) { return reconcile.Result{}, nil })
	loop, err := reconcile.New("apps", r, reconcile.Keys(func() iter.Seq[string] { return slices.Values([]string{"a"}) }),
		reconcile.WithMetrics(m))
	if err != nil {
		panic(err)
	}
	if err := m.AddLoop(loop); err != nil { // the scrape-time series
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	fams, _ := reg.Gather()
	fmt.Println(len(fams) > 0)
	// Output: true
}
