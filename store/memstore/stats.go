package memstore

import "sync/atomic"

// Stats counts the calls a Store has served since New: each call counts once,
// whether or not it succeeded. The essay-claims tests use it to show that a
// steady-state pass reads nothing from the store.
type Stats struct {
	Gets    int64
	Lists   int64 // one per page
	Txns    int64
	Watches int64
}

// Sub returns the calls made between an earlier snapshot and s.
func (s Stats) Sub(earlier Stats) Stats {
	return Stats{
		Gets:    s.Gets - earlier.Gets,
		Lists:   s.Lists - earlier.Lists,
		Txns:    s.Txns - earlier.Txns,
		Watches: s.Watches - earlier.Watches,
	}
}

type counters struct {
	gets, lists, txns, watches atomic.Int64
}

// Stats returns the calls served so far.
func (s *Store) Stats() Stats {
	return Stats{
		Gets:    s.count.gets.Load(),
		Lists:   s.count.lists.Load(),
		Txns:    s.count.txns.Load(),
		Watches: s.count.watches.Load(),
	}
}
