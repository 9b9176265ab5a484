package conditions_test

import (
	"fmt"
	"time"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

func ExampleSet() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var conds []store.Condition
	ready := store.Condition{Type: conditions.Ready, Status: store.ConditionFalse, Reason: "Creating", ObservedGeneration: 1}
	changed, _ := conditions.Set(&conds, ready, t0)
	fmt.Println("first set:", changed)
	changed, _ = conditions.Set(&conds, ready, t0.Add(time.Minute))
	fmt.Println("same again:", changed)
	ready.Status, ready.Reason = store.ConditionTrue, "Available"
	changed, _ = conditions.Set(&conds, ready, t0.Add(time.Hour))
	c, _ := conditions.Get(conds, conditions.Ready)
	fmt.Println("flipped:", changed, c.LastTransitionTime.Format(time.Kitchen), conditions.IsTrue(conds, conditions.Ready))
	// Output:
	// first set: true
	// same again: false
	// flipped: true 1:00AM true
}
