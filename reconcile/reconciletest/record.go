package reconciletest

import (
	"fmt"
	"strings"
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

// violate records a violation that is about nothing in particular.
func (w *world) violate(h Harm, format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.violateLocked(h, "", fmt.Sprintf(format, args...))
}

// violateOn records a violation about subject (an object's name or a
// key): the step it points at is the last one of the trace that mentions
// subject.
func (w *world) violateOn(h Harm, subject, format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.violateLocked(h, subject, fmt.Sprintf(format, args...))
}

// violateLocked records a violation, as "harm: msg"; the first one also
// records the failing step: the last step that mentions subject, or the
// latest step.
func (w *world) violateLocked(h Harm, subject, msg string) {
	w.violations = append(w.violations, string(h)+": "+msg)
	w.harms = append(w.harms, h)
	if w.rep.FailingStep >= 0 {
		return
	}
	w.rep.FailingStep = len(w.rep.Trace) - 1
	w.rep.Subject = subject
	if subject == "" {
		return
	}
	for i := len(w.rep.Trace) - 1; i >= 0; i-- {
		if mentions(w.rep.Trace[i], subject) {
			w.rep.FailingStep = i
			return
		}
	}
}

// mentions reports whether a trace line names subject as a whole word
// (set1 is not mentioned by a line about set10).
func mentions(line, subject string) bool {
	for i := 0; ; {
		j := strings.Index(line[i:], subject)
		if j < 0 {
			return false
		}
		end := i + j + len(subject)
		if end == len(line) || !wordByte(line[end]) {
			if start := i + j; start == 0 || !wordByte(line[start-1]) {
				return true
			}
		}
		i = end
	}
}

func wordByte(b byte) bool {
	return b == '-' || b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// traceLocked records one decision, stamped with the virtual time since the
// schedule began. The trace is what a replay must reproduce.
func (w *world) traceLocked(format string, args ...any) {
	b := append(w.traceBuf[:0], time.Since(w.start).String()...)
	b = append(b, ' ')
	w.traceBuf = fmt.Appendf(b, format, args...)
	w.rep.Trace = append(w.rep.Trace, string(w.traceBuf))
}

// noteLocked records a note: something a fault made the controller do
// that is no harm (see Report.Notes).
func (w *world) noteLocked(format string, args ...any) {
	w.rep.Notes = append(w.rep.Notes, fmt.Sprintf(format, args...))
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
