package workqueue

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/fastdelay"
	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/internal/nilness"
)

// Priority is the level at which a key waits to be handed out.
type Priority uint8

const (
	// Normal is the priority of Add, AddAfter and AddRateLimited.
	Normal Priority = iota
	// Low is the priority of AddLow, meant for periodic resync.
	Low
)

// String returns "normal" or "low".
func (p Priority) String() string {
	if p == Low {
		return "low"
	}
	return "normal"
}

// Queue is a keyed, deduplicating work queue: keys are added when something
// may need doing for them, and workers take them with Get and hand them back
// with Done.
//
//   - A key is queued at most once, however often it is added before a
//     worker takes it.
//   - A key taken by Get is never handed to a second worker before Done.
//     Adds while it is processing are remembered as one rerun, queued at
//     Done.
//   - Ready keys wait at Normal or Low priority. Normal keys go first, but
//     when both levels wait, at least one Get in 16 takes a Low key. A normal
//     add of a key waiting low moves it up; a low add never moves a key down
//     and never makes a delayed key ready sooner.
//   - AddAfter delays a key. A delayed key keeps its earliest ready time, and
//     a normal Add makes it ready at once (it then runs once, not twice).
//   - AddRateLimited delays a key by a backoff that grows with its failures,
//     and Forget resets its failure count.
//
// After ShutDown the queue accepts no more keys, and Get hands out the keys
// already queued until none is left, then returns false.
//
// The zero Queue is not usable; call New. A Queue is safe for concurrent
// use. It starts no goroutine, except one that reports unfinished work every
// half second when WithMetrics is given; ShutDown ends it.
type Queue[K comparable] struct {
	// mu guards everything below it. Add of a key already queued at Normal
	// priority holds it for reading only (see Add); every other operation,
	// Get and Done included, holds it for writing.
	mu        sync.RWMutex
	keys      keyTable[K]
	normal    list
	low       list
	normalRun int           // normal dequeues in a row while low keys waited
	inFlight  int           // keys processing
	waiters   int           // Gets blocked in select
	woken     bool          // a token is in notify or being taken from it
	notify    chan struct{} // wakes a blocked Get; closed by ShutDown
	shutdown  bool
	drained   chan struct{} // closed when inFlight reaches 0 after ShutDown
	delay     delayState

	name      string
	clock     clock.Clock
	realClock bool // clock is clock.Real: read it with time.Since
	epoch     time.Time
	m         *meter // nil without WithMetrics

	// Backoff: either limiter, given to NewRateLimited, or the queue's own
	// per-key failure counts (node.failures) delayed by own's policy, and by
	// backoff.NewDefaultBucket when defaultBackoff is set. own's jitter
	// source is advanced under mu.
	limiter        backoff.Limiter[K]
	own            fastdelay.Delays
	defaultBackoff bool
	bucket         *backoff.Bucket[K] // made on the first AddRateLimited that needs it

	nRefused atomic.Int64 // adds of keys not equal to themselves (refused)
}

// New returns an empty queue configured by opts. With no options it uses
// the real clock, no metrics, and for AddRateLimited its own per-key
// failure counts with the delays of backoff.NewDefault (see
// AddRateLimited).
func New[K comparable](opts ...Option) *Queue[K] {
	return NewRateLimited[K](nil, opts...)
}

// NewRateLimited is New with l as the limiter behind AddRateLimited, Forget
// and NumRequeues instead of the queue's own failure counts; l then takes
// precedence over WithBackoff. A nil l (or a typed nil, such as a nil
// *backoff.PerKey) means New.
func NewRateLimited[K comparable](l backoff.Limiter[K], opts ...Option) *Queue[K] {
	q := new(Queue[K])
	q.Init(l, opts...)
	return q
}

// Init makes a zero Queue what NewRateLimited(l, opts...) returns, in
// place: for package queue, which holds its Queue by value. Init a Queue
// once, before any other use.
func (q *Queue[K]) Init(l backoff.Limiter[K], opts ...Option) {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	q.notify = make(chan struct{}, 1)
	q.name, q.clock = o.name, o.clock
	q.keys.init()
	q.normal.init()
	q.low.init()
	if nilness.IsNil(q.clock) {
		q.clock = clock.Real{}
	}
	_, q.realClock = q.clock.(clock.Real)
	q.epoch = q.clock.Now()
	if !nilness.IsNil(l) {
		q.limiter = l
	} else {
		p := backoff.DefaultPolicy()
		if o.backoff != nil {
			p = *o.backoff
		}
		q.own = fastdelay.NewDelays(p.Base, p.Factor, p.Cap, p.Jitter, p.Rand)
		q.defaultBackoff = o.backoff == nil
	}
	if !nilness.IsNil(o.metrics) {
		q.m = newMeter(o.metrics, q.name)
		go q.reportUnfinished()
	}
}

// Name returns the name given with WithName, or "".
func (q *Queue[K]) Name() string { return q.name }

// Add queues key at Normal priority, ready now.
//
//   - If key is already queued at Normal priority, Add does nothing.
//   - If key is queued Low, it moves to the back of the Normal list.
//   - If key is delayed, it stops waiting and is queued now, once.
//   - If key is processing, it is queued again when Done is called.
//
// After ShutDown, Add does nothing.
func (q *Queue[K]) Add(key K) {
	if key != key { // see refused
		q.refused(key)
		return
	}
	h := q.keys.hash(key)
	// The common duplicate, a key already queued at Normal priority and not
	// processing, changes nothing: look for it under the read lock, so that
	// duplicate Adds from many goroutines neither wait for each other nor
	// queue for the exclusive lock behind the workers' Gets and Dones.
	//
	// Returning then loses no update. Under the read lock no writer runs,
	// so the state read is the one an exclusive Add would have seen, and
	// an exclusive Add that saw it would have done nothing either (same
	// shutdown or not: after ShutDown Add does nothing anyway). The Get
	// that takes the key takes the exclusive lock after this read lock is
	// released, so the run it starts begins after this Add, which is all
	// an Add promises. A key that is processing is not skipped: the Add
	// must mark it dirty for a rerun after Done, and only a writer may.
	q.mu.RLock()
	if _, nd, _ := q.keys.lookup(key, h); nd != nil && nd.state&(readyNormal|processing|delayed) == readyNormal {
		q.mu.RUnlock()
		return
	}
	q.mu.RUnlock()
	q.mu.Lock()
	if !q.shutdown {
		q.add(key, h)
	}
	q.mu.Unlock()
}

func (q *Queue[K]) add(key K, h uint32) {
	n, nd, created := q.keys.insert(key, h)
	q.addNode(n, nd, created)
}

// addNode is add for node n, nd, just found or created by insert.
func (q *Queue[K]) addNode(n int32, nd *node[K], created bool) {
	if created {
		q.countAdd()
		q.enqueue(n, nd, Normal)
		return
	}
	if nd.state&delayed != 0 {
		q.heapRemove(n)
	}
	switch s := nd.state; {
	case s&processing != 0:
		if s&dirtyNormal == 0 {
			nd.state = s&^dirtyLow | dirtyNormal
			q.countAdd()
		}
	case s&readyLow != 0:
		q.unlink(&q.low, n, nd)
		nd.state &^= readyLow
		q.enqueue(n, nd, Normal)
	case s&readyNormal == 0: // it was only delayed
		q.countAdd()
		q.enqueue(n, nd, Normal)
	}
}

// AddLow queues key at Low priority, ready now, for work that can wait
// behind every normal add, such as a periodic resync. AddLow only ever adds
// work that was not there: if key is queued (at either priority), delayed
// or backed off, or already due to rerun after processing, AddLow does
// nothing, so a resync can neither erase a backoff nor hurry a delay. If key
// is processing with no rerun due, it is queued Low when Done is called.
//
// After ShutDown, AddLow does nothing.
func (q *Queue[K]) AddLow(key K) {
	if key != key { // see refused
		q.refused(key)
		return
	}
	h := q.keys.hash(key)
	q.mu.Lock()
	if !q.shutdown {
		q.addLow(key, h)
	}
	q.mu.Unlock()
}

// AddLowBatch is AddLow of each of keys, in order, for a caller that adds
// many keys at once, as a Loop's resync adds every key: it takes the
// queue's lock once per lowBatch keys rather than once per key, so the
// adder neither pays a lock and an unlock per key nor contends for the lock
// with the workers' Gets and Dones once per key. It hashes a batch before
// taking the lock. After ShutDown it does nothing.
func (q *Queue[K]) AddLowBatch(keys []K) {
	var hs [lowBatch]uint32
	for len(keys) > 0 {
		b := keys[:min(len(keys), lowBatch)]
		keys = keys[len(b):]
		for i, k := range b {
			if k != k { // see refused
				q.refused(k)
			}
			hs[i] = q.keys.hash(k)
		}
		q.mu.Lock()
		if q.shutdown {
			q.mu.Unlock()
			return
		}
		for i, k := range b {
			if k == k { // refused above otherwise
				q.addLow(k, hs[i])
			}
		}
		q.mu.Unlock()
	}
}

// refused is called by every add, instead of adding, for a key that is
// not equal to itself, and so could never be found again: a NaN float, or
// a struct, array or interface holding one. Held, such a key would stay
// processing forever (Done could not find it) and take a new node at every
// add. It counts the refusal; the first of a queue is logged, at Error, to
// slog.Default. The adds test key != key in their own body rather than
// through an inlined helper: for a string key, the common one, the
// comparison then compiles to nothing, not even the inlining's marker.
func (q *Queue[K]) refused(key K) {
	if q.nRefused.Add(1) == 1 {
		slog.Default().LogAttrs(context.Background(), slog.LevelError,
			"queue: refused a key that is not equal to itself (a NaN, or a value holding one), which could never be found again; further such keys are refused silently",
			slog.String("queue", q.name), slog.String("key", guard.Bound(fmt.Sprintf("%T %v", key, key), guard.MaxText)))
	}
}

// lowBatch is how many keys AddLowBatch adds under one hold of the lock:
// enough that the lock's cost per key is small, few enough that a Get
// waits for at most a few microseconds.
const lowBatch = 32

func (q *Queue[K]) addLow(key K, h uint32) {
	n, nd, created := q.keys.insert(key, h)
	if created || nd.state == 0 { // new, or kept only for its failure count
		q.countAdd()
		q.enqueue(n, nd, Low)
		return
	}
	if nd.state == processing { // not delayed, no rerun due
		nd.state |= dirtyLow
		q.countAdd()
	}
}

// Get hands out the next ready key, blocking until there is one. The caller
// owns the key until it calls Done, and must call Done exactly once for it.
//
// Get returns false, without a key, when ctx is done (checked first, so a
// cancelled worker takes no more keys), or once the queue is shut down and
// no key is ready.
func (q *Queue[K]) Get(ctx context.Context) (key K, ok bool) {
	key, _, ok = q.get(ctx, -1, true)
	return key, ok
}

// GetUntilShutDown is Get for a caller that shuts the queue down as soon
// as ctx ends (a Loop's term): its wait for a key watches the queue alone,
// a plain channel receive, rather than a select over the queue and ctx
// (per wait about 800 instructions less: 4.6k against 3.8k per op of
// BenchmarkGetWait, callgrind). Like Get, it
// returns false when ctx is done as it starts or when it wakes; one that
// waits when ctx ends wakes at the ShutDown, or at an Add before it.
func (q *Queue[K]) GetUntilShutDown(ctx context.Context) (key K, ok bool) {
	key, _, ok = q.get(ctx, -1, false)
	return key, ok
}

// GetStamped is Get for a caller that times its work on the queue's clock
// (see Stamp), so that the queue's metrics and the caller read the clock
// once for both. It also returns at, the stamp at which key was handed
// out: the end of its QueueLatency and the start of its WorkDuration.
//
// free is the stamp at which the caller became free to take a key,
// typically the stamp it gave its last DoneStamped, or 0 for none. When
// GetStamped does not wait and the key it hands out was ready by free, at
// is free and no clock is read; the time between free and the hand-out,
// the queue's own overhead, then counts as neither latency nor work.
// Otherwise at is read from the clock.
func (q *Queue[K]) GetStamped(ctx context.Context, free time.Duration) (key K, at time.Duration, ok bool) {
	k, a, ok := q.get(ctx, max(int64(free), 0), true)
	return k, time.Duration(a), ok
}

// Stamp returns the queue's clock as the time since the queue was created:
// the scale of GetStamped and DoneStamped. With the real clock it reads only
// the monotonic clock; inside a synctest bubble it reads the bubble's.
func (q *Queue[K]) Stamp() time.Duration { return time.Duration(q.stamp()) }

func (q *Queue[K]) stamp() int64 {
	if q.realClock {
		return int64(time.Since(q.epoch))
	}
	return int64(q.clock.Now().Sub(q.epoch))
}

// handOut ends a Get that took node n and must stamp it (metrics, or
// GetStamped): it stamps n, wakes a waiter if keys remain, unlocks, reports
// how long n waited, and returns the stamp (see GetStamped).
func (q *Queue[K]) handOut(n int32, free int64, waited bool) (at int64) {
	m := q.m
	if free > 0 && !waited && (m == nil || m.readyAt[n] <= free) {
		at = free
	} else {
		at = q.stamp()
	}
	var latency time.Duration
	if m != nil {
		latency = m.started(n, q.normal.n+q.low.n, at)
	}
	if q.waiters > 0 && q.normal.n+q.low.n > 0 {
		q.wake()
	}
	q.mu.Unlock()
	if m != nil {
		m.hooks.QueueLatency(latency) // out of the lock: an observation needs no order
	}
	return at
}

// get is Get, GetUntilShutDown (watchCtx false) and GetStamped. free < 0
// is Get: at is read only for metrics.
func (q *Queue[K]) get(ctx context.Context, free int64, watchCtx bool) (key K, at int64, ok bool) {
	if ctx.Err() != nil {
		return key, 0, false
	}
	ctxDone := doneIf(ctx, watchCtx)
	waited := false
	q.mu.Lock()
	for {
		if waited && q.endedLocked(ctx, watchCtx) {
			return key, 0, false
		}
		if len(q.delay.heap) > 0 && (q.normal.n+q.low.n == 0 || q.delay.skips >= promoteEvery-1) {
			q.promoteDue()
		} else {
			q.delay.skips++
		}
		if q.normal.n+q.low.n > 0 {
			n, nd := q.dequeue()
			nd.state |= processing
			q.inFlight++
			key = nd.key
			if q.m != nil || free >= 0 {
				return key, q.handOut(n, free, waited), true
			}
			if q.waiters > 0 && q.normal.n+q.low.n > 0 {
				q.wake()
			}
			q.mu.Unlock()
			return key, 0, true
		}
		if q.shutdown {
			q.mu.Unlock()
			return key, 0, false
		}
		timer := q.armTimer()
		q.waiters++
		q.mu.Unlock()
		woken, fired, cancelled := q.wait(ctxDone, timer)
		if cancelled {
			q.mu.Lock()
			q.waiters--
			q.mu.Unlock()
			return key, 0, false
		}
		waited = true
		q.mu.Lock()
		q.waiters--
		if fired {
			q.delay.armed = false
		}
		if woken {
			q.woken = false
		}
	}
}

// doneIf is ctx.Done() when watch is set, else nil: what get's wait
// selects on besides the queue.
func doneIf(ctx context.Context, watch bool) <-chan struct{} {
	if watch {
		return ctx.Done()
	}
	return nil
}

// endedLocked reports whether ctx ended, for a GetUntilShutDown (watched
// false) that woke (see get): then it passes on a wake-up it may have
// taken, and unlocks. A Get's wait watched ctx itself.
func (q *Queue[K]) endedLocked(ctx context.Context, watched bool) bool {
	if watched || ctx.Err() == nil {
		return false
	}
	if q.waiters > 0 && q.normal.n+q.low.n > 0 {
		q.wake()
	}
	q.mu.Unlock()
	return true
}

// Done tells the queue that the caller has finished processing key. If key
// was added while it was processing, it is queued again now, at the highest
// priority it was added with, and Done reports true. Done of a key that is
// not processing (never handed out, or already done) does nothing.
//
// Done works after ShutDown too: reruns recorded before ShutDown are queued,
// and ShutDownWithDrain returns once every handed-out key is done.
func (q *Queue[K]) Done(key K) (rerun bool) { return q.done(key, -1) }

// DoneStamped is Done with at, a Stamp the caller took when its work on key
// ended, as the end of key's WorkDuration and the ready time of a rerun it
// queues: the queue reads no clock. A negative at is read from the clock.
func (q *Queue[K]) DoneStamped(key K, at time.Duration) (rerun bool) { return q.done(key, int64(at)) }

func (q *Queue[K]) done(key K, at int64) bool {
	h := q.keys.hash(key)
	q.mu.Lock()
	n, nd, slot := q.keys.lookup(key, h)
	if nd == nil {
		q.mu.Unlock()
		return false
	}
	s := nd.state
	if s&processing == 0 {
		q.mu.Unlock()
		return false
	}
	nd.state = s &^ (processing | dirty)
	q.inFlight--
	m := q.m
	var work time.Duration
	if m != nil {
		if at < 0 {
			at = q.stamp()
		}
		work = m.finished(n, at)
	}
	switch {
	case s&dirtyNormal != 0:
		q.enqueueAt(n, nd, Normal, at)
	case s&dirtyLow != 0:
		q.enqueueAt(n, nd, Low, at)
	case s&delayed == 0 && nd.failures == 0:
		// Keeping the node, idle, for the key's next add would save a
		// removal and an allocation when a resync adds every key again,
		// but a bound on idle nodes below the number of keys thrashes:
		// each key re-added after its node was evicted evicts another
		// key's before that key is re-added (ca51e69, reverted).
		q.keys.removeAt(slot, nd)
	}
	if q.inFlight == 0 && q.drained != nil {
		close(q.drained)
		q.drained = nil
	}
	q.mu.Unlock()
	if m != nil {
		m.hooks.WorkDuration(work) // out of the lock: an observation needs no order
	}
	return s&dirty != 0
}

// Len returns the number of keys ready to be handed out, at both
// priorities. It does not count keys processing, nor delayed keys (AddAfter,
// AddRateLimited), which Delayed counts: a queue holding a million delayed
// keys has Len 0 and Delayed 1,000,000. Like any length of a concurrent
// queue, it may be stale by the time it is read.
func (q *Queue[K]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.delay.heap) > 0 {
		q.promoteDue()
	}
	return q.normal.n + q.low.n
}

// Delayed returns the number of keys waiting for a ready time (AddAfter,
// AddRateLimited); a key whose time has come is ready and counts in Len
// instead. Unlike Counts it does not walk the keys: it costs what Len
// costs. Metrics adapters read it (or Counts) for the delayed-keys gauge;
// Metrics.Depth, like client-go's workqueue_depth, counts ready keys only.
func (q *Queue[K]) Delayed() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.delay.heap) > 0 {
		q.promoteDue()
	}
	return len(q.delay.heap)
}

// wait blocks until a wake-up token or ShutDown (woken), the timer (fired),
// or ctx (cancelled). A plain receive costs less than a select, so the
// common cases of no deadline or no delayed key select on fewer channels.
func (q *Queue[K]) wait(ctxDone <-chan struct{}, timer <-chan time.Time) (woken, fired, cancelled bool) {
	switch {
	case ctxDone == nil && timer == nil:
		_, woken = <-q.notify
	case timer == nil:
		select {
		case _, woken = <-q.notify:
		case <-ctxDone:
			cancelled = true
		}
	case ctxDone == nil:
		select {
		case _, woken = <-q.notify:
		case <-timer:
			fired = true
		}
	default:
		select {
		case _, woken = <-q.notify:
		case <-timer:
			fired = true
		case <-ctxDone:
			cancelled = true
		}
	}
	return woken, fired, cancelled
}

func (q *Queue[K]) countAdd() {
	if q.m != nil {
		q.m.hooks.Added()
	}
}
