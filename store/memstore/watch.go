package memstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/steady-go/steady/store"
)

// Watch streams the changes under prefix after fromRevision, as
// store.Backend describes.
//
// The history ring is the watch's backlog. Each watch has a goroutine that
// copies its events out of the ring, at most WithWatchBuffer at a time, and sends
// them on a channel of capacity WithWatchBuffer; it reads the next batch only
// once the last one is in the channel. Writers only append to the ring
// and wake waiting watches; they never wait for one, and a slow receiver
// costs them nothing. A watch ends with a final ErrExpired event when the
// events it has yet to read leave the ring: fromRevision is older than the
// history, or the receiver fell WithHistorySize writes behind, or Compact
// discarded them. When ctx ends the goroutine exits and the channel is
// closed.
//
// Once the watch has sent everything under prefix, it sends a Progress event
// carrying the store revision whenever the store has moved past the last
// revision it sent. A mark waiting for room in a full channel is replaced by
// a newer one rather than queued, so a receiver that was away for many
// writes finds at most WithWatchBuffer+2 marks, however many writes there were.
func (s *Store) Watch(ctx context.Context, prefix string, fromRevision int64) (<-chan store.KVEvent, error) {
	s.count.watches.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if fromRevision < 0 {
		return nil, fmt.Errorf("memstore: watch %q from negative revision %d: %w", prefix, fromRevision, store.ErrInvalid)
	}
	w := &watch{
		s:      s,
		prefix: prefix,
		out:    make(chan store.KVEvent, s.watchBuffer),
		cursor: fromRevision,
		seen:   fromRevision,
		stop:   make(chan struct{}),
		wake:   make(chan struct{}, 1),
	}
	// Each watch waits on a channel of its own rather than on ctx.Done(),
	// which all watches of one ctx would contend for in every select.
	release := context.AfterFunc(ctx, func() { close(w.stop) })
	go func() {
		defer release()
		defer s.unwait(w)
		w.run()
	}()
	return w.out, nil
}

type watch struct {
	s      *Store
	prefix string
	out    chan store.KVEvent
	// cursor is the revision up to which the ring has been read, seen the
	// last revision sent to the receiver.
	cursor, seen int64
	queue        []store.KVEvent // queue[head:] are read but not yet sent
	head         int
	stop         chan struct{} // closed when the watch's ctx ends
	// wake receives a value after a change while the watch is on the
	// Store's waiting list (see Store.wait); waiting says it is, and is
	// guarded by the Store (its waitMu, or mu held for writing).
	wake    chan struct{}
	waiting bool
}

func (w *watch) run() {
	defer close(w.out)
	for {
		wake, err := w.read()
		if err != nil {
			w.fail(err)
			return
		}
		var ev store.KVEvent
		switch {
		case w.head < len(w.queue):
			ev = w.queue[w.head]
		case wake != nil && w.cursor > w.seen:
			ev = store.KVEvent{Progress: true, Revision: w.cursor}
		case wake != nil:
			select {
			case <-wake:
				continue
			case <-w.stop:
				return
			}
		default:
			continue // more to read
		}
		// wake is nil while events are queued: they are sent whatever
		// happens meanwhile. Only a progress mark gives way to a change.
		select {
		case w.out <- ev: // room in the channel: skip the full select
			w.sent(ev)
			continue
		default:
		}
		select {
		case w.out <- ev:
			w.sent(ev)
		case <-wake:
		case <-w.stop:
			return
		}
	}
}

func (w *watch) sent(ev store.KVEvent) {
	w.seen = ev.Revision
	if !ev.Progress {
		w.queue[w.head] = store.KVEvent{} // release the values
		w.head++
	}
}

// read copies the next batch of events out of the ring once the last one has
// been sent. It returns a channel that receives after the next change when
// the watch has read everything and its queue is empty, and nil otherwise.
func (w *watch) read() (<-chan struct{}, error) {
	if w.head < len(w.queue) {
		return nil, nil
	}
	clear(w.queue)
	w.queue, w.head = w.queue[:0], 0
	s := w.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	last := s.hist.last
	if w.cursor < last && !s.hist.covers(w.cursor) {
		return nil, fmt.Errorf("memstore: watch %q: history after revision %d is gone (oldest kept is %d): %w",
			w.prefix, w.cursor, s.hist.first, store.ErrExpired)
	}
	for w.cursor < last && len(w.queue) < s.watchBuffer {
		w.cursor++
		if ev := s.hist.at(w.cursor); strings.HasPrefix(ev.KV.Key, w.prefix) {
			w.queue = append(w.queue, *ev)
		}
	}
	if len(w.queue) > 0 || w.cursor < last {
		return nil, nil
	}
	return s.wait(w), nil
}

// fail sends the final error event, unless the watch's ctx ends first.
func (w *watch) fail(err error) {
	select {
	case w.out <- store.KVEvent{Err: err, Revision: w.seen}:
	case <-w.stop:
	}
}
