package memstore

// settle shrinks the default window, grown while a watch lagged (see
// lagGrow), back toward its size at rest as the live watches catch up: to
// the window at rest, or to twice what the live watch furthest behind has
// yet to read if that is more. The grown window's old values, which no
// watch needed any more, were the heap a controller kept after a burst
// for as long as the Store lived, a third more than client-go's informer
// (30.6 against 21.3 MiB at 10,000 objects, drained).
//
// No live watch expires that the grown window would have kept: settle
// keeps every event a live watch has yet to read, and a shrunk window
// grows again for a lagging watch as far as it ever grew (see lagGrow).
// Nor does a listing (see listPin): settle keeps the events after a
// listing with pages left as it keeps a lagging watch's, and shrinks
// nothing while one that ended lately has no watch from its revision yet,
// or while no watch is live (one that ended may be about to relist).
//
// It shrinks only once the furthest behind has a quarter of the window
// or less yet to read (or half the window at rest, to shrink to that),
// and lagGrow grows it only once a watch has seven eighths of it yet to
// read: a window just grown (seven sixteenths of it yet to read) does not
// shrink, and one just shrunk (half of it at most) does not grow until
// its watch falls further behind. The writes call settle every sixteenth
// of the window at rest (settleCheck), and so does a watch that nears the
// store revision (see watch.Read). The budget of values shrinks in
// proportion, as it grew. Callers hold s.mu for writing.
func (s *Store) settle() {
	h := &s.hist
	if s.settleOff || len(s.live) == 0 {
		return
	}
	s.settleCheck = h.last + int64(max(s.rest/16, 1))
	lag, ended := s.pinned()
	for w := range s.live {
		lag = max(lag, h.last-w.cursor)
	}
	n := s.shrinkTo(lag)
	if ended || !s.shrinks(n) {
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

// pinned returns how many writes ago the oldest listing with pages left
// began (0 for none), and reports whether a listing ended lately that no
// watch has started from yet (see listPin). Callers hold s.mu for writing.
func (s *Store) pinned() (lag int64, ended bool) {
	s.undoMu.Lock()
	defer s.undoMu.Unlock()
	s.prunePins()
	for rev, p := range s.pins {
		if p.open > 0 {
			lag = max(lag, s.hist.last-rev)
		}
		ended = ended || p.ended != 0
	}
	return lag, ended
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
// revision needs the events after it for its next page, so settle keeps
// them, and a window settle shrank grows again for it (see lagGrow), as
// for a live watch at its revision that reads nothing. One that ended
// needs them for the watch from its revision that usually follows (a
// Cache's relist), so settle leaves the window as it is for half the
// window at rest of writes after it ended, unless a watch from its
// revision starts first; the window does not grow for it: a Cache's
// periodic relist, which no watch follows, would grow it for nothing. Of
// more than maxPins revisions the oldest is forgotten.
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
