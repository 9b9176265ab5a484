package workqueue

import (
	"math"
	"time"

	"github.com/steady-go/steady/clock"
)

// Delayed keys wait in a binary min-heap of ready times, indexed from their
// nodes so that an earlier AddAfter or a normal Add finds a key's entry in
// O(1) and fixes the heap in O(log n). One timer serves the whole heap. A
// Get that must block arms it, and so does an AddAfter that brings the
// earliest ready time forward while a Get is blocked; there is no goroutine
// per key, and adds that arrive while no Get waits never touch the timer.

type delayState struct {
	heap    []delayItem
	seq     uint32      // orders equal ready times by insertion
	scratch []delayItem // for sortDue
	skips   int         // Gets since the heap was last checked for due keys
	timer   clock.Timer
	armed   bool  // the timer is set for armedAt and has not been received
	armedAt int64 // ready time the timer is set for
	seen    int64 // the latest reading of now: the clock never reads earlier
}

type delayItem struct {
	at   int64 // ready time, nanoseconds since the queue's epoch
	seq  uint32
	node int32
}

func (a delayItem) before(b delayItem) bool {
	return a.at < b.at || a.at == b.at && int32(a.seq-b.seq) < 0
}

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
	if key != key { // see refused
		q.refused(key)
		return
	}
	h := q.keys.hash(key)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return
	}
	q.addAt(key, h, q.after(d))
}

// after returns the time d > 0 from now, as nanoseconds since the queue's
// epoch, saturated rather than overflowed.
func (q *Queue[K]) after(d time.Duration) int64 {
	at := q.now()
	if at > math.MaxInt64-int64(d) {
		return math.MaxInt64
	}
	return at + int64(d)
}

func (q *Queue[K]) addAt(key K, h uint32, at int64) {
	n, _, created := q.keys.insert(key, h)
	q.delayNode(n, created, at)
}

// delayNode is addAt for node n, just found or created by insert.
func (q *Queue[K]) delayNode(n int32, created bool, at int64) {
	nd := q.keys.at(n)
	switch {
	case created || nd.state&^processing == 0: // new, kept for its failure count, or processing only
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

// now is the queue's clock as nanoseconds since its epoch. For the real
// clock, time.Since reads only the monotonic clock, which costs less than
// time.Now; inside a synctest bubble it reads the bubble's clock.
func (q *Queue[K]) now() int64 {
	t := q.stamp()
	q.delay.seen = t
	return t
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
