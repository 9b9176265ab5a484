package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
)

func ExampleSetCondition() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var conds []store.Condition
	ready := store.Condition{Type: reconcile.Ready, Status: store.ConditionFalse, Reason: "Creating", ObservedGeneration: 1}
	changed, _ := reconcile.SetCondition(&conds, ready, t0)
	fmt.Println("first set:", changed)
	changed, _ = reconcile.SetCondition(&conds, ready, t0.Add(time.Minute))
	fmt.Println("same again:", changed)
	ready.Status, ready.Reason = store.ConditionTrue, "Available"
	changed, _ = reconcile.SetCondition(&conds, ready, t0.Add(time.Hour))
	c, _ := reconcile.GetCondition(conds, reconcile.Ready)
	fmt.Println("flipped:", changed, c.LastTransitionTime.Format(time.Kitchen), reconcile.IsTrue(conds, reconcile.Ready))
	// Output:
	// first set: true
	// same again: false
	// flipped: true 1:00AM true
}

func ExampleBlocked() {
	errNoSecret := errors.New(`secret "db" not found`)
	r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
		return reconcile.Result{}, reconcile.Blocked("SecretMissing", errNoSecret)
	})
	_, err := r.Reconcile(context.Background(), "app")
	var b *reconcile.BlockedError
	fmt.Println(errors.As(err, &b), b.Reason, errors.Is(err, errNoSecret))
	// Output: true SecretMissing true
}

func ExampleDetector() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := reconcile.NewDetector(reconcile.OscillationConfig{})
	for i := range 3 {
		at := t0.Add(time.Duration(i) * 10 * time.Second)
		// Another manager sets replicas, then this manager sets it back.
		d.Observe(reconcile.ObservedWrite{Time: at, Foreign: []string{".spec.replicas"}})
		for _, o := range d.Observe(reconcile.ObservedWrite{Time: at.Add(time.Second), Self: true, Owned: []string{".spec.replicas"}}) {
			fmt.Println(o.Kind, o.Message())
		}
	}
	// Output: Fight fight: re-set .spec.replicas 3 times within 1m0s after another manager changed it
}
