package reconcile

import (
	"errors"
	"time"

	"github.com/steady-go/steady/internal/wrote"
	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

// nextKind says when a key runs again after a reconcile.
type nextKind uint8

const (
	// nextOnHint schedules nothing: the key runs on the next hint or resync.
	nextOnHint nextKind = iota
	// nextAfterWrite runs the key once the cache holds the reconcile's last
	// write (Result.RequeueAfterWrite).
	nextAfterWrite
	// nextAfter runs the key after decision.delay.
	nextAfter
	// nextAfterStored runs the key once the caches hold the revision a
	// conflict's stored object is at (decision.stale): a stale read's
	// conflict, superseded by an event the caches have yet to deliver.
	nextAfterStored
)

func (k nextKind) String() string {
	switch k {
	case nextOnHint:
		return "on-hint"
	case nextAfterWrite:
		return "after-write"
	case nextAfter:
		return "after"
	case nextAfterStored:
		return "after-stored"
	}
	return "unknown"
}

// stalledChange says what a reconcile does to the Stalled condition.
type stalledChange uint8

const (
	stalledKeep stalledChange = iota
	stalledSet
	stalledClear
)

// Metric result labels, as controller_runtime_reconcile_total uses them
// (see metrics.Loop.ReconcileDone and KeyInfo.LastResult).
const (
	resultSuccess      = "success"
	resultRequeue      = "requeue"
	resultRequeueAfter = "requeue_after"
	resultError        = "error"
)

// decision is what the Loop does after one reconcile. It is computed by the
// pure function decide, so every row of the result table is a plain input.
// The small fields come last: without padding between them a decision is
// 96 bytes, not 120, and every reconcile zeroes one.
type decision struct {
	// failures is the new consecutive failure count.
	failures int
	// requeues is the new count of consecutive Requeues that wrote nothing
	// and revision conflicts (see requeueUnwritten).
	requeues int
	// delay is the wait for nextAfter.
	delay time.Duration
	// backoff is the backoff delay that was applied (0 if none).
	backoff time.Duration
	// reason and message describe the Stalled condition for stalledSet.
	reason, message string
	// stale is, for a conflict whose error says so, where and at what
	// revision the object the write's precondition failed against is
	// stored (see superseded); nil otherwise.
	stale *wrote.Stale
	// result is the metric label.
	result string
	// failed reports that this reconcile counted as a failure.
	failed bool
	// terminal reports a Terminal error.
	terminal bool
	next     nextKind
	stalled  stalledChange
	// warn reports a Result returned together with an error.
	warn bool
	// conflict reports a revision conflict (see isConflict): a retry
	// paced like a Requeue that wrote nothing, not a failure.
	conflict bool
}

// decide implements the result table of the package documentation, into d
// (filled in place: a decision is too large to copy on every reconcile):
//
//	return               failures   next run                      Stalled
//	nil                  reset      next hint                     clear
//	RequeueAfterWrite    unchanged  after the last write is seen  keep
//	RequeueAfter d       reset      after d                       clear
//	revision conflict    unchanged  as a RequeueAfterWrite with   keep
//	                                no write, or see superseded
//	err                  +1         max(backoff, RequeueAfter)    set after stallAfter failures
//	Blocked(reason, err) +1         max(backoff, RequeueAfter)    set now
//	RetryAfter(err, d)   +1         max(d, backoff, RequeueAfter) as for err
//	Terminal(err)        reset      RequeueAfter, or next hint    set
//
// failures is the count before this reconcile; backoff(n) is the backoff
// delay for the n-th consecutive failure (n ≥ 1) and is called only when the
// reconcile fails. A Requeue and a conflict are paced (and a Requeue that
// wrote resets the count) by requeueUnwritten, which sees what was written. stallAfter ≤ 0 is treated as 1. When several wrappers are
// nested, Terminal wins over the others; Blocked and RetryAfter combine.
func decide(d *decision, res Result, err error, failures, stallAfter int, backoff func(n int) time.Duration) {
	after := max(res.RequeueAfter, 0)
	if err == nil {
		switch {
		case after > 0:
			*d = decision{next: nextAfter, delay: after, stalled: stalledClear, result: resultRequeueAfter}
			return
		case res.afterWrite():
			*d = decision{failures: failures, next: nextAfterWrite, result: resultRequeue}
			return
		default:
			*d = decision{}
			succeeded(d)
			return
		}
	}
	if te, ok := errors.AsType[*terminalError](err); ok {
		*d = decision{terminal: true, next: nextOnHint, stalled: stalledSet, reason: conditions.ReasonTerminal,
			message: te.message(err), warn: res.afterWrite(), result: resultError}
		if after > 0 {
			d.next, d.delay = nextAfter, after
		}
		return
	}
	if isConflict(err) {
		// Someone else wrote first: re-reading and retrying is the cure,
		// so it is a retry, not a failure toward Stalled (a spec that
		// moves while status is written would make every object Stalled).
		// requeueUnwritten paces it.
		*d = decision{failures: failures, next: nextAfterWrite, delay: after, conflict: true,
			warn: !res.isZero(), result: resultError, message: errString(err)}
		d.stale, _ = errors.AsType[*wrote.Stale](err)
		return
	}
	n := failures + 1
	if n < 1 { // overflow-safe
		n = 1
	}
	b := max(backoff(n), 0)
	*d = decision{failures: n, failed: true, next: nextAfter, backoff: b, delay: max(b, after),
		warn: !res.isZero(), result: resultError, message: errString(err)}
	if ra, ok := errors.AsType[*retryAfterError](err); ok {
		d.delay = max(d.delay, ra.after)
	}
	if be, ok := errors.AsType[*blockedError](err); ok {
		// The reason is the condition's Reason: the message does not
		// repeat it, it says what the wait is for.
		d.stalled, d.reason, d.message = stalledSet, be.Reason, be.message(err)
		return
	}
	if n >= max(stallAfter, 1) {
		d.stalled, d.reason = stalledSet, conditions.ReasonFailing
		d.message = errString(err) // no count: the condition changes only with its meaning
	}
}

// succeeded fills d, zero, with decide's first row: a reconcile that
// returned nil and a zero Result. The Loop's conclude calls it directly for
// such a reconcile, on a decision still zero.
func succeeded(d *decision) { d.stalled, d.result = stalledClear, resultSuccess }

// requeueUnwritten turns the Requeue row of d (a Requeue with no error)
// into a retry paced by per-key backoff when the pass wrote nothing: there
// is no write for the cache to show, so "run again once the cache holds the
// write" would be "run again now", and a reconciler that keeps asking would
// spin. A conflict is paced the same way, whatever the pass wrote, and no
// earlier than a RequeueAfter returned with it. requeues is the count of
// such retries before this one; the n-th in a row waits backoff(n). It is
// neither a failure nor counted toward Stalled: failures and the Stalled
// change of d are kept. A Requeue that wrote is progress: it resets the
// failure count (and leaves Stalled to the rows that follow). Any other
// decision is left unchanged, and resets the count of retries. It changes
// d in place: a decision is too large to copy on every reconcile.
func requeueUnwritten(d *decision, wrote bool, requeues int, backoff func(n int) time.Duration) {
	if d.next != nextAfterWrite {
		return
	}
	if wrote && !d.conflict {
		d.failures = 0
		return
	}
	n := requeues + 1
	if n < 1 { // overflow-safe
		n = 1
	}
	b := max(backoff(n), 0)
	d.next, d.delay, d.backoff, d.requeues = nextAfter, max(b, d.delay), b, n
}

// superseded turns the conflict row of d into a run once the caches hold
// the stored object, when the conflict's error says where and at what
// revision that object is stored (d.stale), a cache of the Loop has yet to
// show that revision (lagging), and no RequeueAfter came with it. The pass
// then read an older state from a cache that runs behind the store: the
// cache will deliver the stored state (and its event, unless filtered,
// hints the key), and until it does, a retry would read the same stale
// state and conflict again, and a backoff delay would only keep the key
// waiting after the cache caught up. It is neither a failure nor a paced
// retry: failures, the count of paced retries (requeues, the count before
// this pass) and the Stalled change of d are kept. It reports whether it
// changed d. A conflict against what the caches already show, or against
// a store no cache of the Loop follows, stays paced by requeueUnwritten,
// so a reconciler that conflicts whatever it reads never spins.
func superseded(d *decision, requeues int, lagging bool) bool {
	if !d.conflict || d.stale == nil || d.delay > 0 || !lagging {
		return false
	}
	d.next, d.requeues = nextAfterStored, requeues
	return true
}

// isConflict reports whether err is a revision conflict (store.ErrConflict:
// someone else wrote first) that the reconciler returned as it is. A field
// ownership conflict (*ownership.ConflictError), which retrying never
// fixes, a panic, and an error the reconciler wrapped in Blocked or
// RetryAfter to say what it wants are not.
func isConflict(err error) bool {
	if !errors.Is(err, store.ErrConflict) {
		return false
	}
	_, owned := errors.AsType[*ownership.ConflictError](err)
	_, panicked := errors.AsType[*PanicError](err)
	_, blocked := errors.AsType[*blockedError](err)
	_, retry := errors.AsType[*retryAfterError](err)
	return !owned && !panicked && !blocked && !retry
}
