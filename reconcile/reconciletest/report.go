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
	// leadership-loss, competing-write, time-travel.
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
	// Violations are the checks that failed, empty for a passing
	// schedule, each as "harm: what happened"; Harms holds the harm of
	// each, in the same order.
	Violations []string
	Harms      []Harm
	// Notes are what faults made the controller do that is no harm: work
	// from a stale view that it repaired itself (a child created for an
	// owner already gone, then deleted again). They never fail a schedule.
	Notes []string
	// FailingStep is the index in Trace of the step the first violation
	// points at (the write that broke a rule, or the last step that
	// touched the object that did not converge); -1 for a passing
	// schedule. Subject is what that violation is about (an object's name
	// or a key), "" if nothing in particular.
	FailingStep int
	Subject     string
	// Trace is every decision of the scheduler and what came of it,
	// stamped with virtual time: each write with its outcome (the
	// revision, or the error: a failed precondition, an injected fault),
	// each write of the test and of competing writers, each delivery and
	// fault. A replay of Seed reproduces it exactly. TraceHash is its
	// FNV-64a hash.
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
	if r.Deletions > 0 {
		fmt.Fprintf(&b, ", %d deletions by the test", r.Deletions)
	}
	if r.LostUpdates > 0 {
		fmt.Fprintf(&b, ", %d lost updates", r.LostUpdates)
	}
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
	for _, n := range r.Notes {
		b.WriteString("\n  note: ")
		b.WriteString(n)
	}
	return b.String()
}

// Explain is the failure message of a failed schedule: the failing step
// first, with the violations (each naming its harm), then the command that
// replays the schedule (replay), then the steps that touched the subject,
// the 40 steps up to the failing one and the 10 after it, and the summary.
func (r *Report) Explain(replay string) string {
	var b strings.Builder
	step := "(none)"
	if r.FailingStep >= 0 && r.FailingStep < len(r.Trace) {
		step = r.Trace[r.FailingStep]
	}
	fmt.Fprintf(&b, "reconciletest: schedule failed at step %d of %d: %s\n", r.FailingStep+1, len(r.Trace), step)
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "  violation: %s\n", v)
	}
	fmt.Fprintf(&b, "replay: %s\n", replay)
	if r.Subject != "" {
		var about []string
		for i, l := range r.Trace {
			if mentions(l, r.Subject) || strings.Contains(l, "fault ") && !strings.Contains(l, "fault delay") || strings.Contains(l, "crash") {
				about = append(about, fmt.Sprintf("%4d %s", i+1, l))
			}
		}
		if len(about) > 60 {
			about = about[len(about)-60:]
		}
		fmt.Fprintf(&b, "steps about %s (and faults), up to the end:\n  %s\n", r.Subject, strings.Join(about, "\n  "))
	}
	end := len(r.Trace)
	if r.FailingStep >= 0 {
		end = r.FailingStep + 1
	}
	start, stop := max(0, end-40), min(len(r.Trace), end+10)
	var around []string
	for i := start; i < stop; i++ {
		mark := " "
		if i == end-1 {
			mark = ">"
		}
		around = append(around, fmt.Sprintf("%s%4d %s", mark, i+1, r.Trace[i]))
	}
	fmt.Fprintf(&b, "the steps around the failing one (marked >):\n  %s\n", strings.Join(around, "\n  "))
	b.WriteString(r.String())
	return b.String()
}
