package reconciletest

import (
	"slices"
	"strings"
	"time"
)

// ryw is a requeue the Loop holds until the process's caches show a write
// (read-your-writes): it adds the key from a goroutine of its own as soon
// as the last cache reaches rev.
//
// That goroutine is the one thing the scheduler cannot hold at a gate, so
// the scheduler makes sure its wake-up is a step of its own: the last cache
// to reach rev always gets there by a progress mark or a listing, never by
// an event, whose hint would race the requeue to the queue. Events move a
// cache one revision at a time (deliver sends a progress mark to just below
// an event first), so only the event at rev itself could complete the wait;
// while the cache that will receive it (the owner: the cache of the key
// written at rev) is below rev, every other cache of the process is held
// below rev. A listing by a cache below rev is served below rev too.
type ryw struct {
	p     *Process
	sp    *space // the space written: rev is one of its revisions
	rev   int64
	owner string    // the prefix of the cache that receives the event at rev
	until time.Time // the Loop stops waiting then (read-your-writes timeout)
}

// awaitWrite records that the Loop waits for p's caches over space sp to
// hold rev, the revision of a write of key (tagged with sp's tag).
func (w *world) awaitWrite(p *Process, sp *space, key string, rev int64) {
	owner := ""
	for pfx := range p.byPfx {
		if strings.HasPrefix(key, pfx) {
			owner = pfx
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ryws = append(w.ryws, ryw{p: p, sp: sp, rev: rev, owner: owner, until: time.Now().Add(readYourWritesCap)})
}

// cacheRevs returns the revision of every cache of the current process, by
// the prefix it lists. It must be called without w.mu, from the scheduler's
// goroutine: the map is the scheduler's, refilled at each call (a step
// calls it up to three times), and valid until the next.
func (w *world) cacheRevs() map[string]int64 {
	w.mu.Lock()
	p := w.proc
	w.mu.Unlock()
	if w.revs == nil {
		w.revs = map[string]int64{}
	}
	clear(w.revs)
	if p == nil {
		return w.revs
	}
	for pfx, rev := range p.byPfx {
		w.revs[pfx] = rev()
	}
	return w.revs
}

// settleRywsLocked drops the requeues that have woken: their caches hold
// the write, they timed out, or their process is gone.
func (w *world) settleRywsLocked(now time.Time) {
	out := w.ryws[:0]
	for _, r := range w.ryws {
		if r.p.isDead() || !now.Before(r.until) || r.p.holds(r.sp, r.rev) {
			continue
		}
		out = append(out, r)
	}
	clear(w.ryws[len(out):])
	w.ryws = out
}

// holdLocked returns the revision s may not pass now (no event delivered
// above it, no progress mark past it), or 0 for no limit. revs are the
// caches' revisions (cacheRevs).
func (w *world) holdLocked(s *stream, revs map[string]int64) int64 {
	var hold int64
	for _, r := range w.ryws {
		if r.p != s.p || r.sp != s.sp || s.sent >= r.rev || r.owner == "" || r.owner == s.prefix {
			continue
		}
		if at, ok := revs[r.owner]; ok && at >= r.rev {
			continue
		}
		if hold == 0 || r.rev-1 < hold {
			hold = r.rev - 1
		}
	}
	return hold
}

// capLocked returns how far s may move from revision from towards to in
// one step: short of the second awaited write it would complete, so that
// no step wakes two requeues (whose adds would race each other). revs are
// the caches' revisions (cacheRevs).
func (w *world) capLocked(s *stream, from, to int64, revs map[string]int64) int64 {
	var done []int64
	for _, r := range w.ryws {
		if r.p != s.p || r.sp != s.sp || r.rev <= from || r.rev > to {
			continue
		}
		others := true
		for pfx, at := range revs {
			if pfx != s.prefix && w.spaceOf(pfx) == r.sp && at < r.rev {
				others = false
			}
		}
		if others {
			done = append(done, r.rev)
		}
	}
	if len(done) < 2 {
		return to
	}
	slices.Sort(done)
	return done[1] - 1
}

// listPin returns the revision a listing of prefix by p is served at, 0
// for the current one. A relist jumps its cache to the listing's revision
// and reports what changed as hints, all in one step; so while a requeue
// waits for a write this cache has not reached, the listing is served just
// below that write (as a lagging replica would), and the watch that follows
// brings the cache the rest under the holds above.
func (w *world) listPin(p *Process, sp *space, prefix string) int64 {
	cur, ok := p.byPfx[sp.tag+prefix]
	if !ok {
		return 0
	}
	at := cur()
	w.mu.Lock()
	defer w.mu.Unlock()
	var pin int64
	for _, r := range w.ryws {
		if r.p == p && r.sp == sp && r.rev > at && (pin == 0 || r.rev-1 < pin) {
			pin = r.rev - 1
		}
	}
	if pin >= sp.mem.Revision() {
		return 0
	}
	return pin
}
