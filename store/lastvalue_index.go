package store

import (
	"hash/maphash"

	"github.com/steady-go/steady/internal/hashslot"
)

// lastIndex maps each key the memory holds to its position in items: an
// open-addressing table whose slots hold 32 bits of the key's hash beside
// the position (package hashslot). Past its bound, the memory forgets a
// value at random for each one it remembers (at 1M keys, every event's),
// and a Go map's delete of that value's key hashes the key again, reading
// its bytes: a cold cache miss per event. The value keeps its hash
// (lastValue.hash), so removing or moving it reads no key. Not safe for
// concurrent use: lastValues.mu guards it.
type lastIndex struct {
	// seed is made with the memory (newLastValues) and kept for good.
	seed  maphash.Seed
	slots []uint64 // 0 is empty; otherwise hash<<32 | position+1
	n     int      // keys held
}

// hash hashes key with the index's seed.
func (x *lastIndex) hash(key string) uint32 {
	h := maphash.String(x.seed, key)
	return uint32(h ^ h>>32)
}

// lookup returns the position of key in items.
func (x *lastIndex) lookup(items []lastValue, key string) (int, bool) {
	if x.n == 0 {
		return 0, false
	}
	h := x.hash(key)
	mask := len(x.slots) - 1
	for p := hashslot.Home(h, len(x.slots)); x.slots[p] != 0; p = (p + 1) & mask {
		if s := x.slots[p]; hashslot.Hash(s) == h {
			if i := hashslot.Ref(s); items[i].key == key {
				return i, true
			}
		}
	}
	return 0, false
}

// add indexes position i, whose key (not held yet) has hash h.
func (x *lastIndex) add(i int, h uint32) {
	if x.n >= len(x.slots)-len(x.slots)/4 {
		x.slots = hashslot.Grown(x.slots, 16)
	}
	hashslot.Put(x.slots, hashslot.Of(h, i))
	x.n++
}

// slotOf returns the slot that holds position i, whose key's hash is h.
// The caller knows the position is held; if the memory's books are wrong
// and it is not, slotOf panics at the end of the probe run rather than
// probe on, holding lastValues.mu, for good.
func (x *lastIndex) slotOf(i int, h uint32) int {
	want := hashslot.Of(h, i)
	mask := len(x.slots) - 1
	p := hashslot.Home(h, len(x.slots))
	for x.slots[p] != want {
		if x.slots[p] == 0 {
			panic("store: the memory of values' index does not hold a position it gave")
		}
		p = (p + 1) & mask
	}
	return p
}

// remove unindexes position i, whose key's hash is h.
func (x *lastIndex) remove(i int, h uint32) {
	hashslot.Delete(x.slots, x.slotOf(i, h))
	x.n--
}

// move indexes at position to the key held at from, whose hash is h.
func (x *lastIndex) move(from, to int, h uint32) {
	x.slots[x.slotOf(from, h)] = hashslot.Of(h, to)
}
