package reconcile

import (
	"hash/maphash"

	"github.com/steady-go/steady/internal/hashslot"
)

// nameSet is the primary source's set of names, kept with a dense list so
// that Keys, at every resync, copies a slice instead of iterating a map
// (about 80 instructions per name at 100,000 names,
// BenchmarkLoopNoopResync100k), and lists the names in the order they
// were added, which is near the order the cache allocated their objects
// in: the reconciles of a resync then read the objects more nearly in
// memory order.
//
// Its index is nameShards open-addressing tables with linear probing, each
// slot 32 bits of a name's hash beside the name's place in list, in memory
// the GC does not scan. A Go map of name to place held each name's string
// header for the GC to scan a second time: with the list, about 70
// scannable bytes and more than one heap object per name at 1M names,
// where the list's 16 (more while append's room is unused) are all it
// scans now. The top bits of the hash pick a name's table, each growing on
// its own, so that an add that grows one holds the source's lock (and the
// cache's handler) for a 256th of the names. The zero value is empty;
// not safe for concurrent use.
type nameSet struct {
	seed   maphash.Seed
	shards *[nameShards]nameShard // nil until the first add
	list   []string
}

// nameShards is how many tables a nameSet's index has: a name's is the
// top nameShardBits of its hash.
const (
	nameShardBits = 8
	nameShards    = 1 << nameShardBits
)

// nameShard is one table of a nameSet's index: each slot is a name's hash
// in its top 32 bits and its place in list plus one below; 0 is empty.
type nameShard struct {
	slots []uint64
	n     int
}

func newNameSet() *nameSet { return &nameSet{} }

// hash hashes name with the set's seed.
func (n *nameSet) hash(name string) uint32 {
	h := maphash.String(n.seed, name)
	return uint32(h ^ h>>32)
}

// find returns the table name's hash h picks, and the slot of name in it,
// or -1.
func (n *nameSet) find(name string, h uint32) (*nameShard, int) {
	s := &n.shards[h>>(32-nameShardBits)]
	if s.n == 0 {
		return s, -1
	}
	mask := len(s.slots) - 1
	for p := int(h) & mask; ; p = (p + 1) & mask {
		v := s.slots[p]
		if v == 0 {
			return s, -1
		}
		if hashslot.Hash(v) == h && n.list[hashslot.Ref(v)] == name {
			return s, p
		}
	}
}

// index returns the place of name in list, if held.
func (n *nameSet) index(name string) (int, bool) {
	if len(n.list) == 0 {
		return 0, false
	}
	s, p := n.find(name, n.hash(name))
	if p < 0 {
		return 0, false
	}
	return hashslot.Ref(s.slots[p]), true
}

// add adds name at the end of list, if not held.
func (n *nameSet) add(name string) {
	if n.shards == nil {
		n.seed = maphash.MakeSeed()
		n.shards = new([nameShards]nameShard)
	}
	h := n.hash(name)
	s, p := n.find(name, h)
	if p >= 0 {
		return
	}
	if s.n >= len(s.slots)-len(s.slots)/4 {
		s.grow()
	}
	s.put(hashslot.Of(h, len(n.list)))
	n.list = append(n.list, name)
}

// put stores v in the first empty slot of its probe run; the table has one.
func (s *nameShard) put(v uint64) {
	hashslot.Put(s.slots, v)
	s.n++
}

// grow doubles the table, at least 8 slots.
func (s *nameShard) grow() { s.slots = hashslot.Grown(s.slots, 8) }

// remove takes name out, moving the last name into its place.
func (n *nameSet) remove(name string) {
	if len(n.list) == 0 {
		return
	}
	s, p := n.find(name, n.hash(name))
	if p < 0 {
		return
	}
	i := hashslot.Ref(s.slots[p])
	s.delete(p)
	last := len(n.list) - 1
	if i != last {
		moved := n.list[last]
		t, q := n.find(moved, n.hash(moved))
		t.slots[q] = hashslot.Of(hashslot.Hash(t.slots[q]), i)
		n.list[i] = moved
	}
	n.list[last] = ""
	n.list = n.list[:last]
}

// delete empties slot p, shifting later slots of its probe run back, so
// the table never holds tombstones.
func (s *nameShard) delete(p int) {
	hashslot.Delete(s.slots, p)
	s.n--
}
