package workqueue

import (
	"iter"
	"time"
)

// Counts is how many keys a queue holds in each state at one moment. A key
// may count in more than one field: a key processing and also delayed, or
// processing and dirty, counts in both.
type Counts struct {
	// Ready is the number of keys waiting for Get at Normal priority, Low
	// at Low priority; Ready+Low is Len.
	Ready, Low int
	// Processing is the number of keys handed out by Get and not yet Done.
	Processing int
	// Dirty is the number of processing keys that will be queued again at
	// Done.
	Dirty int
	// Delayed is the number of keys waiting for a ready time (AddAfter,
	// AddRateLimited).
	Delayed int
}

// Counts returns how many keys the queue holds in each state. It walks
// every key, under the queue's lock, and allocates nothing: it is for
// inspection pages and metric scrapes, not for a hot path. Keys whose delay
// has passed are counted as Ready. Like Len, the result may be stale by the
// time it is read.
func (q *Queue[K]) Counts() Counts {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.delay.heap) > 0 {
		q.promoteDue()
	}
	var c Counts
	for n := int32(0); n < q.keys.n; n++ {
		st := q.keys.at(n).state
		switch {
		case st&readyNormal != 0:
			c.Ready++
		case st&readyLow != 0:
			c.Low++
		}
		if st&processing != 0 {
			c.Processing++
		}
		if st&dirty != 0 {
			c.Dirty++
		}
		if st&delayed != 0 {
			c.Delayed++
		}
	}
	return c
}

// All returns every key the queue holds something for (queued, processing
// or delayed) with its state, as State would report it, in no particular
// order. The states are copied under the queue's lock before the first is
// yielded, so the loop body may call the queue; they are the queue at one
// moment, and may be stale by the time they are read. It is for inspection
// pages, not for a hot path: it costs one KeyState per key held.
func (q *Queue[K]) All() iter.Seq2[K, KeyState] {
	return func(yield func(K, KeyState) bool) {
		type entry struct {
			key K
			st  KeyState
		}
		q.mu.Lock()
		if len(q.delay.heap) > 0 {
			q.promoteDue()
		}
		var out []entry
		for n := int32(0); n < q.keys.n; n++ {
			nd := q.keys.at(n)
			if nd.state == 0 {
				continue // a free node
			}
			out = append(out, entry{nd.key, q.stateOf(nd)})
		}
		q.mu.Unlock()
		for _, e := range out {
			if !yield(e.key, e.st) {
				return
			}
		}
	}
}

// stateOf is the KeyState of node nd. The caller holds q.mu.
func (q *Queue[K]) stateOf(nd *node[K]) KeyState {
	s := KeyState{
		Queued:     nd.state&ready != 0,
		Processing: nd.state&processing != 0,
		Dirty:      nd.state&dirty != 0,
		Delayed:    nd.state&delayed != 0,
	}
	if nd.state&(readyLow|dirtyLow) != 0 {
		s.Priority = Low
	}
	if s.Delayed {
		s.ReadyAt = q.epoch.Add(time.Duration(q.delay.heap[nd.prev].at))
	}
	return s
}
