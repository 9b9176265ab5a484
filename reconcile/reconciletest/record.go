package reconciletest

import (
	"fmt"
	"time"
)

// objCounts counts, for one primary object, the writes that landed and the
// disturbances that may justify more of them.
type objCounts struct {
	reconciler, loop int // accepted writes by the reconciler and by the Loop (Stalled)
	afterBound       int // accepted writes once the bound passed, if converged then
	convergedAtBound bool
	// stale: a write touched the object since the idle-time convergence
	// check last looked; ok: what that check found.
	stale, ok bool
	disturbed int
	// After the bound: reconciles started, and those that returned an
	// error; goneReconciles counts those of the object while the test had
	// deleted it.
	afterReconciles, afterErrors, goneReconciles int
}

func (w *world) violate(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.violations = append(w.violations, fmt.Sprintf(format, args...))
}

// traceLocked records one decision, stamped with the virtual time since the
// schedule began. The trace is what a replay must reproduce.
func (w *world) traceLocked(format string, args ...any) {
	w.rep.Trace = append(w.rep.Trace, fmt.Sprintf("%v "+format, append([]any{time.Since(w.start)}, args...)...))
}

func (w *world) trace(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.traceLocked(format, args...)
}

func (w *world) fault(kind, format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rep.Faults[kind]++
	w.traceLocked("fault %s: "+format, append([]any{kind}, args...)...)
}

func (w *world) counts(name string) *objCounts {
	c := w.objWrites[name]
	if c == nil {
		c = &objCounts{stale: true}
		w.objWrites[name] = c
	}
	return c
}

// disturbLocked records a fault that may make the object called name need
// more writes; "" disturbs every object.
func (w *world) disturbLocked(name string) {
	if name != "" {
		w.counts(name).disturbed++
		return
	}
	for _, c := range w.objWrites {
		c.disturbed++
	}
}
