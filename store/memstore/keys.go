package memstore

import (
	"hash/maphash"

	"github.com/steady-go/steady/store/kv"
)

// keys is the Store's map of live keys to their entries: an
// open-addressing hash table with linear probing over the entries'
// pointers, and beside them, in memory the GC does not scan, 32 bits of
// each key's hash, so that a probe rarely reads an entry that does not
// match and growing rehashes no key. The key is the entry's own Key. A
// Go map of key to entry held each key's string header next to the
// pointer, both for the GC to scan: about 50 bytes a key at 1M keys,
// where the pointers here are 8 to 16 (3/4 full at most) and the hashes
// half that. Not safe for concurrent use; the Store's lock guards it.
type keys struct {
	seed    maphash.Seed
	entries []*kv.KeyValue // nil is an empty slot
	hashes  []uint32       // the hash of entries[i].Key where it is not nil
	n       int            // keys held
}

// hash hashes key with the table's seed.
func (t *keys) hash(key string) uint32 {
	h := maphash.String(t.seed, key)
	return uint32(h ^ h>>32)
}

// get returns the entry of key, or nil.
func (t *keys) get(key string) *kv.KeyValue {
	if t.n == 0 {
		return nil
	}
	h := t.hash(key)
	mask := len(t.entries) - 1
	for p := int(h) & mask; ; p = (p + 1) & mask {
		e := t.entries[p]
		if e == nil {
			return nil
		}
		if t.hashes[p] == h && e.Key == key {
			return e
		}
	}
}

// add adds e, whose key the table must not hold.
func (t *keys) add(e *kv.KeyValue) {
	if t.n >= len(t.entries)-len(t.entries)/4 {
		t.grow()
	}
	h := t.hash(e.Key)
	mask := len(t.entries) - 1
	p := int(h) & mask
	for t.entries[p] != nil {
		p = (p + 1) & mask
	}
	t.entries[p], t.hashes[p] = e, h
	t.n++
}

func (t *keys) grow() {
	if len(t.entries) == 0 {
		t.seed = maphash.MakeSeed()
	}
	old, oldHashes := t.entries, t.hashes
	t.entries = make([]*kv.KeyValue, max(16, 2*len(old)))
	t.hashes = make([]uint32, len(t.entries))
	mask := len(t.entries) - 1
	for i, e := range old {
		if e == nil {
			continue
		}
		h := oldHashes[i]
		p := int(h) & mask
		for t.entries[p] != nil {
			p = (p + 1) & mask
		}
		t.entries[p], t.hashes[p] = e, h
	}
}

// remove deletes key, if held. It shifts later entries of the probe run
// back, so the table never holds tombstones.
func (t *keys) remove(key string) {
	if t.n == 0 {
		return
	}
	h := t.hash(key)
	mask := len(t.entries) - 1
	p := int(h) & mask
	for {
		e := t.entries[p]
		if e == nil {
			return
		}
		if t.hashes[p] == h && e.Key == key {
			break
		}
		p = (p + 1) & mask
	}
	for q := (p + 1) & mask; t.entries[q] != nil; q = (q + 1) & mask {
		// The entry in q may move back to p only if its home slot is not
		// in the run (p, q].
		home := int(t.hashes[q]) & mask
		if (q-home)&mask >= (q-p)&mask {
			t.entries[p], t.hashes[p] = t.entries[q], t.hashes[q]
			p = q
		}
	}
	t.entries[p], t.hashes[p] = nil, 0
	t.n--
}
