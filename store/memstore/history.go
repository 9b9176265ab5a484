package memstore

import "github.com/steady-go/steady/store"

// history is the ring of the most recent events, one per revision, that
// watches resume from and pinned List pages are computed from. It keeps at
// least the floor latest events (WithHistorySize), and more while a running
// watch has yet to read them (see Store.trim). Revision r lives at slot
// r % len(buf), so any retained revision is found in O(1); the ring grows
// (to the floor, then doubling) when it is full and halves, down to the
// floor, when it is mostly empty.
// Not safe for concurrent use; the Store's lock guards it.
type history struct {
	buf   []store.KVEvent
	floor int
	// first is the oldest retained revision and last the newest (the store
	// revision); first == last+1 when nothing is retained.
	first, last int64
}

// minRing is the smallest ring allocated: a Store with a small floor that
// is written steadily does not resize its ring back and forth.
const minRing = 64

func newHistory(floor int) history {
	return history{floor: floor, first: 1}
}

// len is the number of events retained.
func (h *history) len() int64 { return h.last - h.first + 1 }

// add records ev, whose Revision must be last+1. It evicts nothing: the
// Store trims the ring after each write.
func (h *history) add(ev store.KVEvent) {
	if h.len() == int64(len(h.buf)) {
		n := max(2*len(h.buf), minRing)
		if len(h.buf) < h.floor {
			n = min(n, h.floor)
		}
		h.resize(n)
	}
	h.last = ev.Revision
	*h.at(ev.Revision) = ev
}

// at returns the event of revision rev, which must be in [first, last].
func (h *history) at(rev int64) *store.KVEvent {
	return &h.buf[rev%int64(len(h.buf))]
}

// covers reports whether every event after rev up to last is retained.
func (h *history) covers(rev int64) bool { return rev+1 >= h.first }

// dropFirst forgets the oldest event, releasing its values.
func (h *history) dropFirst() {
	*h.at(h.first) = store.KVEvent{}
	h.first++
}

// dropBefore forgets the events before rev (rev <= last+1), releasing their
// values.
func (h *history) dropBefore(rev int64) {
	for h.first < rev {
		h.dropFirst()
	}
}

// shrink halves the ring while it is at most a quarter full and larger than
// the floor needs, so that a ring grown for a lagging watch gives its
// memory back once the watch has caught up or ended.
func (h *history) shrink() {
	for len(h.buf) > minRing && h.len()*4 <= int64(len(h.buf)) && len(h.buf)/2 >= h.floor {
		h.resize(len(h.buf) / 2)
	}
}

// resize moves the retained events into a ring of n ≥ len() slots.
func (h *history) resize(n int) {
	buf := make([]store.KVEvent, n)
	for r := h.first; r <= h.last; r++ {
		buf[r%int64(n)] = *h.at(r)
	}
	h.buf = buf
}
