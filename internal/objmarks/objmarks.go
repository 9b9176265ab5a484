// Package objmarks is what a reconcile Loop reads of an object before each
// reconcile: whether it is paused or observe-only, and where its Loop
// conditions stand. store/cache works the marks out once, when it stores an
// object, and keeps those that are not Quiet, by name: most objects are
// quiet (not paused, not observe-only, no Reconciling=True), so that the
// Loop's check before every reconcile reads a counter, or a small map,
// instead of the object's metadata and conditions, scattered over the heap
// (BenchmarkLoopNoopResync100k, 100k objects). With the marks it hands the
// Loop a stamp, by which the Loop asks the Cache, only after a reconcile
// that failed, whether the object was new (Fresh) when it read the marks:
// the reconcile itself may have made it not new.
//
// The Cache offers them to the project's packages alone, as a Reader
// through internal/storeaccess. Package reconcile documents what each mark
// does.
package objmarks

import (
	"sync/atomic"

	"github.com/steady-go/steady/store"
)

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
	m := Marks{Deleting: meta.DeletionRequested}
	if len(meta.Annotations) > 0 { // most objects have none: no map calls
		m.Paused = meta.Annotations[PausedAnnotation] == "true"
		m.ObserveOnly = meta.Annotations[ObserveOnlyAnnotation] == "true"
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

// Quiet reports whether m asks nothing of a Loop before a reconcile: the
// object is not paused and does not show Paused=True, is not observe-only,
// and has no Reconciling=True. Most objects are quiet, new ones included:
// whether an object is new (Fresh) matters only after a reconcile that
// failed, and the Loop asks it then (Reader.WasFresh).
func (m Marks) Quiet() bool {
	return !m.Paused && !m.PauseShown && !m.ObserveOnly && !m.Reconciling
}

// Fresh reports whether m's object was never observed: it has no
// Reconciling condition, no condition with an ObservedGeneration, and its
// deletion is not requested. The Loop sets Reconciling=True on such an
// object after a reconcile that did not succeed.
func (m Marks) Fresh() bool {
	return !m.HasReconciling && !m.Observed && !m.Deleting
}

// Reader is what a store/cache.Cache carries for internal/storeaccess.Of.
type Reader interface {
	// KeepMarks makes the Cache keep its objects' marks from now on (a
	// Cache no Loop reads keeps none).
	KeepMarks()
	// Marks returns the marks of the object held under name and true when
	// they are not quiet; zero and false when they are quiet, when no
	// object is held under name, and before KeepMarks. at stamps the read
	// for WasFresh. While no object is loud it reads two counters and
	// nothing else: no lock, no lookup of name.
	Marks(name string) (m Marks, loud bool, at uint64)
	// WasFresh reports whether the object held under name when Marks
	// returned at was Fresh (no object held is not fresh), whatever the
	// Cache holds now. The Cache keeps the last turns (an object held
	// under a name turned fresh, or stopped being fresh) in a bounded
	// record; when more turns than it keeps came after at, WasFresh
	// answers about the object held now, as if none of them were name's.
	WasFresh(name string, at uint64) bool
	// Counts returns the Cache's counters, which Marks reads: a Loop reads
	// them itself before each reconcile, and calls Marks only while some
	// object is loud.
	Counts() *Counts
}

// Counts are the two counters a Cache keeps for Readers: read without its
// lock, written under it.
type Counts struct {
	// Turns counts the turns the Cache recorded (objects that turned
	// fresh or stopped being fresh): Marks' at is its value.
	Turns atomic.Uint64
	// Loud is the number of objects held whose marks are loud.
	Loud atomic.Int64
}

// Quiet reports whether no object is loud and, if so, the stamp Marks
// would return with zero marks for any name: what a Loop reads before a
// reconcile while no object is paused, observe-only or Reconciling=True.
func (c *Counts) Quiet() (at uint64, quiet bool) {
	at = c.Turns.Load()
	return at, c.Loud.Load() == 0
}
