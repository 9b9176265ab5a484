package memstore

// Waiting returns how many watches are on the waiting list.
func (s *Store) Waiting() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	return len(s.waiting)
}

// WithAgingLag sets how many of the latest events keep their values in
// full (see history); 1 makes every older value a delta, so that tests
// read deltas after a few writes.
func WithAgingLag(n int64) Option {
	return func(c *config) { c.agingLag = max(n, 1) }
}

// HistoryDeltas returns how many old values the history keeps as deltas.
func (s *Store) HistoryDeltas() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	h, n := &s.hist, 0
	for r := h.first; r <= h.last; r++ {
		if ev := h.at(r); ev.valDelta || ev.prevDelta {
			n++
		}
	}
	return n
}

// HistoryBytes returns the bytes of values the history holds, as it counts
// them against WithHistoryBytes.
func (s *Store) HistoryBytes() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.hist.bytes
}

// MaxLagHistory is maxLagHistory, for the tests.
const MaxLagHistory = maxLagHistory

// BaseWindow is baseWindow, for the tests.
const BaseWindow = baseWindow

// WithoutSettle keeps a default window grown for a lagging watch grown, as
// it was before settle: tests compare with it.
func WithoutSettle() Option {
	return func(c *config) { c.settleOff = true }
}

// HistorySize returns how many events the history may hold.
func (s *Store) HistorySize() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.hist.size
}
