package workqueue

// Ready keys wait in two FIFO lists, one per priority, linked through their
// nodes so that moving a key between them (a normal add of a key queued low)
// costs O(1) and no allocation.

// lowEvery bounds how long a backlogged low list waits: when both lists hold
// keys, at least one dequeue in lowEvery takes a low key.
const lowEvery = 16

type list struct {
	head, tail int32
	n          int
}

func (l *list) init() { l.head, l.tail = none, none }

func (q *Queue[K]) pushBack(l *list, n int32) {
	nd := q.keys.at(n)
	nd.prev, nd.next = l.tail, none
	if l.tail == none {
		l.head = n
	} else {
		q.keys.at(l.tail).next = n
	}
	l.tail = n
	l.n++
}

func (q *Queue[K]) unlink(l *list, n int32) {
	nd := q.keys.at(n)
	if nd.prev == none {
		l.head = nd.next
	} else {
		q.keys.at(nd.prev).next = nd.next
	}
	if nd.next == none {
		l.tail = nd.prev
	} else {
		q.keys.at(nd.next).prev = nd.prev
	}
	nd.prev, nd.next = none, none
	l.n--
}

// enqueue makes node n ready at priority p and wakes a waiting Get.
func (q *Queue[K]) enqueue(n int32, p Priority) { q.enqueueAt(n, p, -1) }

// enqueueAt is enqueue with at, when it is not negative, as the stamp of
// the moment n became ready (for metrics).
func (q *Queue[K]) enqueueAt(n int32, p Priority, at int64) {
	if p == Low {
		q.keys.at(n).state |= readyLow
		q.pushBack(&q.low, n)
	} else {
		q.keys.at(n).state |= readyNormal
		q.pushBack(&q.normal, n)
	}
	if q.m != nil {
		if at < 0 {
			at = q.stamp()
		}
		q.m.queued(n, q.normal.n+q.low.n, at)
	}
	if q.waiters > 0 {
		q.wake()
	}
}

// dequeue removes and returns the next ready node; some list must be
// non-empty. Normal keys go first, except that after lowEvery-1 normal
// dequeues in a row while low keys waited, a low key goes. The count needs
// no timestamps, so the hot path reads no clock.
func (q *Queue[K]) dequeue() int32 {
	l := &q.normal
	if q.low.n > 0 {
		if q.normal.n == 0 || q.normalRun >= lowEvery-1 {
			l = &q.low
			q.normalRun = 0
		} else {
			q.normalRun++
		}
	}
	n := l.head
	q.unlink(l, n)
	q.keys.at(n).state &^= ready
	return n
}

// wake lets one waiting Get run. The channel holds at most one token, and
// woken records that it is in flight, so a burst of adds costs one channel
// send until a Get takes the token. A Get that takes the token and then a
// key, and sees more keys and more waiters, passes a token on, so a burst
// wakes as many waiters as it needs.
func (q *Queue[K]) wake() {
	if q.woken || q.shutdown { // after ShutDown, notify is closed
		return
	}
	q.woken = true
	select {
	case q.notify <- struct{}{}:
	default:
	}
}
