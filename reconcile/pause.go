package reconcile

import (
	"log/slog"

	history "github.com/steady-go/steady/events"
	"github.com/steady-go/steady/internal/objmarks"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// The annotation "steady.dev/paused", set to "true", pauses an object: the
// Loop does not call Reconcile for it (hints, resync and retries find it
// paused) and sets the condition Paused=True (reason "PausedByAnnotation")
// as its own manager instead, once. Removing the annotation, or any other
// value, resumes it: the change is a hint, the Loop sets Paused=False
// (reason "Resumed") and reconciles. Only "true" pauses, as crossplane's
// crossplane.io/paused. The Loop reads the annotation from the object its
// ConditionWriter knows (FromStore's reads its cache) before every reconcile.
const pausedAnnotation = objmarks.PausedAnnotation

// Reasons of the Paused condition.
const (
	reasonPaused  = "PausedByAnnotation"
	reasonResumed = "Resumed"
)

// objectMarks is what the Loop reads of an object before reconciling it:
// its marks (paused, observe-only, its Reconciling condition), which the
// cache worked out when it stored the object, a stamp of the read, and,
// read only when the Loop writes Reconciling=True or finds its own
// (reconcilingBefore), the object's generation then, for the messages of
// Reconciling.
type objectMarks struct {
	objmarks.Marks
	// at stamps the read: whether the object was new then
	// (markReader.wasFresh) is asked only after a reconcile that did not
	// succeed.
	at uint64
	// quiet: the object asks nothing of the Loop before a reconcile
	// (objmarks.Marks.Quiet), or there is none; Marks is then zero.
	quiet bool
	gen   int64
}

// markReader is the narrow, optional side of a ConditionWriter through which
// the Loop reads an object's marks: a ConditionWriter offers it through
// an objectMarker method (StoreConditions does), so that the call before
// every reconcile goes straight to a pointer (cacheMarks), not through
// the wrapper of a ConditionWriter held by value.
type markReader[K comparable] interface {
	// marks reads key's marks alone (gen stays 0): it is called before
	// every reconcile, and reads no more than it needs.
	marks(key K) objectMarks
	// wasFresh reports whether key's object was new (present, never
	// observed: objmarks.Marks.Fresh) when marks returned the stamp at,
	// whatever it is now (objmarks.Reader.WasFresh). It takes at, not the
	// objectMarks: a pointer into process's pass through an interface call
	// would move the pass to the heap.
	wasFresh(key K, at uint64) bool
	// about returns what an event on key's object names it by; ok is
	// false when the object is gone.
	about(key K) (kind, name, uid string, ok bool)
	// counts returns the counters marks reads (objmarks.Counts), which
	// the Loop reads itself before each reconcile (Loop.quietMarks); nil
	// for none.
	counts() *objmarks.Counts
}

// objectMarker is implemented by a ConditionWriter that offers its
// objects' marks.
type objectMarker[K comparable] interface {
	objectMarker() markReader[K]
}

// cacheMarks is StoreConditions' markReader.
type cacheMarks[S, T any] struct {
	c  *cache.Cache[S, T]
	st *store.Store[S, T]
	// mr reads the marks c keeps of its objects (internal/objmarks),
	// which it asks c to keep; nil for a nil c.
	mr objmarks.Reader
}

func (s storeConditions[S, T]) objectMarker() markReader[string] {
	if s.mk == nil { // not made by newStoreConditions
		return nil
	}
	return s.mk
}

func (s *cacheMarks[S, T]) marks(name string) objectMarks {
	if s.mr == nil {
		return objectMarks{quiet: true}
	}
	m, loud, at := s.mr.Marks(name)
	return objectMarks{Marks: m, at: at, quiet: !loud}
}

func (s *cacheMarks[S, T]) counts() *objmarks.Counts {
	if s.mr == nil {
		return nil
	}
	return s.mr.Counts()
}

func (s *cacheMarks[S, T]) wasFresh(name string, at uint64) bool {
	return s.mr != nil && s.mr.WasFresh(name, at)
}

func (s *cacheMarks[S, T]) about(name string) (kind, _, uid string, ok bool) {
	obj, ok := s.c.Get(name)
	if !ok {
		return "", "", "", false
	}
	return s.st.Kind(), name, obj.Meta.UID, true
}

// skip reads key's marks into m and reports whether the reconcile must
// not run (the object is paused). Only for a ConditionWriter that offers
// marks (l.marks); m is quiet when the object is gone.
func (l *Loop[K]) skip(t *term[K], key K, m *objectMarks) bool {
	*m = l.marks.marks(key)
	return l.paused(t, key, m)
}

// paused reports whether key's object is paused, and keeps its Paused
// condition in step: set when it is paused and does not say so, cleared
// (Paused=False) when it is not paused and still says so. The Loop
// writes Paused as its own manager, through the ConditionWriter, so the write
// is not a hint for itself.
func (l *Loop[K]) paused(t *term[K], key K, m *objectMarks) bool {
	if m.Paused == m.PauseShown {
		return m.Paused
	}
	c := store.Condition{Type: conditions.Paused, Status: store.ConditionTrue, Reason: reasonPaused,
		Message: "reconciles paused by the annotation " + pausedAnnotation + "=true; remove it to resume"}
	if !m.Paused {
		c = store.Condition{Type: conditions.Paused, Status: store.ConditionFalse, Reason: reasonResumed,
			Message: "the annotation " + pausedAnnotation + " was removed"}
	}
	c.LastTransitionTime = l.clk.Now()
	if _, gen, ok := l.sw.Conditions(key); ok {
		c.ObservedGeneration = gen
	}
	err := l.sw.WriteCondition(l.observeCtx(t.work, key, m), key, l.cfg.loopManager, c)
	switch {
	case err != nil && t.work.Err() == nil:
		l.log.LogAttrs(t.work, slog.LevelError, "writing Paused failed", slog.String("controller", l.name),
			keyAttr(key), slog.Any("error", err))
	case err == nil:
		l.log.LogAttrs(t.work, slog.LevelInfo, "Paused set to "+string(c.Status)+" ("+c.Reason+")",
			slog.String("controller", l.name), keyAttr(key))
		reason := "Resumed"
		if m.Paused {
			reason = "Paused"
		}
		l.recordEvent(key, "", history.Normal, reason, c.Message)
	}
	return m.Paused
}
