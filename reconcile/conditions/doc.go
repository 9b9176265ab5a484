// Package conditions is the vocabulary of an object's conditions
// (store.Object.Conditions) as the reconcile Loop reads and writes them, and
// the helpers that change a condition list without writes that change
// nothing.
//
// The Loop owns Stalled (with the Reason* constants), Reconciling and
// Paused; Ready belongs to the user's reconciler, which sets it with Set:
//
//	changed, err := conditions.Set(&obj.Conditions, store.Condition{
//		Type: conditions.Ready, Status: store.ConditionTrue, Reason: "Available",
//		ObservedGeneration: obj.Meta.Generation,
//	}, now)
//	if err == nil && changed {
//		// write the status
//	}
//
// The helpers never write into the slice they are given: values from a
// cache are read-only, so Set and Remove replace the list instead.
package conditions
