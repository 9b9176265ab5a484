package reconcile

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	history "github.com/steady-go/steady/events"
)

// How the Loop keeps its failure log readable at any number of failing
// keys: a key's first failure is a Warn line and its move to Stalled an
// Error line, at most linesPerInterval of each per summaryInterval (the
// rest are counted, and named by the summary); every retry is a Debug
// line; and, while keys fail, one Warn summary per interval gives how many
// fail, how many are Stalled, and the most common reasons.
const (
	summaryInterval  = time.Minute
	linesPerInterval = 10
	topReasons       = 3
	// maxReasons bounds the distinct reasons a summary counts; the rest
	// count as "other".
	maxReasons = 1000
	// conflictsLoud is the count of paced conflicts in a row of a key
	// from which they are logged at Warn: at it and at each doubling.
	conflictsLoud = 8
)

// noiseLog counts the failure lines of the current interval.
type noiseLog struct {
	first, firstDropped     atomic.Int64 // first failures logged, not logged
	stalled, stalledDropped atomic.Int64 // moves to Stalled logged, not logged
	failures                atomic.Int64 // failed reconciles
}

// allow takes one line of a budget.
func allow(n *atomic.Int64, dropped *atomic.Int64) bool {
	if n.Add(1) <= linesPerInterval {
		return true
	}
	dropped.Add(1)
	return false
}

// logFailure logs a failed reconcile: at Warn for a key's first failure
// (within the interval's budget), at Debug otherwise. A revision conflict
// is a retry, at Debug, until a key has conflicted conflictsLoud times in
// a row against what its caches show, and at each doubling of that count
// (at Warn, within the same budget).
func (l *Loop[K]) logFailure(ctx context.Context, rec *recorder, key K, failures int, d *decision, err error) {
	l.noise.failures.Add(1)
	if !d.conflict {
		l.noteFailure(rec, key, failures+1, err)
	}
	if failures == 0 && !d.conflict {
		l.recordEvent(key, rec.reconcileID(), history.Warning, "ReconcileFailed", errString(err))
	}
	lvl, msg := slog.LevelDebug, "reconcile failed"
	switch {
	case d.next == nextAfterStored:
		msg = "reconcile hit a write conflict with a newer stored object: runs again once the cache holds it"
	case d.conflict && d.requeues >= conflictsLoud && d.requeues&(d.requeues-1) == 0 && allow(&l.noise.first, &l.noise.firstDropped):
		lvl, msg = slog.LevelWarn, "reconcile keeps hitting write conflicts against what its cache shows: retrying with backoff (does it compute its preconditions from the cache it is hinted by?)"
	case d.conflict:
		msg = "reconcile hit a write conflict: retrying"
	case failures == 0 && allow(&l.noise.first, &l.noise.firstDropped):
		lvl = slog.LevelWarn
	}
	if !l.log.Enabled(ctx, lvl) {
		return
	}
	if d.conflict {
		// attempt counts failures, which a conflict is not: say how many
		// conflicts in a row have been paced.
		l.log.LogAttrs(ctx, lvl, msg, slog.String("controller", l.name), keyAttr(key),
			slog.Int("conflictsInARow", d.requeues), slog.Duration("backoff", d.delay), slog.Any("error", err), rec.idAttr())
		return
	}
	l.log.LogAttrs(ctx, lvl, msg, slog.String("controller", l.name), keyAttr(key),
		slog.Int("attempt", failures+1), slog.Bool("terminal", d.terminal), slog.Duration("backoff", d.delay),
		slog.Any("error", err), rec.idAttr())
}

// logStalled logs a key's move to Stalled (or to another reason) at
// Error, within the interval's budget.
func (l *Loop[K]) logStalled(ctx context.Context, rec *recorder, key K, note stalledNote) {
	l.recordEvent(key, rec.reconcileID(), history.Warning, note.reason, note.message)
	if !allow(&l.noise.stalled, &l.noise.stalledDropped) {
		return
	}
	l.log.LogAttrs(ctx, slog.LevelError, "key is Stalled", slog.String("controller", l.name), keyAttr(key),
		slog.String("reason", note.reason), slog.String("message", note.message), rec.idAttr())
}

// summaryLoop logs the failure summary every summaryInterval until ctx
// ends.
func (l *Loop[K]) summaryLoop(ctx context.Context) {
	for l.sleep(ctx, summaryInterval) {
		l.summarize(ctx)
	}
}

// summarize logs one line, at Warn, when keys are failing: how many, how
// many are Stalled, how many failures the interval saw, how many first
// failures and Stalled moves were not logged, and the topReasons most
// common errors (with the key's text taken out, so that "dial a: refused"
// and "dial b: refused" are one reason). It starts the next interval's
// budgets.
func (l *Loop[K]) summarize(ctx context.Context) {
	n := &l.noise
	failures := n.failures.Swap(0)
	firstDropped, stalledDropped := n.firstDropped.Swap(0), n.stalledDropped.Swap(0)
	n.first.Store(0)
	n.stalled.Store(0)
	reasons := map[string]int{}
	failing, stalled := 0, 0
	l.mu.Lock()
	for k, s := range l.keys {
		if s.stalled != nil {
			stalled++
		}
		if s.failures == 0 || s.lastErr == nil {
			continue
		}
		failing++
		r := "other"
		if _, ok := reasons[r]; len(reasons) < maxReasons || ok {
			r = errString(s.lastErr)
			if ks := fmt.Sprint(k); ks != "" { // "" would be replaced between every two bytes
				r = strings.ReplaceAll(r, ks, "<key>")
			}
			if _, ok := reasons[r]; !ok && len(reasons) >= maxReasons {
				r = "other"
			}
		}
		reasons[r]++
	}
	l.mu.Unlock()
	if failing == 0 && stalled == 0 {
		return
	}
	type reason struct {
		text string
		n    int
	}
	top := make([]reason, 0, len(reasons))
	for r, c := range reasons {
		top = append(top, reason{r, c})
	}
	slices.SortFunc(top, func(a, b reason) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(a.text, b.text)
	})
	var b strings.Builder
	for i, r := range top[:min(len(top), topReasons)] {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%d× %s", r.n, r.text)
	}
	l.log.LogAttrs(ctx, slog.LevelWarn, fmt.Sprintf("%d keys failing, %d Stalled", failing, stalled),
		slog.String("controller", l.name), slog.Int("failing", failing), slog.Int("stalled", stalled),
		slog.Int64("failures", failures), slog.String("topReasons", b.String()),
		slog.Int64("firstFailuresNotLogged", firstDropped), slog.Int64("stalledNotLogged", stalledDropped),
		slog.Duration("interval", summaryInterval))
}
