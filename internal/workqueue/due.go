package workqueue

import (
	"cmp"
	"math/bits"
	"slices"
)

// Delayed keys become ready when a Get, Len or State finds their time has
// come. Usually few are due at once and each is popped off the heap; after
// a burst of short delays many are, and they are taken all at once and
// sorted, so that they still join the normal list earliest first.

func compareItems(a, b delayItem) int {
	if c := cmp.Compare(a.at, b.at); c != 0 {
		return c
	}
	return int(int32(a.seq - b.seq))
}

// promoteEvery bounds how many Gets may pass, while ready keys keep Get
// busy, before Get checks the heap for due keys. Checking reads the clock,
// which costs more than the rest of a Get; a due key waits at most this many
// Gets longer to join the back of the normal list. A Get that finds no ready
// key always checks.
const promoteEvery = 8

// promoteDue queues, at Normal priority, every delayed key whose time has
// come, earliest first.
func (q *Queue[K]) promoteDue() {
	d := &q.delay
	d.skips = 0
	now := q.now()
	for popped := 0; len(d.heap) > 0 && d.heap[0].at <= now; popped++ {
		if popped == bulkAfter {
			q.promoteBulk(now)
			return
		}
		n := d.heap[0].node
		q.heapRemove(n)
		q.ripen(n)
	}
}

// bulkAfter is how many due keys promoteDue pops one by one before it
// assumes many more are due, as after a burst of short delays, and takes
// them all at once.
const bulkAfter = 32

// promoteBulk promotes every due key in O(n + k log k) rather than
// O(k log n): it moves the k due items to the front of the heap's array,
// sorts them, queues them, and rebuilds the heap from the rest.
func (q *Queue[K]) promoteBulk(now int64) {
	h := q.delay.heap
	k := 0
	for i := range h {
		if h[i].at <= now {
			h[i], h[k] = h[k], h[i]
			k++
		}
	}
	q.sortDue(h[:k])
	for _, it := range h[:k] {
		nd := q.keys.at(it.node)
		nd.state &^= delayed
		nd.prev = none
		q.ripen(it.node)
	}
	rest := copy(h, h[k:])
	h = h[:rest]
	q.delay.heap = h
	for i := range h {
		q.keys.at(h[i].node).prev = int32(i)
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		q.siftDown(i)
	}
}

// sortDue sorts due items like sortItems. A large batch is radix sorted
// through a scratch slice, in a few linear passes over the bytes in which
// the items' ready times and insertion numbers differ.
func (q *Queue[K]) sortDue(h []delayItem) {
	if len(h) < 256 {
		sortItems(h)
		return
	}
	d := &q.delay
	scratch := d.scratch
	if cap(scratch) < len(h) {
		scratch = make([]delayItem, len(h))
		if len(h) <= keepScratch {
			d.scratch = scratch
		}
	}
	// The sort key is the ready time after the earliest, then the
	// insertion number. Live insertion numbers are within 2^31 of the
	// latest, so the distance behind it orders them, reversed, without
	// wrapping. Only the bytes in which keys differ take a pass.
	minAt, maxAt, maxAge := h[0].at, h[0].at, uint32(0)
	for _, it := range h {
		minAt, maxAt = min(minAt, it.at), max(maxAt, it.at)
		maxAge = max(maxAge, d.seq-it.seq)
	}
	seqBytes := uint((bits.Len32(maxAge) + 7) / 8)
	atBytes := uint((bits.Len64(uint64(maxAt-minAt)) + 7) / 8)
	src, dst := h, scratch[:len(h)]
	for pass := range seqBytes + atBytes {
		var count [256]int
		for _, it := range src {
			count[sortByte(it, pass, seqBytes, d.seq-maxAge, minAt)]++
		}
		pos := 0
		for b, c := range count {
			count[b] = pos
			pos += c
		}
		for _, it := range src {
			b := sortByte(it, pass, seqBytes, d.seq-maxAge, minAt)
			dst[count[b]] = it
			count[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &h[0] {
		copy(h, src)
	}
}

// sortByte is byte pass of an item's radix sort key: the first seqBytes
// passes read its insertion number after minSeq, the rest its ready time
// after minAt.
// keepScratch is the largest scratch slice, in items, that the queue keeps
// between bulk promotions; a larger batch allocates its own, so a rare
// burst of a million delays does not pin 16 MB.
const keepScratch = 4096

func sortByte(it delayItem, pass, seqBytes uint, minSeq uint32, minAt int64) byte {
	if pass < seqBytes {
		return byte((it.seq - minSeq) >> (8 * pass))
	}
	return byte(uint64(it.at-minAt) >> (8 * (pass - seqBytes)))
}

// sortItems sorts items by ready time, then insertion order: a quicksort
// on the concrete type, several times faster than slices.SortFunc here.
func sortItems(h []delayItem) {
	for depth := 0; len(h) > 12; depth++ {
		if depth > 64 { // pathological input: fall back to a sort with guarantees
			slices.SortFunc(h, compareItems)
			return
		}
		m, last := len(h)/2, len(h)-1
		if h[m].before(h[0]) {
			h[m], h[0] = h[0], h[m]
		}
		if h[last].before(h[0]) {
			h[last], h[0] = h[0], h[last]
		}
		if h[last].before(h[m]) {
			h[last], h[m] = h[m], h[last]
		}
		pivot := h[m]
		i, j := 0, last
		for i <= j {
			for h[i].before(pivot) {
				i++
			}
			for pivot.before(h[j]) {
				j--
			}
			if i <= j {
				h[i], h[j] = h[j], h[i]
				i++
				j--
			}
		}
		// Recurse into the smaller part, loop on the larger.
		if j+1 < len(h)-i {
			sortItems(h[:j+1])
			h = h[i:]
		} else {
			sortItems(h[i:])
			h = h[:j+1]
		}
	}
	for i := 1; i < len(h); i++ {
		for j := i; j > 0 && h[j].before(h[j-1]); j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
}

// ripen queues node n, whose delay has passed, or marks it to rerun if it
// is processing.
func (q *Queue[K]) ripen(n int32) {
	q.countAdd()
	nd := q.keys.at(n)
	if nd.state&processing != 0 {
		nd.state |= dirtyNormal
		return
	}
	q.enqueue(n, nd, Normal)
}
