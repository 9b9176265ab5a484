package predicate_test

import (
	"fmt"

	"github.com/steady-go/steady/reconcile/predicate"
	"github.com/steady-go/steady/store"
)

// A Loop that reacts to spec changes and to the "paused" label only, as a
// controller-runtime user writes
// builder.WithPredicates(predicate.Or(GenerationChangedPredicate{}, ...)).
// Give it to a cache source: reconcile.FromStore(c, st,
// reconcile.WithPredicate(p)). Resync and relist repairs still reach every
// key whatever p says.
func Example() {
	paused := func(o *store.Object[spec, status]) bool { return o.Meta.Labels["paused"] == "true" }
	p := predicate.Or(
		predicate.GenerationChanged[spec, status](),
		predicate.And(predicate.LabelsChanged[spec, status](), predicate.Object(paused)),
	)
	old := &store.Object[spec, status]{Meta: store.Meta{Name: "a", Generation: 1}}
	statusOnly := &store.Object[spec, status]{Meta: store.Meta{Name: "a", Generation: 1}, Status: status{Ready: 1}}
	pausedNow := &store.Object[spec, status]{Meta: store.Meta{Name: "a", Generation: 1, Labels: map[string]string{"paused": "true"}}}
	scaled := &store.Object[spec, status]{Meta: store.Meta{Name: "a", Generation: 2}, Spec: spec{Replicas: 3}}
	fmt.Println("status only:", p(old, statusOnly))
	fmt.Println("paused:", p(old, pausedNow))
	fmt.Println("scaled:", p(old, scaled))
	fmt.Println("created:", p(nil, scaled))
	// Output:
	// status only: false
	// paused: true
	// scaled: true
	// created: true
}
