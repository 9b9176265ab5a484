package reconciletest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Report is what one schedule did and found.
type Report struct {
	// Seed is the schedule's seed: -seed=Seed replays it.
	Seed uint64
	// Steps is the number of scheduling decisions; Reconciles and Writes
	// count the reconciles started and the writes the store accepted.
	Steps, Reconciles, Writes int
	// DeadlineWrites is Writes when the convergence deadline passed.
	DeadlineWrites int
	// FencedWrites counts stale writes attempted: writes the store
	// rejected because their term was over. StaleWrites counts stale
	// writes accepted: writes without a fence made after their process's
	// term ended (each is also a violation).
	FencedWrites, StaleWrites int
	// Faults counts the faults injected, by kind: drop, duplicate, delay,
	// expire, conflict, unavailable, committed-but-timed-out, crash,
	// leadership-loss, competing-write.
	Faults map[string]int
	// FaultsStopped is when faults stopped, from the schedule's start.
	FaultsStopped time.Duration
	// Bound is the convergence bound: every object must have converged
	// within it once faults stopped.
	Bound time.Duration
	// ConvergedAfter is how long after faults stopped every object was
	// first seen converged (at a moment the controller was idle); 0 if
	// never.
	ConvergedAfter time.Duration
	// WriteBound is the most writes the harness allows one object.
	WriteBound map[string]int
	// ReconcileBound is the most reconciles a converged object may get
	// after the bound (one per resync, plus one).
	ReconcileBound int
	// Deletions counts the primary objects the test deleted.
	Deletions int
	// LostUpdates counts the reconciler's writes that undid another
	// manager's change to a field of a primary object (each is also a
	// violation).
	LostUpdates int
	// Reference is the report of the fault-free reference run of the same
	// seed whose children's histories this run was compared with; nil if
	// none was run.
	Reference *Report
	// Violations are the checks that failed, empty for a passing schedule.
	Violations []string
	// Trace is every decision of the scheduler, stamped with virtual time;
	// a replay of Seed reproduces it exactly. TraceHash is its FNV-64a hash.
	Trace     []string
	TraceHash uint64
}

// Failed reports whether any check failed.
func (r *Report) Failed() bool { return len(r.Violations) > 0 }

// String summarises the report: seed, counts, faults and violations.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %d steps, %d reconciles, %d writes (%d stale attempted and fenced off, %d stale accepted), faults stopped at %v, bound %v",
		r.Seed, r.Steps, r.Reconciles, r.Writes, r.FencedWrites, r.StaleWrites, r.FaultsStopped, r.Bound)
	if r.ConvergedAfter > 0 {
		fmt.Fprintf(&b, ", converged %v after", r.ConvergedAfter)
	}
	if len(r.Faults) > 0 {
		b.WriteString("\n  faults:")
		for _, k := range slices.Sorted(maps.Keys(r.Faults)) {
			fmt.Fprintf(&b, " %s=%d", k, r.Faults[k])
		}
	}
	for _, v := range r.Violations {
		b.WriteString("\n  violation: ")
		b.WriteString(v)
	}
	return b.String()
}

// tail returns the last n trace entries, for a failure message.
func (r *Report) tail(n int) string {
	t := r.Trace
	if len(t) > n {
		t = t[len(t)-n:]
	}
	return strings.Join(t, "\n  ")
}
