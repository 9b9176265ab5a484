package memstore

// Waiting returns how many watches are on the waiting list.
func (s *Store) Waiting() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	return len(s.waiting)
}

// Retained returns how many events the history holds, and its ring's slots.
func (s *Store) Retained() (events, slots int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return int(s.hist.len()), len(s.hist.buf)
}
