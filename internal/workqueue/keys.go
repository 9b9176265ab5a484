package workqueue

import (
	"hash/maphash"
	"math/rand/v2"

	"github.com/steady-go/steady/internal/hashslot"
)

// node is the state of one key the queue knows about. A key that is neither
// ready, processing, nor delayed, and has no failure count, has no node.
type node[K comparable] struct {
	key K
	// prev and next link the node into its ready list. While the node is
	// delayed, prev is its position in the delay heap; while it is free,
	// next links the free list.
	prev, next int32
	state      state
	// failures counts AddRateLimited calls since the last Forget when the
	// queue keeps the counts itself (no limiter was given); it saturates.
	failures uint32
}

// state is a set of flags. A node is in at most one of the ready lists and
// the delay heap; it may be processing at the same time as it is delayed or
// dirty.
type state uint8

const (
	readyNormal state = 1 << iota // in the normal ready list
	readyLow                      // in the low ready list
	delayed                       // in the delay heap
	processing                    // handed out by Get, Done not yet called
	dirtyNormal                   // added while processing: rerun at normal priority
	dirtyLow                      // added low while processing: rerun at low priority

	ready = readyNormal | readyLow
	dirty = dirtyNormal | dirtyLow
)

const none = int32(-1)

// keyTable maps keys to nodes. It is an open-addressing hash table with
// linear probing over a slice of nodes. Each slot holds the node number and
// 32 bits of the key's hash, so a probe rarely touches a node that does not
// match, and growing the table never rehashes a key. It costs about 16 bytes
// of slots per key where a Go map of key to node number costs 40 to 60, and
// a lookup hashes the key once where a map insert after a failed lookup
// hashes it twice.
type keyTable[K comparable] struct {
	seed  maphash.Seed // for keys other than strings
	sseed uint64       // for strings (strHash)
	slots []uint64     // 0 is empty; otherwise hash<<32 | node+1
	used  int
	limit int // used at which the table grows: 3/4 of the slots
	pages [][]node[K]
	n     int32 // nodes ever allocated: the next new node number
	free  int32 // first free node, or none
}

// Nodes live in pages of pageSize, so a growing queue never copies them:
// the first page grows by doubling, as a slice would, and later pages are
// allocated full. A million keys cost a million nodes and a thousand page
// headers, where one slice would cost up to a quarter more nodes plus the
// copies made while it grew.
const (
	pageShift = 10
	pageSize  = 1 << pageShift
)

// at returns node n.
func (t *keyTable[K]) at(n int32) *node[K] {
	return &t.pages[n>>pageShift][n&(pageSize-1)]
}

func (t *keyTable[K]) init() {
	t.seed = maphash.MakeSeed()
	t.sseed = rand.Uint64()
	t.free = none
}

// hash hashes k with the table's seed. It reads only the seed, which never
// changes, so callers hash before they take the queue's lock.
func (t *keyTable[K]) hash(k K) uint32 {
	var h uint64
	if s, ok := any(k).(string); ok {
		h = strHash(s, t.sseed) // the common key, without a type lookup
	} else {
		h = maphash.Comparable(t.seed, k)
	}
	return uint32(h ^ h>>32)
}

// lookup returns the node of k, whose hash is h, its number and the slot
// that holds it, or nil and none.
func (t *keyTable[K]) lookup(k K, h uint32) (n int32, nd *node[K], slot int) {
	if t.used == 0 {
		return none, nil, 0
	}
	mask := len(t.slots) - 1
	for p := int(h) & mask; ; p = (p + 1) & mask {
		s := t.slots[p]
		if s == 0 {
			return none, nil, 0
		}
		if hashslot.Hash(s) == h {
			i := int32(hashslot.Ref(s))
			if nd := t.at(i); nd.key == k {
				return i, nd, p
			}
		}
	}
}

// insert returns the node of k, whose hash is h, and its number, creating
// it with an empty state if k had none; created reports which.
func (t *keyTable[K]) insert(k K, h uint32) (n int32, nd *node[K], created bool) {
	if t.used >= t.limit {
		t.grow()
	}
	mask := len(t.slots) - 1
	p := int(h) & mask
	for ; ; p = (p + 1) & mask {
		s := t.slots[p]
		if s == 0 {
			break
		}
		if hashslot.Hash(s) == h {
			i := int32(hashslot.Ref(s))
			if nd := t.at(i); nd.key == k {
				return i, nd, false
			}
		}
	}
	n, nd = t.alloc(k)
	t.slots[p] = hashslot.Of(h, int(n))
	t.used++
	return n, nd, true
}

func (t *keyTable[K]) grow() {
	t.slots = hashslot.Grown(t.slots, 16)
	t.limit = len(t.slots) - len(t.slots)/4
}

// remove deletes node n, which must be in the table, and frees it.
func (t *keyTable[K]) remove(n int32) {
	nd := t.at(n)
	h := t.hash(nd.key)
	mask := len(t.slots) - 1
	p := hashslot.Home(h, len(t.slots))
	for hashslot.Ref(t.slots[p]) != int(n) {
		p = (p + 1) & mask
	}
	t.removeAt(p, nd)
}

// removeAt deletes the key in slot p and frees its node, nd. It shifts
// later entries of the probe run back, so the table never holds tombstones.
func (t *keyTable[K]) removeAt(p int, nd *node[K]) {
	n := int32(hashslot.Ref(t.slots[p]))
	hashslot.Delete(t.slots, p)
	t.used--
	*nd = node[K]{next: t.free}
	t.free = n
	if t.used == 0 && len(t.slots) > releaseAbove {
		t.release()
	}
}

// releaseAbove is the most slots an empty table keeps. A larger one, grown
// for a burst (a Loop's first pass adds every key), is let go once the
// burst drained: at a million keys its nodes' pages are 32 MB the GC
// would scan at every cycle, their keys long cleared, and its slots
// another 16 MB. Growing back costs a few allocations per doubling (no key
// is hashed again), only for the next burst; a table at most this large,
// 3,072 keys, is kept, so a queue that empties after each of a few keys
// allocates nothing.
const releaseAbove = 1 << 12

// release empties the table's storage, which holds no key: the next
// insert grows it from its smallest size.
func (t *keyTable[K]) release() {
	t.slots, t.limit, t.pages, t.n, t.free = nil, 0, nil, 0, none
}

// alloc returns a new node for k, and its number.
func (t *keyTable[K]) alloc(k K) (int32, *node[K]) {
	n := t.free
	if n != none {
		nd := t.at(n)
		t.free = nd.next
		*nd = node[K]{key: k, prev: none, next: none}
		return n, nd
	}
	n = t.n
	t.n++
	p := int(n >> pageShift)
	if p == len(t.pages) {
		t.pages = append(t.pages, nil)
		if p > 0 {
			t.pages[p] = make([]node[K], pageSize)
		}
	}
	if pg := t.pages[p]; len(pg) <= int(n&(pageSize-1)) { // the first page, full
		t.pages[p] = make([]node[K], min(max(2*len(pg), 8), pageSize))
		copy(t.pages[p], pg)
	}
	nd := t.at(n)
	*nd = node[K]{key: k, prev: none, next: none}
	return n, nd
}

// grown returns s with twice the capacity, at least 8.
func grown[T any](s []T) []T {
	out := make([]T, len(s), max(8, 2*cap(s)))
	copy(out, s)
	return out
}
