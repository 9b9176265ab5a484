package memstore

// Waiting returns how many watches are on the waiting list.
func (s *Store) Waiting() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	return len(s.waiting)
}
