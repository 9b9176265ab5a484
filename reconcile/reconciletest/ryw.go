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
