package reconcile

import (
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

// Add makes key due now, in the current term; it does nothing while the
// Loop does not lead (the next term starts with every key). A key on hold
// waits out its hold instead. Loop implements Sink, so code outside the
// sources may add keys too.
func (l *Loop[K]) Add(key K) {
	if t := l.cur.Load(); t != nil {
		l.addNow(t, key)
	}
}

// addNow adds key to t's queue now, or when its hold ends.
func (l *Loop[K]) addNow(t *term[K], key K) {
	if l.held.Load() > 0 {
		if d := l.holdLeft(key); d > 0 {
			t.q.AddAfter(key, d)
			return
		}
	}
	t.q.Add(key)
}

// AddLow makes key due at low priority in the current term (see Sink), or
// when its hold ends.
func (l *Loop[K]) AddLow(key K) {
	if t := l.cur.Load(); t != nil {
		if l.held.Load() > 0 {
			if d := l.holdLeft(key); d > 0 {
				t.q.AddAfter(key, d)
				return
			}
		}
		t.q.AddLow(key)
	}
}

// AddAfter makes key due after d in the current term (see Sink), and no
// earlier than its hold's end.
func (l *Loop[K]) AddAfter(key K, d time.Duration) {
	if t := l.cur.Load(); t != nil {
		l.addAfter(t, key, d)
	}
}

// addAfter adds key to t's queue after d, or when its hold ends if later.
func (l *Loop[K]) addAfter(t *term[K], key K, d time.Duration) {
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
	if l.held.Load() == 0 {
		return false
	}
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
	note := stalledNote{reason: ReasonOscillating, message: s.oscillated.Message()}
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
		s.holdUntil = time.Time{}
		l.held.Add(-1)
		if s.empty() {
			l.deleteKeyLocked(key)
		}
	}
	return d
}

// jittered returns d spread uniformly by ±j.
func jittered(d time.Duration, j float64) time.Duration {
	if j <= 0 {
		return d
	}
	return time.Duration(float64(d) * (1 + j*(2*rand.Float64()-1)))
}
