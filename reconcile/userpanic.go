package reconcile

import (
	"context"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/steady-go/steady/internal/electwait"
	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/internal/nilness"
	"github.com/steady-go/steady/metrics"
	"github.com/steady-go/steady/queue"
	"github.com/steady-go/steady/reconcile/oscillation"
)

// userPanic reports a panic of a function of the user's that the Loop
// called for its work, other than Reconcile and the metric hooks: a
// ChangeFunc, a mapper, a key lister, a status writer, a source. It is
// logged at Error with a bounded message and the stack, and counted as a
// reconcile panic. What happens to the key, if there is one, is the
// caller's: a retry with backoff or a hint, never a drop without a word.
func (l *Loop[K]) userPanic(what string, p *guard.Panic, attrs ...slog.Attr) {
	attrs = append(attrs, slog.String("controller", l.name), slog.String("panic", guard.Describe(p.Value, guard.MaxText)),
		slog.String("stack", string(p.Stack)))
	l.log.LogAttrs(context.Background(), slog.LevelError, what+" panicked", attrs...)
	l.metrics.ReconcilePanic(l.name)
}

// guardedWaiter runs a source's revisionWaiter methods under recovery: a
// Revision that panics reads as 0 (behind), a WaitFor that panics as a
// wait that failed (the key runs, marked for a fresh read).
type guardedWaiter[K comparable] struct {
	w revisionWaiter
	l *Loop[K]
	b any // the backend w follows (backendID), nil when unknown
}

func (g guardedWaiter[K]) Revision() (rev int64) {
	var p *guard.Panic
	defer func() {
		if p != nil {
			g.l.userPanic("revisionWaiter.Revision", p)
			rev = 0
		}
	}()
	defer guard.Catch(&p)
	return g.w.Revision()
}

func (g guardedWaiter[K]) WaitFor(ctx context.Context, rev int64) (err error) {
	var p *guard.Panic
	defer func() {
		if p != nil {
			g.l.userPanic("revisionWaiter.WaitFor", p)
			err = p
		}
	}()
	defer guard.Catch(&p)
	return g.w.WaitFor(ctx, rev)
}

// campaign runs the elector's Campaign under recovery: a panic is reported
// and fails the campaign like an error.
func (l *Loop[K]) campaign(ctx context.Context) (term context.Context, err error) {
	var p *guard.Panic
	defer func() {
		if p != nil {
			l.userPanic("Elector.Campaign", p)
			term, err = nil, p
		}
	}()
	defer guard.Catch(&p)
	term, _, err = l.cfg.elector.Campaign(ctx)
	return term, err
}

// waitReleased waits for the elector to release its last term (its
// optional Wait method), bounded, so that Run returns with the release
// done. A Wait that panics is reported like Campaign's panics.
func (l *Loop[K]) waitReleased(ctx context.Context) {
	ok, p := electwait.Wait(l.cfg.elector, l.clk)
	switch {
	case p != nil:
		l.userPanic("Elector.Wait", p)
	case !ok:
		l.log.LogAttrs(ctx, slog.LevelError, "elector's Wait did not return; Run returns without it",
			slog.String("controller", l.name), slog.Duration("waited", electwait.Limit))
	}
}

// guardedMetrics runs the user's metric hooks under recovery, with the
// rule the queue (queue.Metrics) follows: the first panic of any hook of
// the set is logged once at Error, naming the hook, with its stack, and no
// hook of the set is called again; the Loop's work goes on. The set is
// everything reached from the metrics.Loop given to WithMetrics: its
// methods, its optional ActiveWorkersFunc and WriteDelayed, and the
// queue.Metrics its QueueMetrics returned, in every term. Metrics that have
// lost an observation are wrong anyway, and a hook that panicked once
// would likely panic on every call, flooding the log. A hook is never
// counted through the hooks themselves (ReconcilePanic). Its methods defer
// catch, which allocates nothing until a hook panics.
type guardedMetrics struct {
	m   metrics.Loop
	log *slog.Logger
	off atomic.Bool // a hook panicked: no hook is called again
}

// on reports whether the hooks are still called.
func (g *guardedMetrics) on() bool { return !g.off.Load() }

// catch, deferred by a hook's wrapper, recovers the hook's panic, turns
// the set off, and logs the first such panic.
func (g *guardedMetrics) catch(hook string) {
	if v := recover(); v != nil && !g.off.Swap(true) {
		g.log1(hook, &guard.Panic{Value: v, Stack: debug.Stack()})
	}
}

// report turns the set off after hook's panic p, and logs p unless
// another hook's panic turned it off first.
func (g *guardedMetrics) report(hook string, p *guard.Panic) {
	if !g.off.Swap(true) {
		g.log1(hook, p)
	}
}

// log1 logs the panic p of hook, the one that turned the set off.
func (g *guardedMetrics) log1(hook string, p *guard.Panic) {
	g.log.LogAttrs(context.Background(), slog.LevelError, "metrics hook panicked", slog.String("hook", hook),
		slog.String("panic", guard.Describe(p.Value, guard.MaxText)), slog.String("then", "no metrics hook of this Loop is called again"),
		slog.String("stack", string(p.Stack)))
}

func (g *guardedMetrics) ReconcileDone(c, result string, d time.Duration) {
	if g.on() {
		defer g.catch("ReconcileDone")
		g.m.ReconcileDone(c, result, d)
	}
}

func (g *guardedMetrics) ReconcileError(c string, terminal bool) {
	if g.on() {
		defer g.catch("ReconcileError")
		g.m.ReconcileError(c, terminal)
	}
}

func (g *guardedMetrics) ReconcilePanic(c string) {
	if g.on() {
		defer g.catch("ReconcilePanic")
		g.m.ReconcilePanic(c)
	}
}

func (g *guardedMetrics) ActiveWorkers(c string, n int) {
	if g.on() {
		defer g.catch("ActiveWorkers")
		g.m.ActiveWorkers(c, n)
	}
}

func (g *guardedMetrics) MaxConcurrency(c string, n int) {
	if g.on() {
		defer g.catch("MaxConcurrency")
		g.m.MaxConcurrency(c, n)
	}
}

func (g *guardedMetrics) Converged(c string, d time.Duration) {
	if g.on() {
		defer g.catch("Converged")
		g.m.Converged(c, d)
	}
}

func (g *guardedMetrics) Unconverged(c string, n int) {
	if g.on() {
		defer g.catch("Unconverged")
		g.m.Unconverged(c, n)
	}
}

func (g *guardedMetrics) Oscillation(c string, k oscillation.Kind) {
	if g.on() {
		defer g.catch("Oscillation")
		g.m.Oscillation(c, k)
	}
}

func (g *guardedMetrics) Stalled(c, reason string) {
	if g.on() {
		defer g.catch("Stalled")
		g.m.Stalled(c, reason)
	}
}

func (g *guardedMetrics) FenceRejected(c string) {
	if g.on() {
		defer g.catch("FenceRejected")
		g.m.FenceRejected(c)
	}
}

// QueueMetrics returns the user's queue hooks, guarded as part of the
// set; nil (or a typed nil) for none, and none once the set is off,
// including when QueueMetrics itself panics.
func (g *guardedMetrics) QueueMetrics(c string) (qm queue.Metrics) {
	if !g.on() {
		return nil
	}
	var p *guard.Panic
	defer func() {
		if p != nil {
			g.report("QueueMetrics", p)
			qm = nil
		}
	}()
	defer guard.Catch(&p)
	inner := g.m.QueueMetrics(c)
	if nilness.IsNil(inner) {
		return nil
	}
	return guardedQueueMetrics{m: inner, g: g}
}

// activeWorkersFunc calls the user's ActiveWorkersFunc as a hook of the set.
func (g *guardedMetrics) activeWorkersFunc(r activeWorkersReader, c string, busy func() int) {
	if g.on() {
		defer g.catch("ActiveWorkersFunc")
		r.ActiveWorkersFunc(c, busy)
	}
}

// writeDelayed calls the user's WriteDelayed (WithWriteLimit) as a hook of
// the set.
func (g *guardedMetrics) writeDelayed(m writeLimitMetrics, c string, d time.Duration) {
	if g.on() {
		defer g.catch("WriteDelayed")
		m.WriteDelayed(c, d)
	}
}

// guardedQueueMetrics is guardedMetrics for the queue's hooks, which the
// queue calls with its lock held: a panic must not leave it locked. The
// queue's own guard never sees a panic: this one catches it first.
type guardedQueueMetrics struct {
	m queue.Metrics
	g *guardedMetrics
}

func (q guardedQueueMetrics) Depth(n int) {
	if q.g.on() {
		defer q.g.catch("queue Depth")
		q.m.Depth(n)
	}
}

func (q guardedQueueMetrics) Added() {
	if q.g.on() {
		defer q.g.catch("queue Added")
		q.m.Added()
	}
}

func (q guardedQueueMetrics) QueueLatency(d time.Duration) {
	if q.g.on() {
		defer q.g.catch("queue QueueLatency")
		q.m.QueueLatency(d)
	}
}

func (q guardedQueueMetrics) WorkDuration(d time.Duration) {
	if q.g.on() {
		defer q.g.catch("queue WorkDuration")
		q.m.WorkDuration(d)
	}
}

func (q guardedQueueMetrics) Unfinished(total, longest time.Duration) {
	if q.g.on() {
		defer q.g.catch("queue Unfinished")
		q.m.Unfinished(total, longest)
	}
}

func (q guardedQueueMetrics) Retry() {
	if q.g.on() {
		defer q.g.catch("queue Retry")
		q.m.Retry()
	}
}
