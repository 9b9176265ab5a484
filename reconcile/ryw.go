package reconcile

import (
	"context"
	"log/slog"
	"reflect"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/internal/wrote"
)

type recorderKey struct{}

// written is the highest revision a reconcile wrote to one backend. b is the
// backend's identity (backendID), nil when unknown: RecordWrite's revisions.
type written struct {
	b   any
	rev int64
}

// recorder collects, for one reconcile, the highest store revision it
// wrote to each backend. There is one per worker, reused for every
// reconcile.
type recorder struct {
	rev     atomic.Int64 // the highest revision written to any backend
	mu      sync.Mutex   // guards revs, and the first taking of id
	revs    []written    // by backend, usually one
	fresh   bool
	attempt int // see Attempt
	// own tells the Loop of every revision written, of object name by the
	// reconcile of key (keyed: the Loop's keys are strings, see stringKey),
	// so that its cache sources know the write as the Loop's own, and
	// whose (ownWrites).
	own   func(b any, name, key string, keyed bool, rev int64)
	key   string
	keyed bool
	// The reconcile's ID and logger (rlog.go): id is 0 until the ID is
	// first asked for, then the next of ids, the Loop's count of the IDs
	// it handed out; log is built on demand by logger.
	id       atomic.Uint64
	ids      *atomic.Uint64
	idPrefix string
	logger   func(*recorder) *slog.Logger
	log      atomic.Pointer[slog.Logger]
	// used: the reconcile wrote (rev), took an ID or built its logger,
	// which reset must clear; most do none of these.
	used atomic.Bool
	// The workers' recorders are allocated one after the other, and each
	// reconcile writes its own: the padding keeps two of them off a
	// cache line, so that one worker's reset does not evict the line
	// the other reads (false sharing).
	_ [64]byte
}

// reset readies r for the next reconcile (of the key that setKey set). It
// clears rev, id and log only when the last reconcile set them (used): a
// load is cheaper than the atomic stores. Small enough to inline.
func (r *recorder) reset(fresh bool, attempt int) {
	if r.used.Load() {
		r.clear() // out of line: most reconciles have nothing to clear
	}
	r.fresh, r.attempt = fresh, attempt
}

// setKey makes key the key of r's next reconcile: the author of its
// writes. Only a string key (a Loop[string]'s) is kept: the cache sources,
// which judge the writes, hint no other.
func setKey[K comparable](r *recorder, key K) {
	if s, ok := any(&key).(*string); ok {
		r.key, r.keyed = *s, true
	}
}

// clear forgets the last reconcile's writes, ID and logger.
func (r *recorder) clear() {
	if r.rev.Load() != 0 {
		r.rev.Store(0)
		r.mu.Lock()
		clear(r.revs)
		r.revs = r.revs[:0]
		r.mu.Unlock()
	}
	r.id.Store(0)
	r.log.Store(nil)
	r.used.Store(false)
}

// RecordWrite tells the Loop running the reconcile of ctx that it wrote
// revision rev (the revision a store write returned). When the reconcile
// returns Result{RequeueAfterWrite: true}, the key runs again once the Loop's caches
// hold the highest revision recorded (read-your-writes). It is safe to call
// from several goroutines, and does nothing for a ctx that does not come from
// a Loop or for rev ≤ 0.
//
// Writes through a typed store.Store made with the reconcile's ctx are
// recorded automatically, each with the backend it went to, and waited for
// only by the caches over that backend (revisions of two backends are
// unrelated counters). Call RecordWrite for writes the store does not see,
// such as those of another client whose revisions share the store's: a
// revision recorded so names no backend, and every cache source waits for
// it, so with caches over several backends prefer writing through a typed
// Store. Nor does it name the object written: its event is the Loop's own
// write for every key, a hint for none (see "Own writes and oscillation"
// in the package documentation).
func RecordWrite(ctx context.Context, rev int64) {
	r, ok := ctx.Value(recorderKey{}).(*recorder)
	if !ok {
		return
	}
	r.record(nil, "", rev)
}

// record keeps the highest revision seen for backend b, and tells the Loop
// of the write of object name ("" when unknown).
func (r *recorder) record(b any, name string, rev int64) {
	if rev <= 0 {
		return
	}
	b = backendID(b)
	if r.own != nil {
		r.own(b, name, r.key, r.keyed, rev)
	}
	r.used.Store(true)
	for {
		cur := r.rev.Load()
		if rev <= cur || r.rev.CompareAndSwap(cur, rev) {
			break
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.revs = wroteTo(r.revs, b, rev)
}

// wroteTo returns revs with rev recorded for backend b.
func wroteTo(revs []written, b any, rev int64) []written {
	for i := range revs {
		if revs[i].b == b {
			revs[i].rev = max(revs[i].rev, rev)
			return revs
		}
	}
	return append(revs, written{b: b, rev: rev})
}

// written returns a copy of what the reconcile wrote, or nil if nothing.
func (r *recorder) written() []written {
	if r.rev.Load() == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.revs)
}

// backendID returns the identity by which two writes, or a write and a
// cache, are known to share a backend: b itself, or nil (unknown) for a
// nil b or one whose type cannot be compared.
func backendID(b any) any {
	if b == nil || !reflect.TypeOf(b).Comparable() {
		return nil
	}
	return b
}

// sameBackend reports whether a revision of backend a is comparable with
// one of backend b: when they are the same backend, or when either is
// unknown (nil), which keeps the wait a Loop made before backends were
// told apart rather than skip one it may need.
func sameBackend(a, b any) bool { return a == nil || b == nil || a == b }

// target returns the revision a cache over backend b must reach to show
// revs: the highest of those written to b, 0 for none.
func target(b any, revs []written) int64 {
	var t int64
	for _, r := range revs {
		if sameBackend(b, r.b) {
			t = max(t, r.rev)
		}
	}
	return t
}

// FreshReadNeeded reports whether this reconcile follows a Requeue whose
// write the cache did not show within the read-your-writes timeout: the
// reconciler should read the object from the store rather than from the
// cache. It is false for a ctx that does not come from a Loop.
func FreshReadNeeded(ctx context.Context) bool {
	r, ok := ctx.Value(recorderKey{}).(*recorder)
	return ok && r.fresh
}

// requeueAfterWrite adds key once every cache holds what the reconcile
// wrote to its backend (revs), or after the read-your-writes timeout,
// marking the key for a fresh read then.
func (l *Loop[K]) requeueAfterWrite(t *term[K], key K, revs []written) {
	if !l.behind(revs) {
		l.addNow(t, key)
		return
	}
	t.bg.Go(func() {
		ctx, cancel := context.WithTimeout(t.ctx, l.cfg.rywTimeout)
		defer cancel()
		waited := false
		defer func() {
			if !waited {
				// A source's WaitFor called runtime.Goexit, which ends
				// this goroutine: the key must not be lost with it.
				l.userPanic("revisionWaiter.WaitFor", &guard.Panic{Value: guard.ErrGoexit, Stack: debug.Stack()})
				l.waitedFor(t, key, guard.ErrGoexit)
			}
		}()
		err := l.waitWritten(ctx, revs)
		waited = true
		l.waitedFor(t, key, err)
	})
}

// waitedFor adds key after requeueAfterWrite's wait, which ended with
// err, marked for a fresh read when the wait failed; nothing once the
// term is over.
func (l *Loop[K]) waitedFor(t *term[K], key K, err error) {
	if t.ctx.Err() != nil {
		return
	}
	if err != nil {
		l.mu.Lock()
		s := l.keys[key]
		if s == nil {
			s = &keyState{}
			l.setKeyLocked(key, s)
		}
		s.freshRead = true
		l.mu.Unlock()
	}
	l.addNow(t, key)
}

// lagging reports whether a cache source over st's backend (or over an
// unknown one) has yet to show st's stored revision.
func (l *Loop[K]) lagging(st *wrote.Stale) bool {
	b := backendID(st.Backend)
	for _, w := range l.waiters {
		if sameBackend(w.b, b) && w.Revision() < st.Revision {
			return true
		}
	}
	return false
}

// awaitStored makes key wait for the caches to hold st's stored revision:
// until they do, the key's hints do not run it (waitsForStored). They are
// the cache's events for states older than the stored one, and each pass
// would read a stale state and conflict again. The cache's event for the
// stored state (or a later one) hints the key and runs it, once. A pass
// that begins ends the wait, and decides the next run itself.
//
// In case that event is no hint (a predicate filters it, or it is judged
// the Loop's own write), the key is also added after the read-your-writes
// timeout, and at the end of each such window it runs if the caches hold
// the stored revision. If they advanced during the window, another window
// begins; if they did not advance at all (a cache that is not running,
// stuck, or relisting), the wait ends: the key is retried as a paced
// conflict is, the n-th in a row after backoff(n), marked for a fresh read
// (FreshReadNeeded), and the Loop warns, within the failure log's budget.
// No goroutine or timer of its own: the term's queue holds the window.
func (l *Loop[K]) awaitStored(t *term[K], key K, st *wrote.Stale) {
	floor := l.cacheFloor(backendID(st.Backend))
	until := l.clk.Now().Add(l.cfg.rywTimeout)
	l.mu.Lock()
	s := l.keys[key]
	if s == nil {
		s = &keyState{}
		l.setKeyLocked(key, s)
	}
	if s.awaited == nil {
		l.awaiting.Add(1)
	}
	s.awaited, s.awaitFloor, s.awaitUntil = st, floor, until
	l.mu.Unlock()
	t.q.AddAfter(key, l.cfg.rywTimeout)
}

// clearAwaitLocked ends s's wait for a stored revision, if it has one.
func (l *Loop[K]) clearAwaitLocked(s *keyState) {
	if s.awaited != nil {
		s.awaited, s.awaitFloor, s.awaitUntil = nil, 0, time.Time{}
		l.awaiting.Add(-1)
	}
}

// waitsForStored reports whether key, handed to a worker, waits for the
// caches to hold the revision its last pass conflicted with (awaitStored):
// then it must not run now, and is added again for the end of its window
// (it is processing, so the queue runs it then, after Done). It costs an
// atomic load while no key waits.
func (l *Loop[K]) waitsForStored(t *term[K], key K) bool {
	return l.awaiting.Load() > 0 && l.stillAwaits(t, key) // small enough to inline
}

// stillAwaits is waitsForStored for a Loop where some key waits.
func (l *Loop[K]) stillAwaits(t *term[K], key K) bool {
	l.mu.Lock()
	s := l.keys[key]
	if s == nil || s.awaited == nil {
		l.mu.Unlock()
		return false
	}
	st, floor0, until := s.awaited, s.awaitFloor, s.awaitUntil
	l.mu.Unlock()
	if !l.lagging(st) {
		return false // the pass's begin ends the wait
	}
	now := l.clk.Now()
	if left := until.Sub(now); left > 0 {
		t.q.AddAfter(key, left)
		return true
	}
	floor := l.cacheFloor(backendID(st.Backend))
	l.mu.Lock()
	s = l.keys[key]
	if s == nil || s.awaited != st {
		l.mu.Unlock()
		return false
	}
	if floor > floor0 {
		// The caches advance: they will deliver the stored state.
		s.awaitFloor, s.awaitUntil = floor, now.Add(l.cfg.rywTimeout)
		l.mu.Unlock()
		t.q.AddAfter(key, l.cfg.rywTimeout)
		return true
	}
	l.clearAwaitLocked(s)
	n := s.requeues + 1
	if n < 1 { // overflow-safe
		n = 1
	}
	s.requeues, s.freshRead = n, true
	l.mu.Unlock()
	delay := max(l.retry.Delay(key, n-1), 0)
	if t.qm != nil {
		t.qm.Retry()
	}
	if allow(&l.noise.first, &l.noise.firstDropped) {
		l.log.LogAttrs(t.ctx, slog.LevelWarn, "the cache did not advance toward the revision a write conflicted with (not running, stuck, or relisting?): retrying after backoff, told to read fresh",
			slog.String("controller", l.name), keyAttr(key), slog.Int64("storedRevision", st.Revision),
			slog.Int64("cacheRevision", floor), slog.Duration("stuckFor", l.cfg.rywTimeout), slog.Duration("backoff", delay))
	}
	t.q.AddAfter(key, delay)
	return true
}

// behind reports whether a cache source has yet to show revs.
func (l *Loop[K]) behind(revs []written) bool {
	for _, w := range l.waiters {
		if rev := target(w.b, revs); rev > 0 && w.Revision() < rev {
			return true
		}
	}
	return false
}

// waitWritten waits until every cache source shows revs: each the revision
// written to its own backend.
func (l *Loop[K]) waitWritten(ctx context.Context, revs []written) error {
	for _, w := range l.waiters {
		if rev := target(w.b, revs); rev > 0 && w.Revision() < rev {
			if err := w.WaitFor(ctx, rev); err != nil {
				return err
			}
		}
	}
	return nil
}

// cacheFloor returns the lowest revision every cache source over backend b
// (or over an unknown one) reflects.
func (l *Loop[K]) cacheFloor(b any) int64 {
	var f int64
	first := true
	for _, w := range l.waiters {
		if !sameBackend(w.b, b) {
			continue
		}
		if r := w.Revision(); first || r < f {
			f, first = r, false
		}
	}
	return f
}
