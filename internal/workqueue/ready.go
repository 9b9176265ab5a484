package workqueue

// Ready keys wait in two FIFO lists, one per priority, linked through their
// nodes so that moving a key between them (a normal add of a key queued low)
// costs O(1) and no allocation. The head's prev is not kept (it may name
// any node): the head is known by l.head, so dequeue, the hot path, writes
// no node but the one it takes.

// lowEvery bounds how long a backlogged low list waits: when both lists hold
// keys, at least one dequeue in lowEvery takes a low key.
const lowEvery = 16

type list struct {
	head, tail int32
	n          int
}

func (l *list) init() { l.head, l.tail = none, none }

// pushBack appends node n, nd, to l.
func (q *Queue[K]) pushBack(l *list, n int32, nd *node[K]) {
	nd.prev, nd.next = l.tail, none
	if l.tail == none {
		l.head = n
	} else {
		q.keys.at(l.tail).next = n
	}
	l.tail = n
	l.n++
}

// unlink takes node n, nd, out of l.
func (q *Queue[K]) unlink(l *list, n int32, nd *node[K]) {
	prev := nd.prev
	if n == l.head {
		l.head, prev = nd.next, none // the head's prev is not kept
	} else {
		q.keys.at(prev).next = nd.next
	}
	if nd.next == none {
		l.tail = prev
	} else {
		q.keys.at(nd.next).prev = prev
	}
	nd.prev, nd.next = none, none
	l.n--
}

// enqueue makes node n, nd, ready at priority p and wakes a waiting Get.
func (q *Queue[K]) enqueue(n int32, nd *node[K], p Priority) { q.enqueueAt(n, nd, p, -1) }

// enqueueAt is enqueue with at, when it is not negative, as the stamp of
// the moment n became ready (for metrics).
func (q *Queue[K]) enqueueAt(n int32, nd *node[K], p Priority, at int64) {
	if p == Low {
		nd.state |= readyLow
		q.pushBack(&q.low, n, nd)
	} else {
		nd.state |= readyNormal
		q.pushBack(&q.normal, n, nd)
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

// dequeue removes and returns the next ready node and its number; some list
// must be non-empty. Normal keys go first, except that after lowEvery-1
// normal dequeues in a row while low keys waited, a low key goes. The count
// needs no timestamps, so the hot path reads no clock.
func (q *Queue[K]) dequeue() (int32, *node[K]) {
	l := &q.normal
	if q.low.n > 0 {
		if q.normal.n == 0 || q.normalRun >= lowEvery-1 {
			l = &q.low
			q.normalRun = 0
		} else {
			q.normalRun++
		}
	}
	// unlink, for the head.
	n := l.head
	nd := q.keys.at(n)
	if l.head = nd.next; l.head == none {
		l.tail = none
	}
	nd.prev, nd.next = none, none
	l.n--
	nd.state &^= ready
	return n, nd
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
