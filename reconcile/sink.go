package reconcile

import (
	"github.com/steady-go/steady/reconcile/conditions"

	"context"
	"log/slog"
	"math"
	"math/rand/v2"
	"time"
)

// Holds. A key held after an oscillation (or a spent write budget) runs no
// earlier than its hold's end, however it was added: every add of this file
// is pushed to the hold's end, and a worker that is handed a held key anyway
// (a delay set before the hold began, which the queue keeps because it is
// earlier) puts it back until then without running it (heldBack). A
// reconciler's RequeueAfter, a hint, resync and the Sink methods all obey
// the one rule.

// Add makes key due now, in the current term. A key on hold waits out its
// hold instead. A key added while it runs runs once more when its pass
// ends; one added again during each of 20 of its passes in a row is held
// for a backoff delay before each further rerun, and logged at Warn, until
// a pass ends with no add (so a reconciler that adds its own key never
// spins). While no term runs (before the first, between terms, and
// while the Loop does not lead) the key is kept in a deduplicated pending
// set and added to the next term's queue when it begins, with the keys the
// term lists (a key both pending and listed runs once); past maxPending
// pending keys, further keys are dropped and the first drop of each gap
// between terms is logged at Warn. Pending keys are discarded when Run
// returns. Loop implements Sink, so code outside the sources may add keys
// too.
func (l *Loop[K]) Add(key K) {
	if t := l.cur.Load(); t != nil {
		l.addNow(t, key)
		return
	}
	l.park(key, true)
}

// maxPending bounds the keys a Loop keeps while no term runs (see Add): a
// source that hints a flood while the Loop does not lead costs bounded
// memory, and the next term's listing repairs what listers list. It does
// not bound a first listing: FromStore's source keeps no hint for a name
// the next term lists (only deletions), so a cache of any size starts
// its first term whole, with nothing pending.
const maxPending = 100_000

// pendingKeys is the set of keys added while no term runs: true for Add,
// false for AddLow. order keeps them in the order they first came, so a
// run is replayable (map order is random). dropped counts the keys refused
// past the cap in this gap between terms.
type pendingKeys[K comparable] struct {
	keys    map[K]bool
	order   []K
	dropped int
}

// park adds key to the pending set, or to the current term if one began
// since the caller looked.
func (l *Loop[K]) park(key K, high bool) {
	l.pmu.Lock()
	defer l.pmu.Unlock()
	if t := l.cur.Load(); t != nil {
		if high {
			l.addNow(t, key)
		} else {
			l.addLow(t, key)
		}
		return
	}
	p := &l.pending
	if was, ok := p.keys[key]; ok {
		p.keys[key] = was || high
		return
	}
	if len(p.keys) >= l.pendingCap {
		p.dropped++
		if p.dropped == 1 {
			l.log.LogAttrs(context.Background(), slog.LevelWarn, "pending keys full; dropping keys added until the next term",
				slog.String("controller", l.name), slog.Int("cap", l.pendingCap), keyAttr(key))
		}
		return
	}
	if p.keys == nil {
		p.keys = map[K]bool{}
	}
	p.keys[key] = high
	p.order = append(p.order, key)
}

// addNow adds key to t's queue now, or when its hold ends.
func (l *Loop[K]) addNow(t *term[K], key K) {
	if !l.owns(key) {
		return
	}
	if l.held.Load() > 0 {
		if d := l.holdLeft(key); d > 0 {
			t.q.AddAfter(key, d)
			return
		}
	}
	t.q.Add(key)
}

// AddLow makes key due at low priority in the current term (see Sink), or
// when its hold ends. While no term runs it is kept like Add's keys, for
// the next term.
func (l *Loop[K]) AddLow(key K) {
	if t := l.cur.Load(); t != nil {
		l.addLow(t, key)
		return
	}
	l.park(key, false)
}

// addLow adds key to t's queue at low priority, or when its hold ends.
func (l *Loop[K]) addLow(t *term[K], key K) {
	if !l.owns(key) {
		return
	}
	if l.held.Load() > 0 {
		if d := l.holdLeft(key); d > 0 {
			t.q.AddAfter(key, d)
			return
		}
	}
	t.q.AddLow(key)
}

// AddAfter makes key due after d in the current term (see Sink), and no
// earlier than its hold's end. While no term runs it does nothing: a delay
// is a retry of the term's, and a new term starts its keys afresh.
func (l *Loop[K]) AddAfter(key K, d time.Duration) {
	if t := l.cur.Load(); t != nil {
		l.addAfter(t, key, d)
	}
}

// addAfter adds key to t's queue after d, or when its hold ends if later.
func (l *Loop[K]) addAfter(t *term[K], key K, d time.Duration) {
	if !l.owns(key) {
		return
	}
	if l.held.Load() > 0 {
		d = max(d, l.holdLeft(key))
	}
	t.q.AddAfter(key, d)
}

// heldBack reports whether key, handed to a worker, is on hold; if so it
// is added again for the hold's end (it is processing, so the queue runs it
// then, after Done) and must not run now. An oscillation no reconcile has
// reported yet is written as Stalled now: a detection adds the key at once
// for that (see observeWrite).
func (l *Loop[K]) heldBack(t *term[K], key K) bool {
	return l.held.Load() > 0 && l.holdBack(t, key) // small enough to inline
}

// holdBack is heldBack for a Loop that holds some key.
func (l *Loop[K]) holdBack(t *term[K], key K) bool {
	d := l.holdLeft(key)
	if d <= 0 {
		return false
	}
	l.reportHeld(t, key)
	t.q.AddAfter(key, d)
	return true
}

// reportHeld writes Stalled=Oscillating for key's oscillation if it has not
// been written since its detection, as record does for a reconcile.
func (l *Loop[K]) reportHeld(t *term[K], key K) {
	l.mu.Lock()
	s := l.keys[key]
	if s == nil || s.oscillated == nil || s.oscWritten {
		l.mu.Unlock()
		return
	}
	note := stalledNote{reason: conditions.ReasonOscillating, message: s.oscillated.Message()}
	s.oscWritten, s.stalled = true, &note
	newly := s.counted != note.reason
	s.counted = note.reason
	l.mu.Unlock()
	l.writeStalled(t, key, stalledSet, note, newly)
}

// holdLeft returns how long key's hold lasts from now, 0 when it has none.
// A hold found over is dropped.
func (l *Loop[K]) holdLeft(key K) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.keys[key]
	if s == nil || s.holdUntil.IsZero() {
		return 0
	}
	d := s.holdUntil.Sub(l.clk.Now())
	if d <= 0 {
		s.holdUntil, s.throttled = time.Time{}, nil
		l.held.Add(-1)
		if s.empty() {
			l.deleteKeyLocked(key)
		}
	}
	return d
}

// jittered returns d spread uniformly by ±j, at most the longest Duration:
// a period near math.MaxInt64 (a user's "never") spread upward would
// otherwise convert to a negative wait, that is, at once.
func jittered(d time.Duration, j float64) time.Duration {
	if j <= 0 {
		return d
	}
	f := float64(d) * (1 + j*(2*rand.Float64()-1))
	if f >= math.MaxInt64 { // float64(math.MaxInt64) is 2^63, one past the largest
		return math.MaxInt64
	}
	return time.Duration(f)
}
