package reconcile

import (
	"hash/maphash"

	"github.com/steady-go/steady/internal/hashslot"
	"github.com/steady-go/steady/reconcile/oscillation"
)

// detTable is the Loop's map of keys to their oscillation detectors (see
// Loop.detectors): an open-addressing hash table with linear probing
// whose slots hold 32 bits of each key's hash beside its node's number
// (package hashslot), the nodes (key and detector) in pages that never
// move. A Go map grows
// by splitting its tables, which hashes every key it moves again, reading
// the key's bytes: at 1M objects every event's key is new to the map (the
// controller's first write of it), the map grows all along, and each key
// moved is a cold cache miss, about 1.2 µs per event in the split's
// rehash alone. Growing this table copies its slots, reading no key, and
// adds a node where the last one ended. Not safe for concurrent use: the
// Loop's mu guards it.
type detTable[K comparable] struct {
	seed  maphash.Seed
	slots []uint64 // 0 is empty; otherwise hash<<32 | node+1
	n     int      // keys held
	pages [][]detNode[K]
	made  int32 // nodes ever made: the next new node's number
	free  int32 // first free node, -1 for none
}

// detNode is a key and its detector; det nil is a free node, next then
// the next free one.
type detNode[K comparable] struct {
	key  K
	det  *oscillation.Detector
	next int32
}

// detPageShift sets how many nodes a page holds.
const detPageShift = 10

// len returns how many keys t holds.
func (t *detTable[K]) len() int { return t.n }

// hash hashes k with the table's seed.
func (t *detTable[K]) hash(k K) uint32 {
	var h uint64
	if s, ok := any(k).(string); ok {
		h = maphash.String(t.seed, s) // the common key, without a type lookup
	} else {
		h = maphash.Comparable(t.seed, k)
	}
	return uint32(h ^ h>>32)
}

// node returns node i.
func (t *detTable[K]) node(i int32) *detNode[K] {
	return &t.pages[i>>detPageShift][i&(1<<detPageShift-1)]
}

// find returns the slot of k, whose hash is h, and its node's number; or
// the empty slot that ends its probe run and -1.
func (t *detTable[K]) find(k K, h uint32) (slot int, i int32) {
	mask := len(t.slots) - 1
	for p := int(h) & mask; ; p = (p + 1) & mask {
		s := t.slots[p]
		if s == 0 {
			return p, -1
		}
		if hashslot.Hash(s) == h {
			if i := int32(hashslot.Ref(s)); t.node(i).key == k {
				return p, i
			}
		}
	}
}

// get returns k's detector, nil for none.
func (t *detTable[K]) get(k K) *oscillation.Detector {
	if t.n == 0 {
		return nil
	}
	if _, i := t.find(k, t.hash(k)); i >= 0 {
		return t.node(i).det
	}
	return nil
}

// put makes det, not nil, k's detector.
func (t *detTable[K]) put(k K, det *oscillation.Detector) {
	if t.slots == nil {
		t.seed, t.free = maphash.MakeSeed(), -1
	}
	if t.n >= len(t.slots)-len(t.slots)/4 {
		t.grow()
	}
	h := t.hash(k)
	p, i := t.find(k, h)
	if i >= 0 {
		t.node(i).det = det
		return
	}
	i = t.alloc()
	*t.node(i) = detNode[K]{key: k, det: det}
	t.slots[p] = hashslot.Of(h, int(i))
	t.n++
}

// alloc returns the number of a node to use: a free one, else a new one.
func (t *detTable[K]) alloc() int32 {
	if i := t.free; i >= 0 {
		t.free = t.node(i).next
		return i
	}
	i := t.made
	t.made++
	if p := int(i >> detPageShift); p == len(t.pages) {
		t.pages = append(t.pages, make([]detNode[K], 1<<detPageShift))
	}
	return i
}

// grow doubles the slots, at least 16; no key is hashed again.
func (t *detTable[K]) grow() { t.slots = hashslot.Grown(t.slots, 16) }

// remove deletes k, if held, and frees its node. It shifts later slots
// of the probe run back, so the table never holds tombstones.
func (t *detTable[K]) remove(k K) {
	if t.n == 0 {
		return
	}
	p, i := t.find(k, t.hash(k))
	if i < 0 {
		return
	}
	hashslot.Delete(t.slots, p)
	*t.node(i) = detNode[K]{next: t.free}
	t.free = i
	t.n--
}

// all calls f with each key held and its detector, in no set order; f
// may remove the key it is given, and nothing else.
func (t *detTable[K]) all(f func(K, *oscillation.Detector)) {
	for i := range t.made {
		if nd := t.node(i); nd.det != nil {
			f(nd.key, nd.det)
		}
	}
}

// remade returns a table of t's keys and detectors, made anew: t keeps
// the room of its peak, which a burst of writes to many keys grew.
func (t *detTable[K]) remade() detTable[K] {
	var out detTable[K]
	t.all(out.put)
	return out
}
