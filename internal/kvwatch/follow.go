package kvwatch

import (
	"github.com/steady-go/steady/store/kv"
)

// Follower is a backend whose watch its receiver may read in place, on
// the receiver's own goroutine, rather than from a channel that a
// goroutine of the watch's fills: an event then reaches the receiver in
// one goroutine hand-off (the write waking it) instead of two. memstore
// offers it to store/cache through internal/storeaccess.
type Follower interface {
	// Backend is the kv.Backend whose watch Follow reads, so that a caller
	// given a wrapper of it (whose Watch means something else) can tell.
	Backend() kv.Backend
	// Follow starts a watch of the changes under prefix after fromRevision,
	// as the backend's Watch would, and returns its reader and the function
	// that ends it, which the caller must call once it stops reading (the
	// watch holds nothing else: no goroutine).
	Follow(prefix string, fromRevision int64) (r Reader, end func(), err error)
}

// Cursor reads a Reader's events in place, with what Run sends: the events
// in order, a Progress mark at the revision read up to once every event is
// delivered and that has moved past the last revision delivered, and a last
// event carrying the error when a read fails. The zero Cursor is not
// usable; call NewCursor. One goroutine at a time may call Next.
type Cursor struct {
	r            Reader
	cursor, seen int64
	queue        []kv.Event // queue[head:] are read but not yet delivered
	head         int
	// caught is the channel a read returned with its events (see Reader),
	// looked at once they are delivered: until it receives, there is
	// nothing new to read.
	caught <-chan struct{}
	failed bool
	// last is the queue's event Next returned last, if any, which the
	// next call clears; mark holds a Progress mark or the error event
	// Next returned.
	last *kv.Event
	mark kv.Event
}

// NewCursor returns a Cursor over the events r reads after revision from.
func NewCursor(r Reader, from int64) *Cursor {
	return &Cursor{r: r, cursor: from, seen: from}
}

// Next returns the next event and true, or false and the channel to wait on
// before calling Next again (nil: call it again at once, another batch is
// due). After it has returned an event whose Err is set it returns false
// and a nil channel for good. The event is the Cursor's, valid until the
// next call, which releases its values: a pointer, where an Event (19
// words) returned by value was copied out, then zeroed in the queue,
// about 300 instructions per event with the caller's copy.
func (c *Cursor) Next() (ev *kv.Event, wake <-chan struct{}, ok bool) {
	if c.last != nil {
		*c.last = kv.Event{} // release the values
		c.last = nil
	}
	if c.failed {
		return nil, nil, false
	}
	if c.head == len(c.queue) {
		wake, c.caught = c.caught, nil
		if wake == nil || changed(wake) {
			c.queue, c.head = c.queue[:0], 0 // each event was cleared as delivered
			var err error
			c.queue, c.cursor, wake, err = c.r.Read(c.queue, c.cursor)
			if err != nil {
				c.failed = true
				c.mark = kv.Event{Err: err, Revision: c.seen}
				return &c.mark, nil, true
			}
			if len(c.queue) > 0 {
				c.caught, wake = wake, nil
			}
		}
	}
	switch {
	case c.head < len(c.queue):
		ev = &c.queue[c.head]
		c.last = ev
		c.head++
	case wake != nil && c.cursor > c.seen:
		c.mark = kv.Event{Progress: true, Revision: c.cursor}
		ev = &c.mark
		c.caught = wake // not yet received: the caller waits on it next
	default:
		return nil, wake, false
	}
	c.seen = ev.Revision
	return ev, nil, true
}

// A Poker is a Reader whose wake channel another goroutine can fill: Poke
// makes the channel Read returns, the same one for the Reader's life,
// receive once (a value already pending will do), without a change. Its
// reader can then wait on that channel alone for a change and for
// whatever else Poke tells of (see Cursor.Poker): a select on two
// channels costs about a thousand instructions more than a receive on
// one, and a quiet watch waits once per event. A poke the Cursor finds
// in the channel (Next) costs one read that finds nothing new.
type Poker interface {
	Reader
	Poke()
}

// Poker returns the function that fills the channel Next returns without
// a change (Poker.Poke), for another goroutine to wake a caller waiting
// on that channel alone; or nil when the Reader cannot be poked, and the
// caller must wait on its other channels beside it.
func (c *Cursor) Poker() func() {
	if p, ok := c.r.(Poker); ok {
		return p.Poke
	}
	return nil
}

// Drained reports whether the events read so far are all delivered: the
// next Next reads the backend again, or finds that nothing changed since
// the last read (see Reader).
func (c *Cursor) Drained() bool { return c.head == len(c.queue) }
