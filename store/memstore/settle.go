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
// relist. It shrinks only once the furthest behind has a quarter of the
// window or less yet to read (or half the window at rest, to shrink to
// that), and lagGrow grows it only once a watch has seven eighths of it
// yet to read: a window just grown for a lagging watch (seven sixteenths
// of it yet to read) does not shrink, and one just shrunk (half of it,
// at most) does not grow until its watch falls further behind. The writes call settle every sixteenth of the window
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
	n := s.shrinkTo(lag)
	if !s.shrinks(n) || s.pinned() {
		return
	}
	if s.growBudget {
		b := int64(h.budget) * int64(max(n, baseWindow)) / int64(max(h.size, baseWindow))
		h.budget = max(s.baseBudget, int(b))
	}
	h.shrink(n)
	s.lagCheck = 0 // lagGrow looks at the next write
}

// shrinkTo returns the window settle shrinks the ring to while the live
// watch furthest behind has lag events yet to read.
func (s *Store) shrinkTo(lag int64) int { return int(max(int64(s.rest), 2*lag)) }

// shrinks reports whether settle shrinks the ring to n events. Callers
// hold s.mu.
func (s *Store) shrinks(n int) bool {
	return n <= s.hist.size/2 || n == s.rest && n < s.hist.size
}

// pinned reports whether settle must leave the window as it is for a
// listing (see listPin): one whose pages go on, or one that ended lately
// and no watch has started from yet. Callers hold s.mu for writing.
func (s *Store) pinned() bool {
	s.undoMu.Lock()
	defer s.undoMu.Unlock()
	s.prunePins()
	return len(s.pins) > 0
}

// prunePins forgets the listings settle need not keep any more: those
// whose revision the ring no longer holds, and those that ended long ago.
// Callers hold s.undoMu, and s.mu.
func (s *Store) prunePins() {
	for rev, p := range s.pins {
		if !s.hist.covers(rev) || p.open == 0 && s.hist.last-p.ended > int64(s.rest/2) {
			delete(s.pins, rev)
		}
	}
}

// maxPins bounds the listings settle keeps revisions for (see listPin).
const maxPins = 64

// listPin is what the Store knows of the listings at one revision: how
// many have pages left (their first page had a Continue, their last was
// not read yet), and the store revision when the last of them ended (0:
// none ended that no watch has started from). A listing pinned to a
// revision needs the events after it for its next page; one that ended
// needs them for the watch from its revision that usually follows (a
// Cache's relist), so settle leaves the window as it is while a listing
// has pages left, and for half the window at rest of writes after one
// ended, unless a watch from its revision starts first. A window settle
// shrank grows again for a listing with pages left (see lagGrow), not for
// one that ended: a Cache's periodic relist, which no watch follows, would
// grow it for nothing. Of more than maxPins revisions the oldest is
// forgotten.
type listPin struct {
	open  int32
	ended int64
}

// pin records a page of a listing at rev read (first, the first page;
// more, that it had a Continue). Callers hold s.mu for reading.
func (s *Store) pin(rev int64, first, more bool) {
	if !s.growHistory {
		return
	}
	s.undoMu.Lock()
	defer s.undoMu.Unlock()
	if s.pins == nil {
		s.pins = make(map[int64]listPin)
	}
	p, ok := s.pins[rev]
	if !ok && len(s.pins) >= maxPins {
		s.prunePins()
	}
	if !ok && len(s.pins) >= maxPins {
		oldest := rev
		for r := range s.pins {
			oldest = min(oldest, r)
		}
		delete(s.pins, oldest)
	}
	switch {
	case first && more:
		p.open++
	case !more:
		if !first && p.open > 0 {
			p.open--
		}
		p.ended = s.hist.last
	}
	s.pins[rev] = p
}

// pinnedBefore reports whether the ring holds the revision, older than
// rev, of a listing with pages left. Callers hold s.mu for writing.
func (s *Store) pinnedBefore(rev int64) bool {
	s.undoMu.Lock()
	defer s.undoMu.Unlock()
	for r, p := range s.pins {
		if p.open > 0 && s.hist.covers(r) && r < rev {
			return true
		}
	}
	return false
}

// unpin records a watch from rev started: the listings that ended at rev,
// if any, need the events after it no more. Callers hold s.mu for writing.
func (s *Store) unpin(rev int64) {
	s.undoMu.Lock()
	if p, ok := s.pins[rev]; ok {
		if p.open == 0 {
			delete(s.pins, rev)
		} else {
			s.pins[rev] = listPin{open: p.open}
		}
	}
	s.undoMu.Unlock()
}
