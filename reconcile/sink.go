package reconcile

import (
	"math/rand/v2"
	"time"
)

// Add makes key due now, in the current term; it does nothing while the
// Loop does not lead (the next term starts with every key). A key held back
// after an oscillation waits out its hold instead. Loop implements Sink, so
// code outside the sources may add keys too.
func (l *Loop[K]) Add(key K) {
	if t := l.cur.Load(); t != nil {
		l.addNow(t, key)
	}
}

// addNow adds key to t's queue now, or when its oscillation hold ends.
func (l *Loop[K]) addNow(t *term[K], key K) {
	if l.held.Load() > 0 {
		if d := l.holdLeft(key); d > 0 {
			t.q.AddAfter(key, d)
			return
		}
	}
	t.q.Add(key)
}

// AddLow makes key due at low priority in the current term (see Sink).
func (l *Loop[K]) AddLow(key K) {
	if t := l.cur.Load(); t != nil {
		t.q.AddLow(key)
	}
}

// AddAfter makes key due after d in the current term (see Sink).
func (l *Loop[K]) AddAfter(key K, d time.Duration) {
	if t := l.cur.Load(); t != nil {
		t.q.AddAfter(key, d)
	}
}

func (l *Loop[K]) holdLeft(key K) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.keys[key]; s != nil && !s.holdUntil.IsZero() {
		return s.holdUntil.Sub(l.clk.Now())
	}
	return 0
}

// jittered returns d spread uniformly by ±j.
func jittered(d time.Duration, j float64) time.Duration {
	if j <= 0 {
		return d
	}
	return time.Duration(float64(d) * (1 + j*(2*rand.Float64()-1)))
}
