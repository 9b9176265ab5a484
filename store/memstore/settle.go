package memstore

// settle shrinks the default window, grown while a watch lagged (see
// lagGrow), back toward its size at rest as the live watches catch up:
// to the window at rest, or twice what the live watch furthest behind has
// yet to read if that is more. The grown window's old values were the
// heap a controller kept after a burst, a third more than client-go's
// informer (30.6 against 21.3 MiB at 10,000 objects, drained), for as
// long as the Store lived. It keeps every event a live watch has yet to
// read, and a shrunk window grows again for a lagging watch as far as it
// ever grew (see lagGrow), so no live watch expires that the grown window
// would have kept. Nor does it shrink while the window holds the revision
// of a listing no watch has started from yet (see pin): a Cache that
// relists reads its pages pinned to that revision, then watches from it,
// and both would have found the grown window, however far the writes went
// meanwhile; nor while no watch is live: one that ended may be about to
// relist. It shrinks by an eighth of the window at least, and lagGrow
// grows it again only once a watch has seven eighths of it yet to read:
// a watch whose lag wavers by less than that neither shrinks the window
// nor grows it back. The writes call settle every sixteenth of the window
// at rest (settleCheck), and so does a watch that nears the store
// revision (see watch.Read). The budget of values shrinks in proportion,
// as it grew. Callers hold s.mu for writing.
func (s *Store) settle() {
	h := &s.hist
	if s.settleOff || len(s.live) == 0 {
		return
	}
	s.settleCheck = h.last + int64(max(s.rest/16, 1))
	var lag int64
	for w := range s.live {
		lag = max(lag, h.last-w.cursor)
	}
	n := int(max(int64(s.rest), 2*lag))
	if !shrinks(n, h.size) || s.pinned() {
		return
	}
	if s.growBudget {
		b := int64(h.budget) * int64(max(n, baseWindow)) / int64(max(h.size, baseWindow))
		h.budget = max(s.baseBudget, int(b))
	}
	h.shrink(n)
	s.lagCheck = 0 // lagGrow looks at the next write
}

// shrinks reports whether settle shrinks a window of size events to n:
// by an eighth at least.
func shrinks(n, size int) bool { return n <= size-size/8 }

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

// pinnedBefore reports whether the ring holds the revision of a listing no
// watch has started from yet older than rev. Callers hold s.mu for
// writing.
func (s *Store) pinnedBefore(rev int64) bool {
	s.undoMu.Lock()
	defer s.undoMu.Unlock()
	for r := range s.pins {
		if s.hist.covers(r) && r < rev {
			return true
		}
	}
	return false
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
