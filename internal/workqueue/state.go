package workqueue

import "time"

// KeyState is what the queue knows about one key at one moment. The zero
// KeyState means the queue holds nothing for the key.
type KeyState struct {
	// Queued is true while the key is ready and waiting for Get, at
	// Priority.
	Queued bool
	// Priority is the level the key waits at when Queued, or will be
	// queued at when Dirty. It is Normal otherwise.
	Priority Priority
	// Processing is true from Get until Done.
	Processing bool
	// Dirty is true when the key was added while processing, so it will be
	// queued again, at Priority, when Done is called.
	Dirty bool
	// Delayed is true while the key waits for ReadyAt, after AddAfter or
	// AddRateLimited. A key may be Delayed and Processing at once.
	Delayed bool
	// ReadyAt is when a Delayed key becomes ready; zero otherwise.
	ReadyAt time.Time
}

// Idle reports whether the queue holds nothing for the key.
func (s KeyState) Idle() bool { return s == KeyState{} }

// State returns what the queue holds for key right now. A delayed key whose
// time has come is reported Queued. State is for inspection and tests: like
// Len, it may be stale by the time it is read.
func (q *Queue[K]) State(key K) KeyState {
	h := q.keys.hash(key)
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.delay.heap) > 0 {
		q.promoteDue()
	}
	_, nd, _ := q.keys.lookup(key, h)
	if nd == nil {
		return KeyState{}
	}
	return q.stateOf(nd)
}
