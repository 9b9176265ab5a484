package queue

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/steady-go/steady/internal/clock"
)

// Delayed keys wait in a binary min-heap of ready times, indexed from their
// nodes so that an earlier AddAfter or a normal Add finds a key's entry in
// O(1) and fixes the heap in O(log n). One timer serves the whole heap, and
// only a Get that must block arms it: there is no goroutine per key, and
// adds that arrive while no Get waits never touch the timer.

type delayState struct {
	heap    []delayItem
	seq     uint32      // orders equal ready times by insertion
	scratch []delayItem // for sortDue
	skips   int         // Gets since the heap was last checked for due keys
	timer   clock.Timer
	armed   bool  // the timer is set for armedAt and has not been received
	armedAt int64 // ready time the timer is set for
}

type delayItem struct {
	at   int64 // ready time, nanoseconds since the queue's epoch
	seq  uint32
	node int32
}

func (a delayItem) before(b delayItem) bool {
	return a.at < b.at || a.at == b.at && int32(a.seq-b.seq) < 0
}

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

// AddAfter queues key at Normal priority once d has passed. If d ≤ 0 it is
// Add. Otherwise:
//
//   - If key is already delayed, it keeps the earlier of its ready time and
//     now+d.
//   - If key is already queued, or due to rerun after processing, AddAfter
//     does nothing: it is ready sooner than now+d.
//   - If key is processing, it waits out d; if it is still processing then,
//     it is queued again when Done is called.
//
// AddAfter never allocates for a key the queue already holds and, once the
// queue has held as many keys before, for a new one. After ShutDown it does
// nothing.
func (q *Queue[K]) AddAfter(key K, d time.Duration) {
	if d <= 0 {
		q.Add(key)
		return
	}
	h := q.keys.hash(key)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return
	}
	at := q.now()
	if at > math.MaxInt64-int64(d) {
		at = math.MaxInt64
	} else {
		at += int64(d)
	}
	q.addAt(key, h, at)
}

func (q *Queue[K]) addAt(key K, h uint32, at int64) {
	n, created := q.keys.insert(key, h)
	nd := q.keys.at(n)
	switch {
	case created || nd.state == processing:
		q.heapPush(n, at)
	case nd.state&delayed != 0:
		i := nd.prev
		if at >= q.delay.heap[i].at {
			return
		}
		q.delay.seq++
		q.delay.heap[i].at, q.delay.heap[i].seq = at, q.delay.seq
		q.siftUp(int(i))
	default: // ready or dirty: ready sooner already
		return
	}
	if q.waiters > 0 && q.keys.at(n).prev == 0 {
		q.retime()
	}
}

// retime makes blocked Gets wake at the new earliest ready time.
func (q *Queue[K]) retime() {
	d := &q.delay
	if d.timer == nil {
		// The blocked Gets are not selecting on a timer yet: arm one and
		// wake a Get so that it starts to.
		q.armTimer()
		q.wake()
		return
	}
	if !d.armed || d.heap[0].at < d.armedAt {
		q.armTimer()
	}
}

// armTimer sets the timer for the earliest delayed key, if it is not set
// for it already, and returns the channel a blocking Get selects on: nil if
// nothing is delayed and no timer exists.
func (q *Queue[K]) armTimer() <-chan time.Time {
	d := &q.delay
	if len(d.heap) > 0 && (!d.armed || d.armedAt != d.heap[0].at) {
		wait := time.Duration(d.heap[0].at - q.now())
		if d.timer == nil {
			d.timer = q.clock.NewTimer(wait)
		} else {
			d.timer.Reset(wait)
		}
		d.armed, d.armedAt = true, d.heap[0].at
	}
	if d.timer == nil {
		return nil
	}
	return d.timer.C()
}

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
// through a scratch slice the queue keeps, in a few linear passes over the
// bytes in which the items' ready times and insertion numbers differ.
func (q *Queue[K]) sortDue(h []delayItem) {
	if len(h) < 256 {
		sortItems(h)
		return
	}
	d := &q.delay
	if cap(d.scratch) < len(h) {
		d.scratch = make([]delayItem, len(h), max(len(h), cap(d.heap)))
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
	src, dst := h, d.scratch[:len(h)]
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
	if nd := q.keys.at(n); nd.state&processing != 0 {
		nd.state |= dirtyNormal
		return
	}
	q.enqueue(n, Normal)
}

// now is the queue's clock as nanoseconds since its epoch. For the real
// clock, time.Since reads only the monotonic clock, which costs less than
// time.Now; inside a synctest bubble it reads the bubble's clock.
func (q *Queue[K]) now() int64 {
	if q.realClock {
		return int64(time.Since(q.epoch))
	}
	return int64(q.clock.Now().Sub(q.epoch))
}

func (q *Queue[K]) heapPush(n int32, at int64) {
	h := q.delay.heap
	if len(h) == cap(h) {
		h = grown(h)
	}
	q.delay.seq++
	h = append(h, delayItem{at: at, seq: q.delay.seq, node: n})
	q.delay.heap = h
	nd := q.keys.at(n)
	nd.state |= delayed
	nd.prev = int32(len(h) - 1)
	q.siftUp(len(h) - 1)
}

// heapRemove takes node n out of the heap and clears its delayed flag.
func (q *Queue[K]) heapRemove(n int32) {
	h := q.delay.heap
	i := int(q.keys.at(n).prev)
	last := len(h) - 1
	if i != last {
		h[i] = h[last]
		q.keys.at(h[i].node).prev = int32(i)
	}
	q.delay.heap = h[:last]
	if i != last {
		if !q.siftDown(i) {
			q.siftUp(i)
		}
	}
	nd := q.keys.at(n)
	nd.state &^= delayed
	nd.prev = none
}

func (q *Queue[K]) siftUp(i int) {
	h := q.delay.heap
	x := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if !x.before(h[p]) {
			break
		}
		h[i] = h[p]
		q.keys.at(h[i].node).prev = int32(i)
		i = p
	}
	h[i] = x
	q.keys.at(x.node).prev = int32(i)
}

// siftDown moves the item at i down to its place and reports whether it
// moved.
func (q *Queue[K]) siftDown(i int) bool {
	h := q.delay.heap
	x := h[i]
	start := i
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if r := c + 1; r < len(h) && h[r].before(h[c]) {
			c = r
		}
		if !h[c].before(x) {
			break
		}
		h[i] = h[c]
		q.keys.at(h[i].node).prev = int32(i)
		i = c
	}
	h[i] = x
	q.keys.at(x.node).prev = int32(i)
	return i > start
}
