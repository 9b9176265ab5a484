package memstore

import (
	"slices"
	"sort"
	"strings"

	"github.com/steady-go/steady/store/kv"
)

// maxChunk is the largest chunk of the key index. Inserting into a chunk
// moves at most this many pointers; a full chunk splits in two.
const maxChunk = 512

// index keeps the live keys in key order for List. It is a sorted sequence
// of sorted chunks: a one-level B-tree that is cheap to insert into, delete
// from and scan, and needs no balancing beyond splitting a full chunk. Its
// entries are the same *kv.KeyValue values as the Store's map, so updates of an
// existing key never touch it. Not safe for concurrent use; the Store's lock
// guards it.
type index struct {
	chunks [][]*kv.KeyValue
}

func byKey(kvp *kv.KeyValue, key string) int { return strings.Compare(kvp.Key, key) }

// find returns the chunk that holds key or would hold it, and the position
// of key in it. ci == len(x.chunks) means key is after every key.
func (x *index) find(key string) (ci, i int, found bool) {
	ci = sort.Search(len(x.chunks), func(c int) bool {
		ch := x.chunks[c]
		return ch[len(ch)-1].Key >= key
	})
	if ci == len(x.chunks) {
		return ci, 0, false
	}
	i, found = slices.BinarySearchFunc(x.chunks[ci], key, byKey)
	return ci, i, found
}

// insert adds kv, whose key must not be in the index.
func (x *index) insert(kvp *kv.KeyValue) {
	if len(x.chunks) == 0 {
		x.chunks = append(x.chunks, []*kv.KeyValue{kvp})
		return
	}
	ci, i, _ := x.find(kvp.Key)
	if ci == len(x.chunks) {
		ci--
		i = len(x.chunks[ci])
	}
	ch := slices.Insert(x.chunks[ci], i, kvp)
	if len(ch) <= maxChunk {
		x.chunks[ci] = ch
		return
	}
	half := len(ch) / 2
	right := slices.Clone(ch[half:])
	clear(ch[half:])
	x.chunks[ci] = ch[:half]
	x.chunks = slices.Insert(x.chunks, ci+1, right)
}

// remove deletes key from the index, if present.
func (x *index) remove(key string) {
	ci, i, found := x.find(key)
	if !found {
		return
	}
	ch := slices.Delete(x.chunks[ci], i, i+1)
	if len(ch) == 0 {
		x.chunks = slices.Delete(x.chunks, ci, ci+1)
		return
	}
	x.chunks[ci] = ch
}

// len returns the number of keys; for tests.
func (x *index) len() int {
	n := 0
	for _, ch := range x.chunks {
		n += len(ch)
	}
	return n
}

// cursor walks the index in key order. It is invalidated by any change to
// the index, so it lives only while the Store's lock is held.
type cursor struct {
	x     *index
	ci, i int
}

// seek returns a cursor at the first key >= key, or after key when after is
// set.
func (x *index) seek(key string, after bool) cursor {
	ci, i, found := x.find(key)
	c := cursor{x: x, ci: ci, i: i}
	if found && after {
		c.advance()
	}
	return c
}

// peek returns the key under the cursor, or nil at the end.
func (c *cursor) peek() *kv.KeyValue {
	if c.ci >= len(c.x.chunks) {
		return nil
	}
	return c.x.chunks[c.ci][c.i]
}

func (c *cursor) advance() {
	c.i++
	if c.i == len(c.x.chunks[c.ci]) {
		c.ci++
		c.i = 0
	}
}
