package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// convergence is one check of the whole fleet against the stored groups.
type convergence struct {
	converged, total int
	// firstBad names the first group, in name order, that has not
	// converged, and why.
	firstBad string
}

// check compares, for every group in list, the fleet's instances with the
// group's spec and requires Ready=True at the group's current generation and
// a status that agrees with the fleet. It stops early with ctx's error.
// Describing a difference runs diff.Diff (groupDiff), but only for the first
// group that has one: the rest only need a yes or no (Fleet.Matches, which
// copies nothing, so a converged group costs a check no allocation).
func check(ctx context.Context, list []*Group, fleet *Fleet) (convergence, error) {
	c := convergence{total: len(list)}
	for i, g := range list {
		if i%128 == 0 && ctx.Err() != nil {
			return c, context.Cause(ctx)
		}
		why := ""
		if !fleet.Matches(g) {
			why = "the fleet differs"
			if c.firstBad == "" {
				why = strings.ReplaceAll(groupDiff(g, fleet.List(g.Meta.Name)).String(), "\n", "; ")
			}
		} else if ready, ok := conditions.Get(g.Conditions, conditions.Ready); !ok || ready.Status != store.ConditionTrue {
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
		if c.firstBad != "" {
			continue
		}
		if st, ok := conditions.Get(g.Conditions, conditions.Stalled); ok && st.Status == store.ConditionTrue {
			why += fmt.Sprintf(" (Stalled: %s: %s)", st.Reason, st.Message)
		}
		c.firstBad = g.Meta.Name + ": " + why
	}
	return c, nil
}

// checkStore runs check on the groups as the store holds them now. It
// lists them in pages of one revision, so that it too stops soon after ctx
// ends: one List of 100,000 groups takes seconds.
func checkStore(ctx context.Context, groups *store.Store[GroupSpec, GroupStatus], fleet *Fleet) (convergence, error) {
	var all []*Group
	opts := store.ListOptions{Limit: 1000}
	for {
		if err := ctx.Err(); err != nil {
			return convergence{}, context.Cause(ctx)
		}
		page, err := groups.List(ctx, opts)
		if err != nil {
			return convergence{}, err
		}
		all = append(all, page.Items...)
		if page.Continue == "" {
			return check(ctx, all, fleet)
		}
		opts.Continue = page.Continue
	}
}

// counts gathers what the summary and the progress line report.
type counts struct {
	fleet   fleetStats
	count   *counters
	metrics *metrics
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

// watch judges convergence and prints progress until the fleet has converged
// after the faults stopped (nil) or o.duration has passed since start (an
// error naming the first group still wrong).
//
// The judge reads the groups from the controller's cache of this lifetime
// (view returns it, nil before the first), skipping checks while that is
// not synced (after a crash), rather than holding a second decoded copy
// of every group. It checks the whole fleet
// against it at most every 100ms, leaving at least nine times a check's own
// time between two checks so that judging never takes more than a tenth of
// the machine (judgePause). The controller's view is not the verdict: once every group
// matches after the faults stopped, the judge confirms it against the store
// itself. Every check stops when the deadline passes, so the deadline is
// kept to within a check of 128 groups.
func watch(ctx context.Context, o options, groups *store.Store[GroupSpec, GroupStatus], fleet *Fleet,
	view func() *cache.Cache[GroupSpec, GroupStatus], chaosDone <-chan struct{}, out *printer, snapshot func() counts) error {
	dctx, cancel := context.WithDeadlineCause(ctx, out.start.Add(o.duration), errDeadline)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	var last convergence // the last complete check
	lastDone := false    // whether the faults had stopped before it began
	fail := func(err error) error {
		if !errors.Is(err, errDeadline) {
			return fmt.Errorf("stopped before converging: %w", err)
		}
		out.progress(last, snapshot(), true)
		first := last.firstBad
		switch {
		case last.total == 0:
			first = "none checked yet (the controller's cache had not loaded the groups)"
		case first == "" && !lastDone:
			first = "none at the last check, but the faults had not stopped yet"
		case first == "":
			first = "none at the last check, but the check against the store did not finish"
		}
		return fmt.Errorf("not converged after %v: %d of %d groups matched at the last check; first unconverged: %s",
			o.duration, last.converged, last.total, first)
	}
	// Keep the progress line live while a check runs.
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-dctx.Done():
				return
			case <-tick.C:
				out.refresh(snapshot())
			}
		}
	})
	var names roster
	pause := judgePause(0)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-dctx.Done():
			return fail(context.Cause(dctx))
		case <-t.C:
		}
		judge := view()
		if judge == nil { // the controller is starting
			t.Reset(time.Millisecond)
			continue
		}
		if !judge.HasSynced() {
			// The controller is (re)starting; a cache that a crash ended
			// never syncs, so wait a while and look again.
			wctx, stop := context.WithTimeout(dctx, pause)
			_ = judge.WaitForSync(wctx)
			stop()
			if !judge.HasSynced() {
				t.Reset(0)
				continue
			}
		}
		done := isClosed(chaosDone)
		began := time.Now()
		c, err := check(dctx, names.groups(judge), fleet)
		names.done()
		if err != nil {
			return fail(err)
		}
		last, lastDone = c, done
		if done && c.converged == c.total {
			if c, err = checkStore(dctx, groups, fleet); err != nil {
				return fail(err)
			}
			last = c
			if c.converged == c.total {
				out.progress(c, snapshot(), true)
				out.summary(c, snapshot())
				return nil
			}
		}
		out.progress(c, snapshot(), false)
		t.Reset(judgePause(time.Since(began)))
	}
}

// judgePause is how long the judge waits after a check that took took:
// 100ms, or nine times as long as the check, so that judging takes a tenth
// of the time at most. The judge is the demo's own overhead, not the
// controller's: at a third (a pause twice the check's time), it took 12%
// of the 100k demo's CPU and 13% of the 20k demo's. Convergence is seen
// one pause late at most.
func judgePause(took time.Duration) time.Duration { return max(100*time.Millisecond, 9*took) }

// errDeadline is the cause of the judge's context when -duration runs out.
var errDeadline = errors.New("deadline")

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
	rate     float64     // groups converging per second, smoothed
	rateFrom int         // converged count at rateAt
	rateAt   time.Time   // when the rate was last measured
	conv     convergence // the last check's figures
	final    bool        // the final line is out: no more refreshes
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
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	// The rate of groups converging, smoothed over the last seconds. Early
	// on the count also falls (faults, a crash), so the ETA is a guess.
	if dt := now.Sub(p.rateAt).Seconds(); p.rateAt.IsZero() || dt >= 0.5 {
		if !p.rateAt.IsZero() {
			inst := max(0, float64(c.converged-p.rateFrom)/dt)
			p.rate = 0.5*p.rate + 0.5*inst
		}
		p.rateFrom, p.rateAt = c.converged, now
	}
	p.conv = c
	p.draw(s, final)
	p.final = p.final || final
}

// refresh redraws the progress line with the last check's figures and
// fresh counters, so that the line stays live while a long check runs.
func (p *printer) refresh(s counts) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conv.total > 0 && !p.final {
		p.draw(s, false)
	}
}

func (p *printer) draw(s counts, final bool) {
	c := p.conv
	rate, eta := p.rate, "?"
	if c.converged == c.total {
		eta = "0s"
	} else if rate >= 1 {
		eta = time.Duration(float64(c.total-c.converged) / rate * float64(time.Second)).Round(time.Second).String()
	}
	w := len(strconv.Itoa(c.total))
	line := fmt.Sprintf("%s  converged %*d/%d  %6.0f/s  ETA %-5s  fleet writes %5d  status writes %4d  retries %4d  faults %4d",
		p.elapsed(), w, c.converged, c.total, rate, eta, s.count.fleetWrites.Load(), s.count.statusWrites.Load(),
		s.metrics.Errors(), s.faults())
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
	for _, r := range []string{conditions.ReasonFailing, conditions.ReasonOscillating, conditions.ReasonBlocked, conditions.ReasonTerminal} {
		if n := s.metrics.StalledCount(r); n > 0 {
			stalls = append(stalls, fmt.Sprintf("%d %s", n, r))
		}
	}
	if len(stalls) > 0 {
		fmt.Fprintf(p.w, "  reported Stalled along the way (and recovered): %s\n", strings.Join(stalls, ", "))
	}
	fmt.Fprintf(p.w, "  work: %d reconciles, %d retries; %d fleet writes (%d creates, %d deletes), %d status writes\n",
		s.metrics.Reconciles(), s.metrics.Errors(), s.count.fleetWrites.Load(),
		f.Creates, f.Deletes, s.count.statusWrites.Load())
}

// roster is the groups of the controller's cache in name order, as the
// judge's checks read them. It keeps their names from one check to the
// next, and the slice it returns them in: listing them from the cache at
// every check copied and sorted all of them (100,000 in the 100k demo),
// about half of the judge's time, for a set of names that seldom changes.
// It reads the names again when the cache is another one (the controller
// restarted), holds another number of groups, or lacks one of the names.
type roster struct {
	of    *cache.Cache[GroupSpec, GroupStatus]
	names []string
	list  []*Group // the current check's groups; done clears it
}

// groups returns the groups c holds, in name order, for one check, until
// done is called.
func (r *roster) groups(c *cache.Cache[GroupSpec, GroupStatus]) []*Group {
	for fresh := false; ; fresh = true {
		if fresh || c != r.of || len(r.names) != c.Len() {
			r.of, r.names = c, c.Keys()
		}
		r.list = r.list[:0]
		gone := false
		for _, name := range r.names {
			if g, ok := c.Get(name); ok {
				r.list = append(r.list, g)
			} else {
				gone = true
			}
		}
		// Names read just now that are gone already went meanwhile:
		// this check goes without them.
		if !gone || fresh {
			return r.list
		}
	}
}

// done lets go of the check's groups, which the cache may have replaced
// since, so that the roster does not keep them alive until the next check.
func (r *roster) done() { clear(r.list) }
