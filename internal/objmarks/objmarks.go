// Package objmarks is what a reconcile Loop reads of an object before each
// reconcile: whether it is paused or observe-only, and where its Loop
// conditions stand. store/cache works the marks out once, when it stores an
// object, and keeps them beside the object in its map, so that the Loop's
// check before every reconcile reads a few bytes in the slot its lookup
// lands on instead of the object's metadata and conditions, scattered over
// the heap (BenchmarkLoopNoopResync100k, 100k objects).
//
// The Cache offers them to the project's packages alone, as a Reader
// through internal/storeaccess. Package reconcile documents what each mark
// does.
package objmarks

import "github.com/steady-go/steady/store"

// The annotations the Loop reads: set to "true", they pause the object's
// reconciles, or make its writes dry runs.
const (
	PausedAnnotation      = "steady.dev/paused"
	ObserveOnlyAnnotation = "steady.dev/observe-only"
)

// The condition types the Loop writes, as reconcile/conditions names them
// (Paused, Reconciling): this package is below it, and its test checks
// that they agree.
const (
	pausedCondition      = "Paused"
	reconcilingCondition = "Reconciling"
)

// Marks is what the Loop reads of an object before reconciling it. The
// zero value is an object without annotations or conditions.
type Marks struct {
	Paused         bool // PausedAnnotation is "true"
	PauseShown     bool // a Paused condition is True
	ObserveOnly    bool // ObserveOnlyAnnotation is "true"
	Reconciling    bool // a Reconciling condition is True
	HasReconciling bool // there is a Reconciling condition, True or not
	Observed       bool // some condition's ObservedGeneration is above 0
	Deleting       bool // the object's deletion is requested
}

// Of returns the marks of an object with metadata meta and conditions
// conds. When a condition type appears twice, the last one counts.
func Of(meta *store.Meta, conds []store.Condition) Marks {
	m := Marks{
		Paused:      meta.Annotations[PausedAnnotation] == "true",
		ObserveOnly: meta.Annotations[ObserveOnlyAnnotation] == "true",
		Deleting:    meta.DeletionRequested,
	}
	for i := range conds {
		c := &conds[i]
		m.Observed = m.Observed || c.ObservedGeneration > 0
		switch c.Type {
		case pausedCondition:
			m.PauseShown = c.Status == store.ConditionTrue
		case reconcilingCondition:
			m.HasReconciling, m.Reconciling = true, c.Status == store.ConditionTrue
		}
	}
	return m
}

// Reader is what a store/cache.Cache carries for internal/storeaccess.Of:
// the marks of the object it holds under name, as of when it stored it;
// ok is false when it holds none.
type Reader interface {
	Marks(name string) (m Marks, ok bool)
}
