package memstore

// settle shrinks the default window, grown while a watch lagged (see
// lagGrow), back to its size at rest once every live watch has caught up
// (none has more than half the window at rest yet to read): the grown
// window's old values were the heap a controller kept after a burst, a
// third more than client-go's informer (30.6 against 21.3 MiB at 10,000
// objects, drained), for as long as the Store lived. It keeps every event
// a live watch has yet to read, and a shrunk window grows again for a
// lagging watch as far as it ever grew (see lagGrow), so no live watch
// expires that the grown window would have kept. Nor does it shrink while
// the window holds the revision of a listing no watch has started from
// yet (see pin): a Cache that relists reads its pages pinned to that
// revision, then watches from it, and both would have found the grown
// window, however far the writes went meanwhile. It shrinks only to half
// the window or less (or to the window at rest), and lagGrow grows it
// again only once a watch has seven eighths of it yet to read: a watch
// that keeps up within half the window neither shrinks it nor grows it
// back. The budget of values shrinks in proportion, as it grew. Callers
// hold s.mu for writing.
func (s *Store) settle() {
	h := &s.hist
	if s.settleOff {
		return
	}
	s.settleCheck = h.last + int64(max(s.rest/16, 1))
	keep := h.last + 1 - int64(s.rest) // the oldest revision the window at rest holds
	for w := range s.live {
		if w.cursor < h.last-int64(s.rest/2) {
			return // it lags yet
		}
		keep = min(keep, w.cursor+1)
	}
	if s.pinned() {
		return
	}
	n := max(s.rest, int(h.last+1-keep))
	if n >= h.size || (n > s.rest && n > h.size/2) {
		return
	}
	if s.growBudget {
		b := int64(h.budget) * int64(max(n, baseWindow)) / int64(max(h.size, baseWindow))
		h.budget = max(s.baseBudget, int(b))
	}
	h.shrink(n)
	s.lagCheck = 0 // lagGrow looks at the next write
}

// pinned reports whether the ring holds the revision of a listing no watch
// has started from yet, forgetting those it no longer holds. Callers hold
// s.mu for writing.
func (s *Store) pinned() bool {
	s.undoMu.Lock()
	defer s.undoMu.Unlock()
	for rev := range s.pins {
		if !s.hist.covers(rev) {
			delete(s.pins, rev) // the grown window dropped it too
		}
	}
	return len(s.pins) > 0
}

// maxPins bounds the listings whose revision settle keeps (see pin).
const maxPins = 64

// pin records a listing read at rev, as its first page is: its later
// pages are pinned to rev, and a watch from rev follows a Cache's relist,
// so settle leaves the window as it is until a watch from rev starts
// (unpin), or until the window drops rev anyway. Of more than maxPins
// listings no watch has started from, the oldest is forgotten: listings
// no watch follows. A Store listed often at its revision and watched from
// elsewhere settles only once it is listed less often than the window's
// writes. Callers hold s.mu for reading.
func (s *Store) pin(rev int64) {
	if !s.growHistory {
		return
	}
	s.undoMu.Lock()
	defer s.undoMu.Unlock()
	if s.pins == nil {
		s.pins = make(map[int64]int32)
	}
	if _, ok := s.pins[rev]; !ok && len(s.pins) >= maxPins {
		oldest := rev
		for r := range s.pins {
			oldest = min(oldest, r)
		}
		delete(s.pins, oldest)
	}
	s.pins[rev]++
}

// unpin records a watch from rev started: the listing read at rev, if any,
// needs the events after it no more. Callers hold s.mu for writing.
func (s *Store) unpin(rev int64) {
	s.undoMu.Lock()
	if n := s.pins[rev]; n > 1 {
		s.pins[rev] = n - 1
	} else if n == 1 {
		delete(s.pins, rev)
	}
	s.undoMu.Unlock()
}
