package memstore

import (
	"hash/maphash"
	"unsafe"

	"github.com/steady-go/steady/store/kv"
)

// keys is the Store's map of live keys to their entries: keyShards
// open-addressing hash tables with linear probing, each slot an entry's
// pointer and 32 bits of its key's hash side by side, so that a probe
// rarely reads an entry that does not match, growing rehashes no key,
// and a lookup reads one line of the table before the entry: at 1M keys
// every event's key is cold, and the hashes in an array of their own,
// apart from the pointers (in memory the GC did not scan), cost a second
// cache miss per lookup. The key is the entry's own Key. A Go map of key
// to entry held each key's string header next to the pointer, both for
// the GC to scan: about 50 bytes a key at 1M keys, where the slots here
// are 21 to 43 (3/4 full at most; 16 bytes a slot, the GC reading the
// pointer alone). The top bits of a key's hash pick its table, each
// growing on its own, so that a write that grows one holds the Store's
// lock for a 256th of the keys: one table of 1.5M keys took 150ms to
// double. Not safe for concurrent use; the Store's lock guards it.
type keys struct {
	seed   maphash.Seed
	shards *[keyShards]keyShard // nil until the first add
	n      int                  // keys held
	// last is the entry a write looked up last (getKept), nil once its
	// key is removed. A key is looked up by several calls in a row (a
	// read-modify-write's Get, its Update's read and Txn, then a
	// controller's write of the status it saw change): those after the
	// write compare the key with last's rather than hash it and probe.
	// Only a write, which holds the Store's lock alone, sets it: Gets
	// under the read lock setting it, beside other Gets of other keys,
	// made them contend for its cache line (BenchmarkGetParallelKeys:
	// ~134 against ~200-245 ns per Get on two cores).
	last *kv.KeyValue
}

// keyShards is how many tables keys holds: a key's is the top
// keyShardBits of its hash.
const (
	keyShardBits = 8
	keyShards    = 1 << keyShardBits
)

// keyShard is one of the tables of keys.
type keyShard struct {
	slots []keySlot
	n     int
}

// keySlot is a slot of a keyShard: an entry and the hash of its Key; e
// nil is an empty slot.
type keySlot struct {
	e *kv.KeyValue
	h uint32
}

// hash hashes key with the table's seed.
func (t *keys) hash(key string) uint32 {
	h := maphash.String(t.seed, key)
	return uint32(h ^ h>>32)
}

// get returns the entry of key, or nil.
func (t *keys) get(key string) *kv.KeyValue {
	if e := t.last; e != nil && e.Key == key {
		return e
	}
	return t.find(key)
}

// getIn is get of the key prefix+name, built in a buffer on the stack
// that the lookup reads and nothing keeps (the entry's own Key is the
// key held); a longer key than the buffer holds is built on the heap.
func (t *keys) getIn(prefix, name string) *kv.KeyValue {
	if prefix == "" {
		return t.get(name) // a whole key: nothing to build
	}
	n := len(prefix) + len(name)
	if n > maxStackKey {
		return t.get(prefix + name)
	}
	var buf [maxStackKey]byte
	b := append(append(buf[:0], prefix...), name...)
	return t.get(unsafe.String(unsafe.SliceData(b), n))
}

// maxStackKey is the longest key getIn builds on the stack: a
// store.Store's prefix (its kind, a slash, and any WithKeyPrefix) and an
// object's name are rarely more.
const maxStackKey = 128

// getKept is get that keeps the entry as last for the lookups after it.
// Only a caller holding the Store's lock alone (a write) may call it.
func (t *keys) getKept(key string) *kv.KeyValue {
	e := t.get(key)
	if e != nil {
		t.last = e
	}
	return e
}

// find is get without last.
func (t *keys) find(key string) *kv.KeyValue {
	if t.n == 0 {
		return nil
	}
	h := t.hash(key)
	s := &t.shards[h>>(32-keyShardBits)]
	if s.n == 0 {
		return nil
	}
	mask := len(s.slots) - 1
	for p := int(h) & mask; ; p = (p + 1) & mask {
		sl := &s.slots[p]
		if sl.e == nil {
			return nil
		}
		if sl.h == h && sl.e.Key == key {
			return sl.e
		}
	}
}

// add adds e, whose key the table must not hold.
func (t *keys) add(e *kv.KeyValue) {
	if t.shards == nil {
		t.seed = maphash.MakeSeed()
		t.shards = new([keyShards]keyShard)
	}
	h := t.hash(e.Key)
	s := &t.shards[h>>(32-keyShardBits)]
	if s.n >= len(s.slots)-len(s.slots)/4 {
		s.grow()
	}
	s.put(keySlot{e, h})
	s.n++
	t.n++
}

// put puts sl in the first empty slot of its probe run; the table must
// have one, and must not hold sl's key.
func (s *keyShard) put(sl keySlot) {
	mask := len(s.slots) - 1
	p := int(sl.h) & mask
	for s.slots[p].e != nil {
		p = (p + 1) & mask
	}
	s.slots[p] = sl
}

// grow doubles the table, at least 8 slots.
func (s *keyShard) grow() {
	old := s.slots
	s.slots = make([]keySlot, max(8, 2*len(old)))
	for _, sl := range old {
		if sl.e != nil {
			s.put(sl)
		}
	}
}

// remove deletes key, if held. It shifts later entries of the probe run
// back, so the table never holds tombstones.
func (t *keys) remove(key string) {
	if t.n == 0 {
		return
	}
	h := t.hash(key)
	s := &t.shards[h>>(32-keyShardBits)]
	if s.n == 0 {
		return
	}
	mask := len(s.slots) - 1
	p := int(h) & mask
	for {
		sl := &s.slots[p]
		if sl.e == nil {
			return
		}
		if sl.h == h && sl.e.Key == key {
			break
		}
		p = (p + 1) & mask
	}
	if t.last == s.slots[p].e {
		t.last = nil
	}
	for q := (p + 1) & mask; s.slots[q].e != nil; q = (q + 1) & mask {
		// The entry in q may move back to p only if its home slot is not
		// in the run (p, q].
		home := int(s.slots[q].h) & mask
		if (q-home)&mask >= (q-p)&mask {
			s.slots[p] = s.slots[q]
			p = q
		}
	}
	s.slots[p] = keySlot{}
	s.n--
	t.n--
}
