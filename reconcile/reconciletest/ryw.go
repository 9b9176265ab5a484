package reconciletest

import (
	"time"
)

// ryw is a requeue the Loop holds until the process's caches show a write
// (read-your-writes): it adds the key from a goroutine of its own as soon
// as the last cache reaches rev.
//
// That goroutine is the one thing the scheduler cannot hold at a gate, so
// the scheduler makes sure its wake-up is a step of its own: the last cache
// to reach rev always gets there by a progress mark, never by an event,
// whose hint would race the requeue to the queue. While a requeue waits for
// rev and a stream still has an event at or below rev to deliver, every
// other stream of the process is held below rev (no event past it, no
// progress mark past it). The events at or below rev go first; then the
// progress marks bring the others past rev, and the requeue wakes alone.
type ryw struct {
	p     *Process
	rev   int64
	until time.Time // the Loop stops waiting then (read-your-writes timeout)
}

// awaitWrite records that the Loop waits for p's caches to hold rev.
func (w *world) awaitWrite(p *Process, rev int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ryws = append(w.ryws, ryw{p: p, rev: rev, until: time.Now().Add(readYourWritesCap)})
}

// settleRywsLocked drops the requeues that have woken: their caches hold
// the write, they timed out, or their process is gone.
func (w *world) settleRywsLocked(now time.Time) {
	out := w.ryws[:0]
	for _, r := range w.ryws {
		if r.p.isDead() || !now.Before(r.until) || r.p.holds(r.rev) {
			continue
		}
		out = append(out, r)
	}
	clear(w.ryws[len(out):])
	w.ryws = out
}

// holdLocked returns the revision s may not pass now (no event delivered
// above it, no progress mark past it), or 0 for no limit.
func (w *world) holdLocked(s *stream) int64 {
	var hold int64
	for _, r := range w.ryws {
		if r.p != s.p || s.sent >= r.rev {
			continue
		}
		for _, o := range w.streams {
			if o == s || o.p != s.p || o.closed || len(o.pending) == 0 || o.pending[0].Revision > r.rev {
				continue
			}
			if hold == 0 || r.rev-1 < hold {
				hold = r.rev - 1
			}
		}
	}
	return hold
}

// listPin returns the revision a listing of prefix by p is served at, 0
// for the current one. A relist jumps its cache to the listing's revision
// and reports what changed as hints, all in one step; so while a requeue
// waits for a write this cache has not reached, the listing is served just
// below that write (as a lagging replica would), and the watch that follows
// brings the cache the rest under the holds above.
func (w *world) listPin(p *Process, prefix string) int64 {
	cur, ok := p.byPfx[prefix]
	if !ok {
		return 0
	}
	at := cur()
	w.mu.Lock()
	defer w.mu.Unlock()
	var pin int64
	for _, r := range w.ryws {
		if r.p == p && r.rev > at && (pin == 0 || r.rev-1 < pin) {
			pin = r.rev - 1
		}
	}
	if pin >= w.mem.Revision() {
		return 0
	}
	return pin
}
