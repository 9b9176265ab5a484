package memstore

import "github.com/steady-go/steady/store/kv"

// history is the ring of the most recent events, one per revision, that
// watches resume from and pinned List pages are computed from. It keeps
// them in blocks of historyBlock revisions each, the oldest first: any
// retained revision is found in O(1), the ring grows by raising size
// alone, and a block is let go (kept for the next) once every event in it
// is evicted. A ring in one slice, revision r at slot (r-1) % size, grew
// by copying every event it held into a slice twice as large, holding the
// Store's write lock and both slices: at 1M keys a window grown for a
// lagging watch, 640,000 events (~65 MB) copied into 1M (~104 MB).
// Not safe for concurrent use; the Store's lock guards it.
//
// An event's value after the change, and the key's value before it, are
// what a watch replays and a pinned page shows, so the ring keeps them for
// as long as it keeps the event; most of them are old values no key holds
// any more. A recent event (the agingLag latest) keeps its values in full,
// shared with the keys and the events next to it, so that watches that
// keep up copy nothing. Once an event is older, the value of the key's
// previous event is kept as a delta (delta.go) against this event's value,
// which is itself kept in full until the key is written again and that
// write ages in turn. Reading an old value applies the deltas from the
// key's next full value on, at most maxChain of them.
//
// Ageing costs a delta encoding per write, which only memory justifies: the
// ring ages events, oldest first, only while the bytes it holds exceed its
// budget, so a history whose values fit the budget encodes nothing.
type history struct {
	// blocks hold the retained revisions: blocks[i][j] is revision
	// (base+i)*historyBlock + j + 1. The last block grows by appending
	// up to historyBlock events; spare is a block let go, for the next.
	blocks [][]event
	base   int64
	spare  []event
	size   int // the most events retained
	// first is the oldest retained revision and last the newest (the store
	// revision); first == last+1 when nothing is retained.
	first, last int64
	agingLag    int64
	// bytes is the length of every retained event's val and prevVal, as
	// kept (a delta's own length); budget is the most it may be before
	// the ring ages events. aged is the oldest revision not yet aged.
	bytes, budget int
	aged          int64
}

// event is a kv.Event as the ring keeps it.
type event struct {
	key  string
	typ  kv.EventType
	prev bool // the key existed before (Prev is set)
	// valDelta says val is a delta against the value at next; prevDelta
	// that prevVal is a delta against this event's value.
	valDelta, prevDelta bool
	// chain is how many older events of the key read their value through
	// this one's (deltas in a row before it), kept below maxChain.
	chain uint8
	// create is KV.CreateRevision (a put); prevCreate and prevMod are
	// Prev's revisions.
	create, prevCreate, prevMod int64
	// next is the revision of the key's next event in the ring, 0 if
	// none yet.
	next int64
	// val is the value after a put. prevVal is the value before, kept only
	// while the event of prevMod is not in the ring (else it is that
	// event's value).
	val, prevVal []byte
}

// historyBlock is how many revisions a block of the history holds: a
// power of two, so that finding one is a shift and a mask. A block of
// 104-byte events is ~104 KB: the ring holds up to two blocks' events
// beyond its size (the oldest block's evicted ones, and the spare), which
// a small WithHistorySize makes more than the size itself.
const historyBlock = 1024

// maxChain bounds the deltas applied to read one value: a key written
// more often than that within the history keeps every maxChain-th old
// value in full.
const maxChain = 16

// defaultAgingLag is how many of the latest events keep their values in
// full: watches that keep within it read no delta.
const defaultAgingLag = 1024

func newHistory(size, budget int) history {
	return history{size: size, first: 1, agingLag: defaultAgingLag, budget: budget, aged: 1}
}

// add records the event of revision last+1 for key, whose value before was
// prev (nil if the key did not exist): a put of val, or a delete when
// del. It evicts the oldest event when the ring is full, and ages events
// older than agingLag while the ring holds more bytes than its budget.
func (h *history) add(key string, del bool, val []byte, create int64, prev *kv.KeyValue) {
	rev := h.last + 1
	if rev-h.first+1 > int64(h.size) {
		h.evict()
	}
	h.last = rev
	// The event is written in its slot, as the ring holds it: built
	// apart, it was copied twice more on its way there.
	ev := h.slot(rev)
	if del {
		*ev = event{key: key, typ: kv.EventDelete}
	} else {
		*ev = event{key: key, typ: kv.EventPut, val: val, create: create}
	}
	if prev != nil {
		ev.prev, ev.prevCreate, ev.prevMod = true, prev.CreateRevision, prev.ModRevision
		if h.holds(prev.ModRevision) {
			h.at(prev.ModRevision).next = rev
		} else {
			ev.prevVal = prev.Value
		}
	}
	h.bytes += len(ev.val) + len(ev.prevVal)
	for h.bytes > h.budget {
		old := max(h.aged, h.first)
		if old > rev-h.agingLag {
			break
		}
		h.age(old)
		h.aged = old + 1
	}
}

// slot returns the place of the event of rev, last+1, for add to write
// every field of: in the last block, or in a new one (the spare if any)
// once the last is full. A new block starts at 16 events and grows by
// doubling, so a Store with few writes holds few events, up to
// historyBlock exactly: append's growth gave a block room for 1,417
// events (147 KB) where it holds 1,024, 40 KB of every block spent on
// nothing (0.5 MB of a 10,000-event window, 6 MB of the 160,000 events at
// 1M keys).
func (h *history) slot(rev int64) *event {
	r := uint64(rev - 1) // see at
	b := int(r/historyBlock - uint64(h.base))
	if b == len(h.blocks) {
		h.newBlock()
	}
	blk := &h.blocks[b]
	i := int(r % historyBlock)
	if i >= len(*blk) {
		if i >= cap(*blk) {
			growBlock(blk)
		}
		*blk = (*blk)[:i+1]
	}
	return &(*blk)[i]
}

// newBlock starts a block after the last: the spare if any. It and
// growBlock, run once in 1,024 writes or fewer, are out of line
// (go:noinline), so that slot's code is that of the other writes.
//
// Only the Store's first block starts small (see slot): a block after
// another is made with room for historyBlock events, which the writes
// that fill it will take, as the one before took them (a ring holds every
// event of a block in its slot, however small its window). Grown by
// doubling from 16, each cost as much again in blocks thrown away, ~105 KB
// of fresh memory each time a lagging watch grew the window (no block let
// go for a spare): at 10,000 objects flat out, ~28 blocks, 2.9 MB.
//
//go:noinline
func (h *history) newBlock() {
	blk := h.spare[:0]
	h.spare = nil
	if blk == nil {
		n := 16
		if h.base > 0 || len(h.blocks) > 0 {
			n = historyBlock
		}
		blk = make([]event, 0, n)
	}
	h.blocks = append(h.blocks, blk)
}

// growBlock doubles the room of *blk, which is full, up to historyBlock
// events.
//
//go:noinline
func growBlock(blk *[]event) {
	*blk = append(make([]event, 0, min(2*cap(*blk), historyBlock)), *blk...)
}

// grow makes the ring hold up to n events (n > size), keeping those it
// holds: no event moves.
func (h *history) grow(n int) { h.size = n }

// shrink makes the ring hold up to n events (n < size), evicting the
// oldest beyond them.
func (h *history) shrink(n int) {
	for h.last-h.first+1 > int64(n) {
		h.evict()
	}
	h.size = n
}

// holds reports whether the event of rev is in the ring.
func (h *history) holds(rev int64) bool { return rev >= h.first && rev <= h.last }

// at returns the event of revision rev, which must be in [first, last].
// Revisions are positive: unsigned, the block and the index are a shift
// and a mask, with no rounding of a negative dividend towards zero.
func (h *history) at(rev int64) *event {
	r := uint64(rev - 1)
	return &h.blocks[r/historyBlock-uint64(h.base)][r%historyBlock]
}

// age keeps the key's value before the event of rev as a delta against
// the event's value, which is still in full: in the key's previous event
// if the ring holds it, else in the event itself.
func (h *history) age(rev int64) {
	ev := h.at(rev)
	if ev.typ != kv.EventPut || !ev.prev {
		return
	}
	if !h.holds(ev.prevMod) {
		if !ev.prevDelta {
			h.bytes -= len(ev.prevVal)
			ev.prevVal, ev.prevDelta = newDelta(ev.prevVal, ev.val), true
			h.bytes += len(ev.prevVal)
		}
		return
	}
	p := h.at(ev.prevMod)
	if p.valDelta || p.chain+1 >= maxChain {
		return // p stays in full: the older ones read through it
	}
	h.bytes -= len(p.val)
	p.val, p.valDelta = newDelta(p.val, ev.val), true
	h.bytes += len(p.val)
	ev.chain = p.chain + 1
}

// evict drops the oldest event. Its value is the value before the key's
// next event, which keeps it from now on.
func (h *history) evict() {
	ev := h.at(h.first)
	h.bytes -= len(ev.val) + len(ev.prevVal)
	if ev.next != 0 {
		n := h.at(ev.next)
		n.prevVal, n.prevDelta = ev.val, ev.valDelta
		h.bytes += len(n.prevVal)
	}
	*ev = event{}
	h.first++
	if (h.first-1)%historyBlock == 0 {
		// Every event of the oldest block is evicted (and cleared).
		h.spare, h.blocks[0] = h.blocks[0], nil
		h.blocks = h.blocks[1:]
		h.base++
	}
}

// value returns the value after the put of rev, which the ring holds. An
// old value is built afresh from its deltas; a recent one is shared and
// must not be modified.
func (h *history) value(rev int64) []byte { return h.valueOf(h.at(rev)) }

// valueOf is value for the event ev points to.
func (h *history) valueOf(ev *event) []byte {
	if ev.valDelta {
		return h.fromDelta(ev)
	}
	return ev.val
}

// fromDelta builds the value of ev, kept as a delta, afresh.
func (h *history) fromDelta(ev *event) []byte {
	return h.apply(ev.val, h.value(ev.next))
}

// prevValue returns the value before the event ev points to, which the
// ring holds and which has ev.prev set.
func (h *history) prevValue(ev *event) []byte {
	switch {
	case h.holds(ev.prevMod):
		return h.value(ev.prevMod)
	case ev.prevDelta:
		return h.apply(ev.prevVal, h.valueOf(ev))
	default:
		return ev.prevVal
	}
}

func (h *history) apply(d, base []byte) []byte {
	v, ok := applyDelta(make([]byte, 0, len(base)+len(d)), d, base)
	if !ok {
		panic("memstore: a history delta does not fit its base") // a bug in this file
	}
	return v
}

// kvEvent returns the event of rev, which ev points to (at(rev)), as a
// watch sends it: the caller has looked the event up already, and every
// part of it is read through that one pointer.
func (h *history) kvEvent(rev int64, ev *event) kv.Event {
	out := kv.Event{Type: ev.typ, Revision: rev, KV: kv.KeyValue{Key: ev.key, ModRevision: rev}}
	if ev.typ == kv.EventPut {
		out.KV.Value, out.KV.CreateRevision = h.valueOf(ev), ev.create
	}
	if ev.prev {
		out.Prev = kv.KeyValue{Key: ev.key, Value: h.prevValue(ev), CreateRevision: ev.prevCreate, ModRevision: ev.prevMod}
	}
	return out
}

// prevKV returns the key's state before the event of rev: the zero KV if
// it did not exist.
func (h *history) prevKV(rev int64) kv.KeyValue {
	ev := h.at(rev)
	if !ev.prev {
		return kv.KeyValue{}
	}
	return kv.KeyValue{Key: ev.key, Value: h.prevValue(ev), CreateRevision: ev.prevCreate, ModRevision: ev.prevMod}
}

// covers reports whether every event after rev up to last is retained.
func (h *history) covers(rev int64) bool { return rev+1 >= h.first }

// dropBefore forgets the events before rev (rev <= last+1), releasing their
// values.
func (h *history) dropBefore(rev int64) {
	for h.first < rev {
		h.evict()
	}
}
