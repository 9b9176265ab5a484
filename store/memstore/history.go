package memstore

import (
	"github.com/steady-go/steady/store/kv"
)

// history is the ring of the most recent events, one per revision, that
// watches resume from and pinned List pages are computed from. Revision r
// lives at slot (r-1) % size, so any retained revision is found in O(1).
// Not safe for concurrent use; the Store's lock guards it.
type history struct {
	buf  []kv.Event // grows to size, then wraps
	size int
	// first is the oldest retained revision and last the newest (the store
	// revision); first == last+1 when nothing is retained.
	first, last int64
}

func newHistory(size int) history {
	return history{size: size, first: 1}
}

// add records ev, whose Revision must be last+1, evicting the oldest event
// when the ring is full.
func (h *history) add(ev kv.Event) {
	h.last = ev.Revision
	if h.last-h.first+1 > int64(h.size) {
		h.first++
	}
	slot := int((ev.Revision - 1) % int64(h.size))
	if slot == len(h.buf) {
		h.buf = append(h.buf, ev)
		return
	}
	h.buf[slot] = ev
}

// at returns the event of revision rev, which must be in [first, last].
func (h *history) at(rev int64) *kv.Event {
	return &h.buf[(rev-1)%int64(h.size)]
}

// covers reports whether every event after rev up to last is retained.
func (h *history) covers(rev int64) bool { return rev+1 >= h.first }

// dropBefore forgets the events before rev (rev <= last+1), releasing their
// values.
func (h *history) dropBefore(rev int64) {
	for ; h.first < rev; h.first++ {
		*h.at(h.first) = kv.Event{}
	}
}
