package reconcile

import (
	"context"
	"log/slog"

	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/internal/objmarks"
	"github.com/steady-go/steady/store"
)

// observeOnlyAnnotation, set to "true" on an object, makes the Loop
// reconcile that object observe-only, as WithObserveOnly does for every
// object.
const observeOnlyAnnotation = objmarks.ObserveOnlyAnnotation

// WithObserveOnly runs every reconcile observe-only (the annotation
// steady.dev/observe-only="true" does it for one object): each write the
// reconciler makes through a typed store with the reconcile's ctx, and
// each write of the Loop's own conditions (Stalled, Paused), is refused
// before it reaches the store and runs as a dry run instead (see
// store.DryRun): its reads, preconditions, fence and field-ownership merge
// happen, the backend's Txn does not. This is how to try a new version of
// a controller against production state: run it beside the one in charge,
// under another field manager, observe-only, and read what it would write.
// The Loop's Stalled is reported once per reason (the store never shows
// it, so it is not retried at every failure), and it writes no
// Reconciling.
//
// Each dry run's result goes to report, with the reconcile's ctx (report
// may be nil; it must be quick and safe for concurrent use; a report that
// panics is logged and skipped). Whatever report does, a result that would
// have written, or that failed (a field conflict, a stale precondition),
// is logged at Info as "observe-only: write refused" with the loop, key,
// reconcile ID, op, kind, name, manager and error (the Loop's own
// condition writes at Debug); a write that would change nothing is not
// logged. A reconcile sees its writes succeed (or fail as they would),
// but the store, the cache and so its next reads do not change: a
// reconciler that creates and then reads back sees no object.
//
// Writes that do not go through a typed store with the reconcile's ctx
// (your own API calls, a store written with another ctx) are not covered:
// guard those with your own flag.
func WithObserveOnly(report func(ctx context.Context, r store.DryRunResult)) Option {
	return optionFunc(func(c *config) error {
		c.observeOnly = true
		c.observeReport = report
		return nil
	})
}

// observeCtx returns ctx with every typed-store write made a dry run, when
// the Loop or key's object (m) is observe-only; ctx itself otherwise.
func (l *Loop[K]) observeCtx(ctx context.Context, key K, m *objectMarks) context.Context {
	if !l.cfg.dryRun(m) {
		return ctx
	}
	return store.WithDryRun(ctx, func(r store.DryRunResult) { l.refused(ctx, key, r) })
}

// dryRun reports whether writes for an object with marks m are dry runs.
func (c *config) dryRun(m *objectMarks) bool { return c.observeOnly || m.ObserveOnly }

// observing reports whether key's writes are dry runs (observe-only).
func (l *Loop[K]) observing(key K) bool {
	if l.cfg.observeOnly {
		return true
	}
	if l.marks == nil {
		return false
	}
	return l.marks.marks(key).ObserveOnly
}

// loopWriteCtx is observeCtx for the Loop's own condition writes on key,
// which read key's marks themselves.
func (l *Loop[K]) loopWriteCtx(ctx context.Context, key K) context.Context {
	var m objectMarks
	if l.marks != nil {
		m = l.marks.marks(key)
	}
	return l.observeCtx(l.shardFenced(ctx, key), key, &m)
}

// refused reports one refused write: to the user's report and, when it
// would have written or failed, to the log.
func (l *Loop[K]) refused(ctx context.Context, key K, r store.DryRunResult) {
	if f := l.cfg.observeReport; f != nil {
		if p := guard.Call(func() { f(ctx, r) }); p != nil {
			l.userPanic("observe-only report", p, keyAttr(key))
		}
	}
	if !r.Write && r.Err == nil {
		return
	}
	attrs := []slog.Attr{slog.String("controller", l.name), keyAttr(key)}
	if id := ReconcileID(ctx); id != "" {
		attrs = append(attrs, slog.String("reconcileID", id))
	}
	attrs = append(attrs, slog.String("op", r.Op), slog.String("kind", r.Kind), slog.String("name", r.Name), slog.String("manager", r.Manager))
	if r.Deleted {
		attrs = append(attrs, slog.Bool("delete", true))
	}
	if r.Err != nil {
		attrs = append(attrs, slog.Any("error", r.Err))
	}
	lvl := slog.LevelInfo
	if r.Manager == l.cfg.loopManager {
		// The Loop's own Stalled and Paused: bookkeeping, not what the
		// controller would write.
		lvl = slog.LevelDebug
	}
	l.log.LogAttrs(ctx, lvl, "observe-only: write refused", attrs...)
}
