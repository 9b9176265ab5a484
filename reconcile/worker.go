package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/internal/wrote"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
)

// PanicError is the error a reconcile that panicked is treated as. It
// follows the err row of the result table.
type PanicError struct {
	// Value is what was passed to panic.
	Value any
	// Stack is the panicking goroutine's stack. It is logged at Error and
	// kept for Inspect (KeyInfo.LastError), never put in Error's text.
	Stack []byte
}

// Error reports the panic value's type and, for a string or an error, its
// text: one line of at most 240 bytes, with no stack. The text of any other
// value (a struct may hold a secret) is left out. It never panics: an error
// whose own Error method panics (a typed nil one) is named by its type.
func (e *PanicError) Error() string {
	return guard.Bound("reconcile panicked: "+guard.Describe(e.Value, guard.MaxText), guard.MaxText)
}

// Unwrap returns Value if it is an error whose chain can be walked: nil
// for one whose Unwrap, Is or As method panics (a typed nil wrapper), so
// that errors.Is and errors.As on a *PanicError never panic.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	if err != nil && chainPanics(err) != nil {
		return nil
	}
	return err
}

func (l *Loop[K]) worker(t *term[K], slot *runningSlot[K]) {
	rec := &recorder{}
	// A context per worker: per-reconcile timeouts register with it, not
	// with the term's context shared by every worker.
	wctx, cancel := context.WithCancelCause(t.work)
	defer cancel(nil)
	ctx := context.WithValue(wctx, recorderKey{}, rec)
	// Every typed-store write made with the reconcile's ctx is recorded for
	// read-your-writes without the reconciler calling RecordWrite.
	ctx = wrote.With(ctx, rec.record)
	rec.own = func(b any, name, key string, keyed bool, rev int64) {
		late, heard := l.own.wrote(b, rev, name, authorOf(name, key, keyed), l.cacheFloor)
		if late != nil {
			l.addKeys(late)
		}
		for _, h := range heard {
			l.hear(h)
		}
	}
	l.setLogger(rec, slot)
	ctx = l.withEvents(ctx, rec, slot)
	// A reconcile that calls runtime.Goexit (t.FailNow in a test) ends
	// this goroutine with its key in hand: survive finishes the key and
	// starts a worker in its place.
	defer l.survive(t, ctx, rec, slot)
	if l.metricsOn {
		l.workStamped(t, slot, ctx, rec)
		return
	}
	for {
		key, ok := t.q.GetUntilShutDown(t.ctx) // runTerm shuts the queue down as t.ctx ends
		if !ok {
			return
		}
		slot.set(key)
		ran := true
		switch {
		case l.heldBack(t, key), l.waitsForStored(t, key):
			ran = false
		case l.cfg.sharder != nil:
			l.processSharded(t, ctx, rec, key, -1)
		default:
			l.process(t, ctx, rec, key, -1)
		}
		if rerun := t.q.Done(key); ran && (rerun || l.rerunning.Load() > 0) {
			l.paceReruns(key, rerun) // called only when it has something to do
		}
		slot.clear() // after Done: busy from Get to Done (metrics.Loop's ActiveWorkersFunc)
		if l.own.waiting.Load() > 0 && t.busy() == 0 {
			l.hearAllHeld()
		}
	}
}

// workStamped is the worker's loop with metrics: the queue and the Loop
// share their clock reads. The stamp at which Get hands a key out starts
// the reconcile's time, the one that ends it ends the queue's work
// duration, and the queue reuses it for the worker's next Get when a key
// is waiting.
func (l *Loop[K]) workStamped(t *term[K], slot *runningSlot[K], ctx context.Context, rec *recorder) {
	var free time.Duration
	for {
		key, start, ok := t.q.GetStamped(t.ctx, free)
		if !ok {
			return
		}
		slot.set(key)
		end := time.Duration(-1)
		ran := true
		switch {
		case l.heldBack(t, key), l.waitsForStored(t, key):
			ran = false
		case l.cfg.sharder != nil:
			end = l.processSharded(t, ctx, rec, key, start)
		default:
			end = l.process(t, ctx, rec, key, start)
		}
		if end < 0 {
			end = t.q.Stamp()
		}
		if rerun := t.q.DoneStamped(key, end); ran && (rerun || l.rerunning.Load() > 0) {
			l.paceReruns(key, rerun)
		}
		// After DoneStamped, which reports the key's work duration: a
		// worker is busy from Get to Done (metrics.Loop's
		// ActiveWorkersFunc), so a reader that sees no busy worker finds
		// every key's work reported and none processing.
		slot.clear()
		if l.own.waiting.Load() > 0 && t.busy() == 0 {
			l.hearAllHeld()
		}
		free = end
	}
}

// survive, deferred by worker, runs when the worker's goroutine ends.
// Holding no key, it ended as a worker does, with its term's queue shut
// down. Holding one, it is ending by runtime.Goexit, which no recover
// stops, called by the reconciler or another function of the user's that
// the worker called (t.FailNow from a reconciler in a test is one): the
// key is finished as if that function had panicked (logged at Error,
// counted, failed with a *PanicError and retried with backoff, unless the
// term is ending), handed back to the queue (Done), and a new worker takes
// this one's place, so the Loop keeps its workers and stops as it should.
// A panic that reaches this far (none should) goes on as it was.
func (l *Loop[K]) survive(t *term[K], ctx context.Context, rec *recorder, slot *runningSlot[K]) {
	slot.mu.Lock()
	key, busy := slot.key, slot.busy
	slot.mu.Unlock()
	if !busy {
		return
	}
	if v := recover(); v != nil {
		panic(v)
	}
	stack := debug.Stack()
	// Deferred, so that they happen even if what follows calls Goexit
	// again; in this order: Done, clear (busy from Get to Done), replace.
	defer t.workers.Go(func() { l.worker(t, slot) })
	defer slot.clear()
	defer t.q.Done(key)
	l.log.LogAttrs(ctx, slog.LevelError, "reconcile called runtime.Goexit: its worker is replaced, and the key is retried as after a panic",
		slog.String("controller", l.name), keyAttr(key), slog.String("stack", string(stack)), rec.idAttr())
	l.metrics.ReconcilePanic(l.name)
	if t.work.Err() != nil {
		return // the term is ending: as for a reconcile cut short
	}
	p := pass{start: -1, end: -1, err: &PanicError{Value: guard.ErrGoexit, Stack: stack}, panicked: true}
	l.mu.Lock()
	if s := l.keys[key]; s != nil {
		p.failures, p.requeues = s.failures, s.requeues
	}
	l.mu.Unlock()
	l.conclude(key, rec, &p)
	l.schedule(t, key, &p.d, rec, p.o.reportEnds)
	l.report(t, ctx, rec, key, &p)
	if p.o.newly || p.o.stall != stalledKeep && l.sw != nil {
		l.settle(t, ctx, rec, key, &p)
	}
}

// pass is one reconcile of a key as process carries it through its steps:
// what the reconcile returned, what follows from it, and its timing. It
// lives in process's frame; the steps fill and read it in place.
type pass struct {
	res   Result
	err   error
	marks objectMarks // zero without l.marks
	d     decision
	o     outcome
	// failures and requeues are the key's counts before the reconcile.
	failures, requeues int
	// start and end are the queue's stamps (Queue.Stamp) of the
	// reconcile, and dur its duration, when timed; end is -1 when no
	// stamp was read.
	start, end, dur time.Duration
	// timed: the reconcile is timed (metrics, or Debug logging).
	timed bool
	// returned: Reconcile returned (call); panicked: it panicked (err
	// is a *PanicError).
	returned, panicked bool
	// working: the object carries the Loop's Reconciling=True.
	working bool
	// slow: the steps after the reconcile logged or wrote, which takes
	// time, so that a fresh stamp ends the key's work.
	slow bool
}

// process runs one reconcile of key and carries out the decision, in four
// steps: run (the reconcile, with its timeout), conclude (decide and record
// the outcome), schedule (the key's next run) and report (metrics and
// logs); before them prepare (the object's marks: paused, Reconciling),
// after them settle (Stalled and Reconciling), and between conclude and
// schedule the Reconciling=True of a new object whose first reconcile did
// not succeed (reconcilingUnfinished). start is the queue's stamp
// (Queue.Stamp) of the hand-out when the Loop has metrics, else negative.
// It returns the stamp at which it was done with key, or -1 when it read
// none: with metrics, the stamp that ended the reconcile, unless it then
// logged or wrote, which take time, and a fresh one then. Each step is
// called only when it has something to do: the common case (a healthy
// key, a nil result, no metrics, Debug off) takes no Loop lock, reads no
// clock and allocates nothing.
func (l *Loop[K]) process(t *term[K], ctx context.Context, rec *recorder, key K, start time.Duration) time.Duration {
	p := pass{start: start, end: -1}
	if l.marks != nil && !l.quietMarks(&p) && l.prepare(t, key, &p) {
		return -1
	}
	if l.run(t, ctx, rec, key, &p) {
		return p.end
	}
	l.conclude(key, rec, &p)
	if p.d.stalled != stalledClear && !p.working && l.marks != nil {
		// Before the retry is queued, so that the retry reads it.
		p.slow = l.reconcilingUnfinished(t, key, &p.marks, &p.d, &p.o)
	}
	if p.d.next != nextOnHint || p.o.reportEnds > 0 {
		l.schedule(t, key, &p.d, rec, p.o.reportEnds)
	}
	if p.timed || p.err != nil || p.res.Requeue { // a warning (o.warn) comes with an error
		l.report(t, ctx, rec, key, &p)
	}
	if p.o.newly || p.working || p.o.stall != stalledKeep && l.sw != nil {
		l.settle(t, ctx, rec, key, &p)
	}
	if l.metricsOn && p.slow {
		p.end = t.q.Stamp() // after logging or writing: time this key's work took
	}
	return p.end
}

// quietMarks reads the marks' counters (objmarks.Counts) for a Loop whose
// ConditionWriter offers them, and reports whether no object is loud:
// key's marks are then zero (not paused, no Reconciling=True), and p
// holds the stamp, read with no call and nothing of key's object. Small
// enough to inline.
func (l *Loop[K]) quietMarks(p *pass) bool {
	if l.quiet == nil {
		return false
	}
	p.marks.at, p.marks.quiet = l.quiet.Quiet()
	return p.marks.quiet
}

// prepare reads key's object marks into p for a Loop that has them: it
// reports whether the key is skipped (paused), and otherwise whether the
// object carries the Loop's Reconciling=True (reconcilingBefore).
func (l *Loop[K]) prepare(t *term[K], key K, p *pass) (skip bool) {
	if l.skip(t, key, &p.marks) {
		return true
	}
	p.working = l.reconcilingBefore(key, &p.marks)
	return false
}

// run is process's first step: it readies rec (begin, or rec.reset
// alone while no key has state) and calls the
// reconciler (call), timed when metrics or Debug logging are on. It reports
// whether the reconcile was cut short by the end of the term (cutShort),
// which leaves the other steps nothing to do.
func (l *Loop[K]) run(t *term[K], ctx context.Context, rec *recorder, key K, p *pass) (cut bool) {
	p.timed = l.metricsOn || l.log.Enabled(ctx, slog.LevelDebug)
	if p.timed && !l.metricsOn {
		p.start = t.q.Stamp()
	}
	setKey(rec, key)
	if l.nkeys.Load() > 0 {
		p.failures, p.requeues = l.begin(key, rec)
	} else {
		rec.reset(false, 1)
	}
	if l.cfg.dryRun(&p.marks) || l.cfg.timeout > 0 || l.countActive {
		l.callWrapped(ctx, key, p)
	} else {
		l.call(ctx, key, p)
	}
	if p.err != nil && !p.panicked {
		p.err = walkable(p.err)
	}
	if p.timed {
		p.end = t.q.Stamp()
		p.dur = p.end - p.start
	}
	return (p.err != nil || p.res.afterWrite()) && l.cutShort(t, ctx, rec, key, p)
}

// begin reads what the Loop remembers of key before a reconcile (its
// failure and requeue counts) and readies rec for it. run calls it only
// while some key has state (nkeys): otherwise the counts are zero, and rec
// is readied with no call.
func (l *Loop[K]) begin(key K, rec *recorder) (failures, requeues int) {
	fresh := false
	l.mu.Lock()
	if s := l.keys[key]; s != nil {
		failures, requeues, fresh = s.failures, s.requeues, s.freshRead
		// This pass reads what the caches hold now and decides the
		// next run: a wait for the stored revision (awaitStored)
		// no longer runs the key.
		s.freshRead = false
		l.clearAwaitLocked(s)
	}
	l.mu.Unlock()
	rec.reset(fresh, failures+1)
	return failures, requeues
}

// callWrapped is call under the per-reconcile timeout, if any, with the
// reconciler's writes made dry runs when key's marks (p.marks) or the Loop
// say observe-only, and counted among the active workers while it runs.
func (l *Loop[K]) callWrapped(ctx context.Context, key K, p *pass) {
	if l.cfg.dryRun(&p.marks) {
		ctx = l.observeCtx(ctx, key, &p.marks)
	}
	rctx := ctx
	var dctx *deadlineCtx
	if l.cfg.timeout > 0 {
		dctx = newDeadlineCtx(ctx, l.cfg.timeout) // context.WithTimeoutCause, built on demand
		rctx = dctx
	}
	if dctx != nil {
		defer dctx.end() // deferred: a reconcile may end by runtime.Goexit (see survive)
	}
	if l.countActive {
		l.metrics.ActiveWorkers(l.name, int(l.active.Add(1)))
		defer l.inactive()
	}
	l.call(rctx, key, p)
}

// inactive counts a worker's reconcile done among the active workers.
func (l *Loop[K]) inactive() { l.metrics.ActiveWorkers(l.name, int(l.active.Add(-1))) }

// call calls the reconciler on key, into p.res and p.err, and turns a
// panic into a *PanicError (p.panicked). It defers its own recover
// (p.caught) rather than pass a closure to guard.Call, or defer
// guard.Catch: the closure and the extra calls cost about 50, and about
// 10, instructions per reconcile (BenchmarkLoopBareResync100k); and a
// method of p, not a closure that would capture each result. run calls it
// directly when no timeout, dry run or count of active workers wraps it
// (callWrapped).
func (l *Loop[K]) call(ctx context.Context, key K, p *pass) {
	defer p.caught()
	p.res, p.err = l.r.Reconcile(ctx, key)
	p.returned = true
}

// caught, deferred by call, turns a panic of the reconciler into p's
// result. It calls recover only when Reconcile did not return: about 15
// instructions per reconcile saved.
func (p *pass) caught() {
	if p.returned {
		return
	}
	if v := recover(); v != nil {
		p.res, p.err, p.panicked = Result{}, &PanicError{Value: v, Stack: debug.Stack()}, true
	}
}

// cutShort counts a fenced write and reports a panic, and reports whether
// the reconcile was cut short by the end of the term (shutdown or lost
// leadership): such a failure or retry is not counted, and the next term
// starts afresh. It has nothing to do for a reconcile that
// returned neither an error nor RequeueAfterWrite (a panic is an error).
func (l *Loop[K]) cutShort(t *term[K], ctx context.Context, rec *recorder, key K, p *pass) bool {
	err := p.err
	if err != nil && errors.Is(err, store.ErrFenced) {
		l.metrics.FenceRejected(l.name)
	}
	if (err != nil || p.res.afterWrite()) && (t.work.Err() != nil || shardMoved(ctx)) {
		l.log.LogAttrs(ctx, slog.LevelDebug, "reconcile cut short",
			slog.String("controller", l.name), keyAttr(key), slog.Any("cause", context.Cause(t.work)))
		return true
	}
	if p.panicked {
		l.metrics.ReconcilePanic(l.name)
		var pe *PanicError
		if errors.As(err, &pe) {
			l.log.LogAttrs(ctx, slog.LevelError, "reconcile panicked", slog.String("controller", l.name), keyAttr(key),
				slog.String("panic", pe.Error()), slog.String("stack", string(pe.Stack)), rec.idAttr())
		}
	}
	return false
}

// conclude decides what follows the reconcile (the result table, with a
// Requeue paced by whether the pass wrote, as rec saw) into p.d, records
// it, and the reconcile's duration, in key's state and says in p.o what
// follows.
//
// A reconcile that returned nil and a zero Result (most) takes decide's
// first row (succeeded) on p.d, still zero, with no closure and no call:
// requeueUnwritten and superseded have nothing to do for it.
func (l *Loop[K]) conclude(key K, rec *recorder, p *pass) {
	if p.err == nil && p.res.isZero() {
		succeeded(&p.d)
	} else {
		backoff := func(n int) time.Duration { return l.retry.Delay(key, n-1) }
		decide(&p.d, p.res, p.err, p.failures, l.cfg.stallAfter, backoff)
		if p.d.stale == nil || !superseded(&p.d, p.requeues, l.lagging(p.d.stale)) {
			requeueUnwritten(&p.d, rec.rev.Load() > 0, p.requeues, backoff)
		}
	}
	l.record(key, &p.d, p.err, &p.o)
	if p.timed {
		l.noteDuration(key, p.dur)
	}
}

// schedule queues key's next run as d says, and once more when an
// oscillation's report stands reportEnds longer.
func (l *Loop[K]) schedule(t *term[K], key K, d *decision, rec *recorder, reportEnds time.Duration) {
	switch d.next {
	case nextAfter:
		l.addAfter(t, key, d.delay)
	case nextAfterWrite:
		l.requeueAfterWrite(t, key, rec.written())
	case nextAfterStored:
		l.awaitStored(t, key, d.stale)
	}
	if reportEnds > 0 {
		// A healthy key kept Stalled=Oscillating only because the report
		// stands until then: run it then to clear it, or it would stand
		// until the next hint or resync. The queue keeps the earlier of
		// this and a run scheduled above.
		l.addAfter(t, key, reportEnds)
	}
}

// report fires the reconcile's metrics and logs its outcome: at Debug
// always (when timed), a failure as logFailure says (lognoise.go), and at
// Warn, once per key, for a Result returned with an error. It sets p.slow
// when it logged, or may have.
func (l *Loop[K]) report(t *term[K], ctx context.Context, rec *recorder, key K, p *pass) {
	res, err, d := p.res, p.err, &p.d
	if l.metricsOn {
		if t.qm != nil && (d.failed || d.requeues > 0 && d.next != nextAfterStored) {
			t.qm.Retry() // workqueue_retries_total: a retry through backoff
		}
		l.metrics.ReconcileDone(l.name, d.result, p.dur)
		if err != nil {
			l.metrics.ReconcileError(l.name, d.terminal)
		}
	}
	if p.timed && l.log.Enabled(ctx, slog.LevelDebug) {
		p.slow = true
		l.log.LogAttrs(ctx, slog.LevelDebug, "reconciled", slog.String("controller", l.name), keyAttr(key),
			slog.Int("attempt", p.failures+1), slog.Duration("duration", p.dur), slog.String("result", d.result), rec.idAttr())
	}
	if err != nil {
		p.slow = true
		l.logFailure(ctx, rec, key, p.failures, d, err)
	}
	if p.o.warn {
		l.log.LogAttrs(ctx, slog.LevelWarn, "result returned with an error: the error decides the next run",
			slog.String("controller", l.name), keyAttr(key), slog.Bool("requeueAfterWrite", res.afterWrite()),
			slog.Duration("requeueAfter", res.RequeueAfter))
	}
	if res.Requeue && l.requeueWarned.CompareAndSwap(false, true) {
		l.log.LogAttrs(ctx, slog.LevelWarn, "Result.Requeue is deprecated: it means RequeueAfterWrite here (again once the cache holds this pass's write, after per-key backoff when it wrote nothing), not controller-runtime's immediate requeue; return RequeueAfterWrite or RequeueAfter (logged once per Loop)",
			slog.String("controller", l.name), keyAttr(key))
	}
}

// settle is process's last step: it logs a key's move to Stalled, sets or
// clears Stalled as p.o says (writeStalled), and turns the Loop's
// Reconciling=True off after a reconcile that succeeded
// (reconcilingAfter). It sets p.slow when it wrote (or tried, or counted).
func (l *Loop[K]) settle(t *term[K], ctx context.Context, rec *recorder, key K, p *pass) {
	o := &p.o
	if o.newly {
		l.logStalled(ctx, rec, key, o.note)
	}
	wrote := o.stall != stalledKeep && (o.newly || l.sw != nil) && l.writeStalled(t, key, o.stall, o.note, o.newly)
	wrote = p.working && l.reconcilingAfter(t, key, &p.marks, &p.d, o) || wrote
	p.slow = p.slow || wrote
}

// errProbe matches no error: errors.Is with it walks the whole chain.
var errProbe = errors.New("reconcile: probe")

// walkable returns err, or, when walking its chain panics (the Unwrap, Is
// or As method of a typed nil wrapper), a plain error with its text, so
// that the Loop's errors.Is and errors.As on it cannot panic.
func walkable(err error) error {
	p := chainPanics(err)
	if p == nil {
		return err
	}
	return fmt.Errorf("%s (its error chain panicked: %s)", errString(err), guard.Describe(p.Value, guard.MaxText))
}

// chainPanics walks err's chain as errors.Is and errors.As do, and returns
// the panic that stopped it, or nil.
func chainPanics(err error) *guard.Panic {
	return guard.Call(func() {
		_ = errors.Is(err, errProbe)
		var target interface{ probe() }
		_ = errors.As(err, &target)
	})
}

// outcome is what record makes of a reconcile for the steps after it.
// The small fields come last (48 bytes, not 56: every reconcile zeroes one).
type outcome struct {
	// note is the reason and message that go with stall.
	note stalledNote
	// reportEnds, when positive, is how long an oscillation's report
	// still stands for a reconcile that would have cleared Stalled: the
	// key must run again then.
	reportEnds time.Duration
	// stall is what to do to Stalled.
	stall stalledChange
	// warn: warn about a result returned with an error (once per key).
	warn bool
	// newly reports a set that makes the key Stalled, or changes its
	// reason: what metrics.Loop.Stalled counts.
	newly bool
}

// record stores the outcome of decision d in the key's state and says in o
// what follows (see outcome). While an oscillation hold lasts, Stalled is set to
// the oscillation whatever the reconcile returned; a clear is skipped when
// the key is known not to be stalled.
func (l *Loop[K]) record(key K, d *decision, err error, o *outcome) {
	o.stall = d.stalled
	clean := d.failures == 0 && err == nil && !d.warn && d.stalled != stalledSet && d.next != nextAfter
	if clean && l.nkeys.Load() == 0 {
		if o.stall == stalledClear && (l.noneStalled() || !l.mayBeStalled(key)) {
			o.stall = stalledKeep
		}
		return
	}
	l.recordKeyed(key, clean, d, err, o)
}

// recordKeyed is record for a reconcile that was not clean, or of a Loop
// where some key has state: it takes the lock, which record's common case
// does not (nor does it pay for the deferred unlock).
func (l *Loop[K]) recordKeyed(key K, clean bool, d *decision, err error, o *outcome) {
	o.note = stalledNote{reason: d.reason, message: d.message}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.keys[key]
	if s == nil {
		if clean {
			if o.stall == stalledClear && !l.mayBeStalledLocked(key) {
				o.stall = stalledKeep
			}
			return
		}
		s = &keyState{}
		l.setKeyLocked(key, s)
	}
	l.recordLocked(key, s, d, err, o)
}

// recordLocked is record for a key with state s.
func (l *Loop[K]) recordLocked(key K, s *keyState, d *decision, err error, o *outcome) {
	s.failures, s.requeues, s.lastErr, s.lastResult = d.failures, d.requeues, err, d.result
	s.nextRetry = time.Time{}
	var now time.Time
	if d.next == nextAfter || s.oscillated != nil {
		now = l.clk.Now()
	}
	if d.next == nextAfter {
		s.nextRetry = now.Add(d.delay)
	}
	if d.warn && !s.warned {
		s.warned, o.warn = true, true
	}
	if s.oscillated != nil {
		s.reportOscillation(d, now, o)
	}
	switch o.stall {
	case stalledSet:
		n := o.note
		s.stalled = &n
		if s.counted != o.note.reason {
			s.counted, o.newly = o.note.reason, true
		}
	case stalledClear:
		if s.stalled == nil && !l.mayBeStalledLocked(key) {
			o.stall = stalledKeep
		}
		s.stalled, s.oscillated, s.counted, s.stalledAt = nil, nil, "", time.Time{}
	}
	if s.empty() {
		l.deleteKeyLocked(key)
	}
}

// reportOscillation makes o report s's oscillation as Stalled: by the
// first reconcile after it was detected, and until one window after its
// hold ends; then it forgets the oscillation.
func (s *keyState) reportOscillation(d *decision, now time.Time, o *outcome) {
	if s.oscWritten && !now.Before(s.oscUntil) {
		s.oscillated, s.oscCount, s.oscUntil = nil, 0, time.Time{}
		return
	}
	o.stall, o.note = stalledSet, stalledNote{reason: conditions.ReasonOscillating, message: s.oscillated.Message()}
	s.oscWritten = true
	if d.stalled == stalledClear && now.Before(s.oscUntil) {
		o.reportEnds = s.oscUntil.Sub(now)
	}
}

// setKeyLocked and deleteKeyLocked change l.keys and keep nkeys in step.
func (l *Loop[K]) setKeyLocked(key K, s *keyState) {
	l.keys[key] = s
	l.nkeys.Store(int64(len(l.keys)))
}

func (l *Loop[K]) deleteKeyLocked(key K) {
	delete(l.keys, key)
	l.nkeys.Store(int64(len(l.keys)))
}

// mayBeStalled reports whether key's object may carry Stalled=True, so that
// clearing it needs a look. Without a cache source reporting conditions,
// every key may.
func (l *Loop[K]) mayBeStalled(key K) bool {
	if !l.stalledTracked.Load() {
		return true
	}
	if l.nstalled.Load() == 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.stalledObjs[key]
	return ok
}

// noneStalled reports that no object may carry Stalled=True (mayBeStalled
// is false for every key), with no call: small enough to inline.
func (l *Loop[K]) noneStalled() bool {
	return l.stalledTracked.Load() && l.nstalled.Load() == 0
}

func (l *Loop[K]) mayBeStalledLocked(key K) bool {
	if !l.stalledTracked.Load() {
		return true
	}
	_, ok := l.stalledObjs[key]
	return ok
}

// writeStalled sets or clears the Stalled condition through the
// ConditionWriter, if there is one, and counts newly (see outcome) in
// metrics.Loop.Stalled. It reports whether it wrote (or tried, or counted).
//
// A Stalled=True it sets is rewritten for a new generation with the same
// reason at most once per backoff cap (see stalledUpdate). Every condition
// write counts in the key's write budget (oscillation.TooManyWrites) like
// the reconciler's writes, so a Stalled that flips at every reconcile is
// held and reported like any other write storm; the report of an
// oscillation itself, written once per detection, does not count (it
// would spend the budget it reports).
//
// A ConditionWriter that panics is reported (userPanic) and the write is lost:
// the key's retry, if it has one, is already scheduled.
func (l *Loop[K]) writeStalled(t *term[K], key K, change stalledChange, d stalledNote, newly bool) (wrote bool) {
	if newly {
		l.metrics.Stalled(l.name, d.reason)
	}
	if l.sw == nil {
		return newly
	}
	var p *guard.Panic
	defer func() {
		if p != nil {
			l.userPanic("ConditionWriter", p, keyAttr(key))
			wrote = true
		}
	}()
	defer guard.Catch(&p)
	return l.putStalled(t, key, change, d, newly) || newly
}

// putStalled is writeStalled's write: it reports whether it tried one.
func (l *Loop[K]) putStalled(t *term[K], key K, change stalledChange, d stalledNote, newly bool) bool {
	if change == stalledSet && !newly && l.observing(key) {
		// Observe-only: the store never shows the Loop's Stalled, so
		// each reason is reported once (newly), not at every failure.
		return false
	}
	conds, gen, ok := l.sw.Conditions(key)
	if !ok {
		return false
	}
	owned := change == stalledClear && stalledNotFalse(conds) && l.sw.OwnsCondition(key, l.cfg.loopManager, conditions.Stalled)
	now := l.clk.Now()
	var regen time.Time
	var stop store.Condition
	stopping := false
	if change == stalledSet {
		regen, stop, stopping = l.stalledSetExtras(key, conds)
	}
	out, write := stalledUpdate(conds, l.name, owned, change, d.reason, d.message, gen, now, regen)
	if !write && !stopping {
		return false
	}
	c, _ := conditions.Get(out, conditions.Stalled)
	cs := []store.Condition{c}
	if stopping {
		cs = append(cs, stop)
	}
	err := l.writeConds(l.loopWriteCtx(t.work, key), key, cs...)
	if err == nil {
		l.stalledWritten(key, change, d, now)
		return true
	}
	l.stalledWriteFailed(t, key, err)
	return true
}

// stalledSetExtras is what a Stalled=True write on key's object goes
// with: when it may be rewritten for a new generation (see stalledRegen),
// and the Loop's own Reconciling=True turned off (stop, stopping) if conds
// holds one.
func (l *Loop[K]) stalledSetExtras(key K, conds []store.Condition) (regen time.Time, stop store.Condition, stopping bool) {
	regen = l.stalledRegen(key)
	stop, stopping = l.reconcilingStopped(conds)
	stopping = stopping && l.sw.OwnsCondition(key, l.cfg.loopManager, conditions.Reconciling)
	if stopping {
		// The Loop's Reconciling=True goes with this write, whatever
		// regen says: kstatus reads it before Stalled, as InProgress.
		regen = time.Time{}
	}
	return regen, stop, stopping
}

// stalledWriteFailed counts a fenced Stalled write and logs the failure
// (at Debug for a deleted object) unless the term's work has ended.
func (l *Loop[K]) stalledWriteFailed(t *term[K], key K, err error) {
	if errors.Is(err, store.ErrFenced) {
		l.metrics.FenceRejected(l.name)
	}
	if t.work.Err() == nil {
		lvl := slog.LevelError
		if store.IgnoreNotFound(err) == nil {
			lvl = slog.LevelDebug
		}
		l.log.LogAttrs(t.work, lvl, "writing Stalled failed", slog.String("controller", l.name),
			keyAttr(key), slog.Any("error", err))
	}
}

// stalledRegen is when a Stalled=True the Loop wrote on key's object may
// be rewritten for a new generation: one backoff cap after it was; zero
// when the Loop knows of no such write.
func (l *Loop[K]) stalledRegen(key K) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.keys[key]; s != nil && !s.stalledAt.IsZero() {
		return s.stalledAt.Add(l.cfg.policy.Cap)
	}
	return time.Time{}
}

// stalledWritten notes a Stalled write made at now: when a set was, and
// the write in key's budget unless it reports an oscillation.
func (l *Loop[K]) stalledWritten(key K, change stalledChange, d stalledNote, now time.Time) {
	if change == stalledSet {
		l.mu.Lock()
		if s := l.keys[key]; s != nil && s.stalled != nil {
			s.stalledAt = now
		}
		l.mu.Unlock()
	}
	if d.reason != conditions.ReasonOscillating || change != stalledSet {
		l.judges.flush() // the writes the sources saw before this one go first
		l.observeWrite(key, oscillation.Write{Time: now, Self: true, Owned: []diff.Path{stalledPath}, Report: true})
	}
}
