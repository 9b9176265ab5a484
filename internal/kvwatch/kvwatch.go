// Package kvwatch is the sending half of a kv.Backend's Watch, shared by
// memstore, boltstore and pgstore: each watch reads its events out of its backend's
// history in batches, at its receiver's pace, and sends progress marks once
// it has sent everything. A backend supplies only the reading (a Reader);
// how a batch, a mark, the end of the watch's ctx and the backend's Close
// take turns is decided here once.
package kvwatch

import (
	"time"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/store/kv"
)

// A Reader reads a watch's events out of its backend's history.
type Reader interface {
	// Read appends to q the events under the watch's prefix after revision
	// cursor, at most one batch of them, and returns q and the revision up
	// to which it has read. When it has read up to the store's revision and
	// appended nothing, it also returns a channel that receives (or is
	// closed) after the next change, taken so that no change can slip in
	// between the read and the wait; otherwise that channel is nil, except
	// that a Reader may return it with the events it appended, having read
	// up to the store's revision: the caller then looks at it once those
	// events are delivered, and reads again only if it has received (or is
	// closed), rather than reading again to find nothing new. An
	// error (store.ErrExpired when the history no longer holds cursor+1)
	// ends the watch, with no error event if Stop is closed by then. Read
	// may block (to retry a backend that cannot be reached, say) as long as
	// it returns once Stop is closed.
	Read(q []kv.Event, cursor int64) ([]kv.Event, int64, <-chan struct{}, error)
}

// Watch is one watch's channel and what ends it.
type Watch struct {
	// Out is the receiver's channel; its capacity is the batch size. Run
	// closes it when the watch ends.
	Out chan kv.Event
	// Stop is closed when the watch's ctx ends: the watch ends at once,
	// with no further event.
	Stop <-chan struct{}
	// Closing, if not nil, is closed when the backend closes: the watch
	// ends with a last event carrying Closed()'s error if Out has room.
	Closing <-chan struct{}
	Closed  func() error
	// Poll, if positive, makes a watch that waits for a change read again
	// after Poll even without one, for a backend whose change notices can
	// be lost (pgstore's NOTIFY); Clock times it.
	Poll  time.Duration
	Clock clock.Clock
}

// Run sends the events r reads after revision from on w.Out, in order,
// until w.Stop or w.Closing, or until r fails, when it sends a last event
// carrying the error. It reads the next batch only once the last one is in
// the channel, so a watch holds at most two batches of its own: writers
// never wait for it. Once every event is sent it sends a Progress event
// carrying the revision read up to whenever that has moved past the last
// revision sent; a mark waiting for room in a full channel is replaced by a
// newer one rather than queued.
func (w Watch) Run(r Reader, from int64) {
	defer close(w.Out)
	var (
		// cursor is the revision up to which the history has been read,
		// seen the last revision sent to the receiver.
		cursor, seen = from, from
		queue        []kv.Event // queue[head:] are read but not yet sent
		head         int
		wake         <-chan struct{}
		// caught is the channel a read returned with its events (see
		// Reader), looked at once they are sent.
		caught <-chan struct{}
		err    error
		poll   clock.Timer
	)
	if w.Poll > 0 {
		poll = w.Clock.NewTimer(w.Poll)
		defer poll.Stop()
	}
	for {
		if head == len(queue) {
			wake, caught = caught, nil
			if wake == nil || changed(wake) {
				queue, head = queue[:0], 0 // each event was cleared as sent
				queue, cursor, wake, err = r.Read(queue, cursor)
				if err != nil {
					w.fail(err, seen)
					return
				}
				if len(queue) > 0 {
					caught, wake = wake, nil
				}
			}
		} else {
			wake = nil
		}
		var ev kv.Event
		switch {
		case head < len(queue):
			ev = queue[head]
		case wake != nil && cursor > seen:
			ev = kv.Event{Progress: true, Revision: cursor}
		case wake != nil:
			if w.wait(wake, poll, seen) {
				return
			}
			continue
		default:
			continue // more to read
		}
		sent, ended := w.send(ev, wake, seen)
		if ended {
			return
		}
		if !sent {
			continue
		}
		seen = ev.Revision
		if ev.Progress {
			caught = wake // not received: it still tells of the next change
		} else {
			queue[head] = kv.Event{} // release the values
			head++
		}
	}
}

// changed reports whether wake, a channel a Reader returned, holds a value
// (which it takes): a change came since the read that returned it. It
// does not wait, and looks at the channel's length before it receives:
// a receive that finds nothing costs more than the rest of a Next. A
// closed channel holds none: waiting on it then returns at once.
func changed(wake <-chan struct{}) bool {
	if len(wake) == 0 {
		return false
	}
	select {
	case <-wake:
		return true
	default:
		return false
	}
}

// wait waits for wake (or poll, when not nil), and reports whether the
// watch ended instead (after its last event, if the backend closed). seen
// is the last revision sent.
func (w Watch) wait(wake <-chan struct{}, poll clock.Timer, seen int64) (ended bool) {
	var tick <-chan time.Time
	if poll != nil {
		poll.Reset(w.Poll)
		tick = poll.C()
	}
	select {
	case <-wake:
		return false
	case <-tick:
		return false
	case <-w.Stop:
	case <-w.Closing:
		w.fail(w.Closed(), seen)
	}
	return true
}

// send sends ev, and reports whether it did, or whether the watch ended
// instead. wake is nil while events are queued: they are sent whatever
// happens meanwhile. Only a progress mark gives way to a change (sent and
// ended false).
func (w Watch) send(ev kv.Event, wake <-chan struct{}, seen int64) (sent, ended bool) {
	select {
	case w.Out <- ev: // room in the channel: skip the full select
		return true, false
	default:
	}
	select {
	case w.Out <- ev:
		return true, false
	case <-wake:
		return false, false
	case <-w.Stop:
	case <-w.Closing:
		w.fail(w.Closed(), seen)
	}
	return false, true
}

// fail sends the final error event, unless the watch's ctx ended (a
// watch ended by its ctx closes without one) or ends first, or the
// receiver is not there to take it while the backend closes.
func (w Watch) fail(err error, seen int64) {
	select {
	case <-w.Stop:
		return
	default:
	}
	ev := kv.Event{Err: err, Revision: seen}
	select {
	case w.Out <- ev:
	case <-w.Stop:
	case <-w.Closing:
		select {
		case w.Out <- ev:
		default:
		}
	}
}
