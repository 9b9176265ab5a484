package store

// manageCreate records the fields a Create sets as owned by manager.
func (s *Store[S, T]) manageCreate(next *rawObject, manager string) error { return nil }

// manageUpdate records the fields an Update changed as owned by manager.
func (s *Store[S, T]) manageUpdate(cur, next *rawObject, manager string) error { return nil }

// manageStatus records the status fields an UpdateStatus changed as owned by
// manager.
func (s *Store[S, T]) manageStatus(cur, next *rawObject, manager string) error { return nil }
