package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
)

// convergence is one check of the whole fleet against the store.
type convergence struct {
	converged, total int
	// firstBad names the first group that has not converged, and why.
	firstBad string
}

// check compares, for every stored group, the fleet's instances with the
// group's spec (diff.Diff through groupDiff) and requires Ready=True at the
// group's current generation. It reads the store, not a cache: the answer
// must not depend on anything the controller holds.
func check(ctx context.Context, groups *store.Store[GroupSpec, GroupStatus], fleet *Fleet) (convergence, error) {
	list, err := groups.List(ctx, store.ListOptions{})
	if err != nil {
		return convergence{}, err
	}
	c := convergence{total: len(list.Items)}
	for _, g := range list.Items {
		why := ""
		if d := groupDiff(g, fleet.List(g.Meta.Name)); !d.Empty() {
			why = strings.ReplaceAll(d.String(), "\n", "; ")
		} else if ready, ok := reconcile.GetCondition(g.Conditions, reconcile.Ready); !ok || ready.Status != store.ConditionTrue {
			why = "fleet matches, but Ready is not True yet"
		} else if ready.ObservedGeneration != g.Meta.Generation {
			why = fmt.Sprintf("Ready is for generation %d, the spec is at %d", ready.ObservedGeneration, g.Meta.Generation)
		} else if g.Status.Running != g.Spec.Replicas {
			why = fmt.Sprintf("status says %d running, the fleet runs %d", g.Status.Running, g.Spec.Replicas)
		}
		if why == "" {
			c.converged++
			continue
		}
		if st, ok := reconcile.GetCondition(g.Conditions, reconcile.Stalled); ok && st.Status == store.ConditionTrue {
			why += fmt.Sprintf(" (Stalled: %s: %s)", st.Reason, st.Message)
		}
		if c.firstBad == "" {
			c.firstBad = g.Meta.Name + ": " + why
		}
	}
	return c, nil
}

// counts gathers what the summary and the progress line report.
type counts struct {
	fleet   fleetStats
	count   *counters
	metrics *reconcile.MemMetrics
	chaos   *chaos
	sup     *supervisor
}

// faults is the number of faults injected so far.
func (c counts) faults() int {
	f := c.fleet
	n := f.FailedCreates + f.Lost + f.Crashed + f.Strays + f.InterferenceRemoved + f.DroppedEvents
	if c.sup.lifetimes.Load() > 1 {
		n += int(c.sup.lifetimes.Load() - 1)
	}
	return n + int(c.chaos.imageChanges.Load()+c.chaos.statusOverwrites.Load())
}

// watch checks convergence every 100ms and prints progress until the fleet
// has converged after the faults stopped (nil) or o.duration has passed
// (an error naming what is still wrong).
func watch(ctx context.Context, o options, groups *store.Store[GroupSpec, GroupStatus], fleet *Fleet,
	chaosDone <-chan struct{}, out *printer, snapshot func() counts) error {
	deadline := time.NewTimer(o.duration)
	defer deadline.Stop()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("stopped before converging: %w", context.Cause(ctx))
		case <-t.C:
		case <-deadline.C:
			c, err := check(ctx, groups, fleet)
			if err != nil {
				return err
			}
			out.progress(c, snapshot(), true)
			return fmt.Errorf("not converged after %v: %d of %d groups match the store; first: %s",
				o.duration, c.converged, c.total, c.firstBad)
		}
		done := isClosed(chaosDone)
		c, err := check(ctx, groups, fleet)
		if err != nil {
			return err
		}
		s := snapshot()
		if done && c.converged == c.total {
			out.progress(c, s, true)
			out.summary(c, s)
			return nil
		}
		out.progress(c, s, false)
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// printer writes the progress line, notes and the summary. On a terminal
// the progress line is redrawn in place; elsewhere a plain line is printed
// every second.
type printer struct {
	w     io.Writer
	tty   bool
	start time.Time

	mu       sync.Mutex
	line     string // the progress line on screen (tty)
	lastLine time.Time
}

func newPrinter(w io.Writer) *printer {
	p := &printer{w: w}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *printer) elapsed() string { return fmt.Sprintf("%6.1fs", time.Since(p.start).Seconds()) }

// note prints an event on its own line, above the progress line.
func (p *printer) note(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.line != "" {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "%s  ! %s\n", p.elapsed(), fmt.Sprintf(format, args...))
	if p.tty && p.line != "" {
		fmt.Fprint(p.w, p.line)
	}
}

func (p *printer) progress(c convergence, s counts, final bool) {
	line := fmt.Sprintf("%s  converged %3d/%-3d  fleet writes %5d  status writes %4d  retries %4d  faults %4d",
		p.elapsed(), c.converged, c.total, s.count.fleetWrites.Load(), s.count.statusWrites.Load(),
		s.metrics.Errors(controllerName), s.faults())
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		p.line = line
		fmt.Fprint(p.w, "\r"+line+"\033[K")
		if final {
			fmt.Fprintln(p.w)
			p.line = ""
		}
		return
	}
	if final || time.Since(p.lastLine) >= time.Second {
		fmt.Fprintln(p.w, line)
		p.lastLine = time.Now()
	}
}

func (p *printer) summary(c convergence, s counts) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	f := s.fleet
	when := "no faults"
	if !s.chaos.stoppedAt.Equal(p.start) {
		when = fmt.Sprintf("the faults stopped at %.1fs", s.chaos.stoppedAt.Sub(p.start).Seconds())
	}
	fmt.Fprintf(p.w, "\nconverged: all %d groups match the store, %.1fs after the start (%s)\n",
		c.total, now.Sub(p.start).Seconds(), when)
	fmt.Fprintln(p.w, "  checked: each group's instances against its stored spec with diff.Diff (no difference),")
	fmt.Fprintln(p.w, "           Ready=True at the current generation, and a status that agrees with the fleet")
	fmt.Fprintf(p.w, "  faults injected: %d\n", s.faults())
	fmt.Fprintf(p.w, "    fleet: %d events dropped, %d creates failed, %d instances lost, %d failed after starting\n",
		f.DroppedEvents, f.FailedCreates, f.Lost, f.Crashed)
	if f.Undelivered > 0 {
		fmt.Fprintf(p.w, "    (and %d events went undelivered while the controller was down)\n", f.Undelivered)
	}
	switch crashes := s.sup.lifetimes.Load() - 1; crashes {
	case 0:
		fmt.Fprintln(p.w, "    controller: no crash")
	case 1:
		fmt.Fprintln(p.w, "    controller: crashed once mid-operation, and restarted with empty memory")
	default:
		fmt.Fprintf(p.w, "    controller: crashed %d times mid-operation, and restarted with empty memory\n", crashes)
	}
	fmt.Fprintf(p.w, "    other writers: %d image changes by ops, %d false statuses by a dashboard, %d stray and %d stopped instances\n",
		s.chaos.imageChanges.Load(), s.chaos.statusOverwrites.Load(), f.Strays, f.InterferenceRemoved)
	var stalls []string
	for _, r := range []string{reconcile.ReasonFailing, reconcile.ReasonOscillating, reconcile.ReasonBlocked, reconcile.ReasonTerminal} {
		if n := s.metrics.StalledCount(controllerName, r); n > 0 {
			stalls = append(stalls, fmt.Sprintf("%d %s", n, r))
		}
	}
	if len(stalls) > 0 {
		fmt.Fprintf(p.w, "  reported Stalled along the way (and recovered): %s\n", strings.Join(stalls, ", "))
	}
	fmt.Fprintf(p.w, "  work: %d reconciles, %d retries; %d fleet writes (%d creates, %d deletes), %d status writes\n",
		s.metrics.Reconciles(controllerName), s.metrics.Errors(controllerName), s.count.fleetWrites.Load(),
		f.Creates, f.Deletes, s.count.statusWrites.Load())
}
