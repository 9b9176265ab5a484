package reconcile

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
)

// loopHooks is the contract between a Loop and the cache sources of this
// package (FromStore, FromOwned, FromCacheMapped), beyond Sink: the Loop
// passes itself as the Sink of Source.Run, and a cache source whose Sink
// has these methods judges the Loop's own writes by them and reports to it
// what it sees: writes feed oscillation detection, objects feed
// convergence tracking and the set of stalled objects. With a Sink that
// lacks them, a cache source delivers every change as a hint and reports
// panics to slog.Default. *Loop[string] implements it (cache sources hint
// object names). The methods are safe for concurrent use and take the
// Loop's lock briefly; a source calls them from the cache's handler,
// under its own lock, never the other way round.
type loopHooks interface {
	panicReporter
	// managers names the field managers the Loop's writes carry: the
	// reconciler's (WithFieldManager) and the Loop's own, for Stalled.
	managers() (reconciler, loop string)
	// judgeOwnWrites makes the Loop remember what its reconciles write,
	// for ownWrite. A source calls it once, as it starts.
	judgeOwnWrites()
	// ownWrite reports whether the write of revision rev to backend b
	// (backendID) by manager is the Loop's own: a reconcile of the Loop
	// wrote rev (reported; as manager, which the Loop then knows as its
	// own, and by the reconcile of by's key), or manager is a name the
	// Loop knows as its own.
	ownWrite(b any, manager string, rev int64) (by author, reported, own bool)
	// sawWrite tells the Loop that a cache delivered revision rev of
	// backend b under a name that judges it without ownWrite: the Loop
	// forgets the revision if a reconcile of its wrote it (reported), and
	// says by whom.
	sawWrite(b any, rev int64) (by author, reported bool)
	// missedHints tells the Loop of the keys a write of revision rev of
	// backend b would hint were it another's, when it was judged the
	// Loop's own by its writer's name alone (no report of rev yet): the
	// Loop adds those its author did not reconcile once the report says
	// who that was (see ownWrites.missed).
	missedHints(b any, rev int64, keys []string)
	// keepsState reports whether the Loop keeps state for key: only then
	// does another writer's change count for its oscillation detector.
	keepsState(key string) bool
	// holdEarly keeps w, the oscillation detector's part of the event of
	// revision rev of backend b that the source judged the Loop's own by
	// its writer's name before the write was reported (sawWrite or
	// ownWrite said so), until the report says who wrote it (see
	// ownWrites.hold). w is the source's to give: its paths are copies.
	holdEarly(b any, rev int64, w *earlyWrite)
	// observeWrite feeds key's oscillation detector one write. w's path
	// lists are the source's, reused for its next judgement once
	// observeWrite returns: copy them to keep them.
	observeWrite(key string, w oscillation.Write)
	// observeState reports key's object as the cache holds it: its
	// generation, its conditions (whose Ready=True condition says the
	// generation it observed: see readyGeneration, read only when
	// metrics are on), and whether it has a Stalled, not False, the Loop
	// owns. conds is the cache's: read it, never keep or modify it.
	observeState(key string, generation int64, conds []store.Condition, stalled bool)
	// deferJudgements registers flush, which makes the field-level
	// judgement a source deferred (see cacheSource.deferred), until the
	// returned remove is called: the Loop calls it before it observes a
	// write of its own that no cache event carries (a Stalled write), so
	// that its oscillation detector hears of the writes in the order they
	// were made.
	deferJudgements(flush func()) (remove func())
	// now reads the Loop's clock: the time of a write whose observation
	// waits (see cacheSource.deferred).
	now() time.Time
	// forgetKey drops everything the Loop keeps about a deleted object.
	forgetKey(key string)
	// inTerm reports whether a term runs: a key added now goes to its
	// queue, not to the pending set.
	inTerm() bool
}

var _ loopHooks = (*Loop[string])(nil)

// managers implements loopHooks.
func (l *Loop[K]) managers() (reconciler, loop string) { return l.cfg.manager, l.cfg.loopManager }

// inTerm implements loopHooks.
func (l *Loop[K]) inTerm() bool { return l.cur.Load() != nil }

// judgeOwnWrites implements loopHooks.
func (l *Loop[K]) judgeOwnWrites() { l.own.on.Store(true) }

// now implements loopHooks.
func (l *Loop[K]) now() time.Time { return l.clk.Now() }

// deferJudgements implements loopHooks.
func (l *Loop[K]) deferJudgements(flush func()) (remove func()) { return l.judges.add(flush) }

// deferredJudges are the flushes the Loop's cache sources registered
// (deferJudgements). Sources register once, as they start; the Loop calls
// them only before a Stalled write's observation, so a plain lock will do.
type deferredJudges struct {
	mu      sync.Mutex
	flushes []*func()
}

func (d *deferredJudges) add(flush func()) (remove func()) {
	p := &flush
	d.mu.Lock()
	defer d.mu.Unlock()
	d.flushes = append(d.flushes, p)
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.flushes = slices.DeleteFunc(d.flushes, func(q *func()) bool { return q == p })
	}
}

// flush calls every registered flush, outside the lock: a flush takes its
// source's lock, and observes through the Loop's.
func (d *deferredJudges) flush() {
	d.mu.Lock()
	fs := slices.Clone(d.flushes)
	d.mu.Unlock()
	for _, f := range fs {
		(*f)()
	}
}

// ownWrite implements loopHooks.
func (l *Loop[K]) ownWrite(b any, manager string, rev int64) (by author, reported, own bool) {
	by, reported, own, h := l.own.own(b, manager, rev)
	if len(h.ws) > 0 {
		l.hear(h)
	}
	return by, reported, own
}

// holdEarly implements loopHooks.
func (l *Loop[K]) holdEarly(b any, rev int64, w *earlyWrite) {
	l.hear(l.own.hold(b, rev, w))
	if l.own.waiting.Load() > 0 && l.busyWorkers() == 0 {
		l.hearAllHeld() // its reconcile returned already
	}
}

// hear feeds h's writes to its key's detector.
func (l *Loop[K]) hear(h heard) {
	if len(h.ws) == 0 {
		return
	}
	key, ok := any(&h.key).(*K)
	if !ok {
		return // cache sources hint object names: only a Loop[string] holds writes
	}
	for _, w := range h.ws {
		l.observe(*key, w)
	}
}

// missedHints implements loopHooks.
func (l *Loop[K]) missedHints(b any, rev int64, keys []string) {
	l.addKeys(l.own.missed(b, rev, keys))
}

// addKeys adds keys, strings: the keys of a Loop[string] (cache sources
// hint no other Loop).
func (l *Loop[K]) addKeys(keys []string) {
	for _, k := range keys {
		if key, ok := any(&k).(*K); ok {
			l.Add(*key)
		}
	}
}

// observeWrite feeds one write to key's oscillation detector. On a
// detection it logs at Error, counts the metric, and holds the key: it
// runs no earlier than the hold's end, however it is added (see sink.go and
// oscillationHold). A worker sets Stalled with conditions.ReasonOscillating at once
// (see heldBack), and it stays until one window after the hold ends (a
// reconcile that would clear it then runs the key again at that time: see
// record); a detection within that time doubles the next hold, one after
// it starts the holds over.
//
// A write held for key (see ownWrites.hold) is heard first, as the Loop's
// own: the detector hears a key's writes in the order they were made.
func (l *Loop[K]) observeWrite(key K, w oscillation.Write) {
	if l.own.waiting.Load() > 0 { // tested here: no call per event while none is held
		l.hearHeld(key)
	}
	l.observe(key, w)
}

// hearHeld hears the writes held for key (see ownWrites.hold) as the
// Loop's own: a source is about to judge or observe a later write of key.
// Callers test own.waiting first, so that no event pays a call for it.
func (l *Loop[K]) hearHeld(key K) {
	if k, ok := any(key).(string); ok {
		for _, h := range l.own.take(k, false) {
			l.hear(h)
		}
	}
}

// hearAllHeld hears every held write as the Loop's own. Callers call it
// when no reconcile of the Loop runs: no report can come for them any more
// (see ownWrites.hold).
func (l *Loop[K]) hearAllHeld() {
	for _, h := range l.own.take("", true) {
		l.hear(h)
	}
}

// observe is observeWrite without looking for held writes.
func (l *Loop[K]) observe(key K, w oscillation.Write) {
	if w.Time.IsZero() {
		w.Time = l.clk.Now()
	}
	l.mu.Lock()
	det := l.detectorLocked(key)
	if det == nil {
		if !w.Self && (len(l.keys) == 0 || l.keys[key] == nil) {
			// Writes by others matter only once self writes too: keep no
			// state for keys self never wrote.
			l.mu.Unlock()
			return
		}
		det = oscillation.NewShared(&l.cfg.osc) // l.cfg.osc is WithDefaults', never modified
		l.detectors.put(key, det)
		l.detectorsPeak = max(l.detectorsPeak, l.detectors.len())
		l.lastDetector = keyDetector[K]{key, det}
	}
	w.Owned, w.Foreign = l.paths.listOf(w.Owned), l.paths.listOf(w.Foreign)
	found := det.Observe(w)
	if len(found) == 0 {
		l.mu.Unlock()
		return
	}
	s := l.keys[key]
	if s == nil {
		s = &keyState{}
		l.setKeyLocked(key, s)
	}
	o := found[0]
	if w.Time.After(s.oscUntil) {
		// Quiet for a window since the last hold ended: start over.
		s.oscCount = 0
	}
	s.oscCount++
	delay := oscillationHold(l.cfg.osc.Window, s.oscCount, l.cfg.policy.Cap)
	if s.holdUntil.IsZero() {
		l.held.Add(1)
	}
	s.holdUntil = w.Time.Add(delay)
	if o.Kind == oscillation.Throttled {
		// Status following the world: paced by the hold, reported as
		// Throttled, never Stalled (see oscillation.Throttled).
		s.throttled = &o
	} else {
		s.oscillated, s.oscUntil, s.oscWritten = &o, s.holdUntil.Add(l.cfg.osc.Window), false
		s.stalled = &stalledNote{reason: conditions.ReasonOscillating, message: o.Message()}
	}
	l.mu.Unlock()

	for _, o := range found {
		l.metrics.Oscillation(l.name, o.Kind)
		lvl, msg := slog.LevelError, "oscillation detected"
		if o.Kind == oscillation.Throttled {
			lvl, msg = slog.LevelWarn, "status writes throttled"
		}
		l.log.LogAttrs(context.Background(), lvl, msg, slog.String("controller", l.name),
			keyAttr(key), slog.String("kind", o.Kind.String()), slog.Any("paths", o.Paths), slog.Int("writes", o.Writes),
			slog.Duration("hold", delay))
	}
	// A worker reports the oscillation as Stalled now (heldBack, or the
	// reconcile in flight: see record), without running the key, and
	// puts it back for the hold's end: the report stands while the key
	// is held, not from the hold's end on.
	if t := l.cur.Load(); t != nil {
		t.q.Add(key)
	}
}

// oscillationHold is how long a key is held after its n-th oscillation in
// a row: a sixth of the window, doubling, capped at the backoff cap (and at
// least a sixth of the window).
func oscillationHold(window time.Duration, n int, limit time.Duration) time.Duration {
	d := window / 6
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return max(min(d, limit), window/6)
}

// observeState feeds the convergence tracker and the set of objects that
// carry a Stalled condition of this Loop's (so that a healthy key needs no
// look before clearing it): stalled reports a Stalled condition, not False,
// that the Loop's manager owns. conds are the object's conditions, whose
// Ready=True condition the convergence tracker reads (readyGeneration).
func (l *Loop[K]) observeState(key K, generation int64, conds []store.Condition, stalled bool) {
	if !l.stalledTracked.Load() {
		l.stalledTracked.Store(true) // once: the workers read it before each reconcile
	}
	if !stalled && !l.metricsOn && l.nstalled.Load() == 0 {
		// Nothing to forget, nothing to count, and no write to the
		// count the workers read. Only cache sources' handlers change
		// the set, so an empty one can gain a key only by a handler
		// running at the same time, which may as well run after.
		return
	}
	var now time.Time
	var ready int64
	if l.metricsOn {
		now, ready = l.clk.Now(), readyGeneration(conds)
	}
	l.mu.Lock()
	if stalled {
		l.stalledObjs[key] = struct{}{}
	} else {
		delete(l.stalledObjs, key)
	}
	l.nstalled.Store(int64(len(l.stalledObjs)))
	if !l.metricsOn {
		l.mu.Unlock()
		return
	}
	d, ok := l.conv.observe(key, generation, ready, now)
	n := l.conv.unconverged()
	l.mu.Unlock()
	if ok {
		l.metrics.Converged(l.name, d)
	}
	l.metrics.Unconverged(l.name, n)
}

// sawWrite implements loopHooks.
func (l *Loop[K]) sawWrite(b any, rev int64) (by author, reported bool) {
	by, reported, h := l.own.seen(b, rev)
	if len(h.ws) > 0 {
		l.hear(h)
	}
	return by, reported
}

// keepsState reports whether the Loop keeps state for key (a keyState or
// a detector): observeWrite records another writer's change only then.
// It looks in detectors first: a key another writer changes that has
// state has a detector nearly always (its state is a detector alone once
// it converged), and each lookup in a map of every such key is a cache
// miss; keys, which holds few, is looked in only when not empty. The
// writes held for key are heard first: another writer's change is judged
// after them.
func (l *Loop[K]) keepsState(key K) bool {
	if l.own.waiting.Load() > 0 {
		l.hearHeld(key) // a held write of the Loop's may make the state
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.detectorLocked(key) != nil || (len(l.keys) > 0 && l.keys[key] != nil)
}

// detectorLocked returns key's detector, nil for none: lastDetector's when
// it is key's, else the one detectors holds, which becomes lastDetector.
func (l *Loop[K]) detectorLocked(key K) *oscillation.Detector {
	if d := l.lastDetector; d.det != nil && d.key == key {
		return d.det
	}
	det := l.detectors.get(key)
	if det != nil {
		l.lastDetector = keyDetector[K]{key, det}
	}
	return det
}

// forgetDetectorLocked removes key's detector from detectors, if it has
// one. Every removal goes through it, or clears lastDetector itself.
func (l *Loop[K]) forgetDetectorLocked(key K) {
	l.detectors.remove(key)
	if l.lastDetector.key == key {
		l.lastDetector = keyDetector[K]{}
	}
}

// forgetKey drops everything about a deleted object.
func (l *Loop[K]) forgetKey(key K) {
	if l.own.waiting.Load() > 0 {
		if k, ok := any(key).(string); ok {
			l.own.take(k, false) // a deleted object's writes no longer count
		}
	}
	l.mu.Lock()
	if s := l.keys[key]; s != nil {
		if !s.holdUntil.IsZero() {
			l.held.Add(-1)
		}
		l.clearAwaitLocked(s) // the deletion's hint runs the key
		l.deleteKeyLocked(key)
	}
	l.forgetDetectorLocked(key)
	l.forgetRerunsLocked(key)
	delete(l.stalledObjs, key)
	l.nstalled.Store(int64(len(l.stalledObjs)))
	l.conv.forget(key)
	n := l.conv.unconverged()
	l.mu.Unlock()
	l.metrics.Unconverged(l.name, n)
}
