package boltstore

import (
	"bytes"
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/steady-go/steady/store"
)

// Watch streams the changes under prefix after fromRevision, as
// store.Backend describes. fromRevision may predate the Open of this Store:
// the file's history is the watch's backlog, so a watch resumes across a
// restart as far back as the history reaches.
//
// Each watch has a goroutine that reads its events out of the history, at
// most WithWatchBuffer at a time in one short read transaction, and sends them
// on a channel of capacity WithWatchBuffer; it reads the next batch only once
// the last one is in the channel. Writers never wait for a watch. A watch
// ends with a final event wrapping store.ErrExpired when the events it has
// yet to read leave the history: fromRevision is older than the history
// floor, or the receiver fell so far behind that compaction removed them.
// When ctx ends the goroutine exits and the channel is closed; on Close the
// watch ends with an event wrapping ErrClosed.
//
// Once the watch has sent everything under prefix, it sends a Progress event
// carrying the store revision whenever the store has moved past the last
// revision it sent; a mark waiting for room in a full channel is replaced by
// a newer one rather than queued.
func (s *Store) Watch(ctx context.Context, prefix string, fromRevision int64) (<-chan store.KVEvent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if fromRevision < 0 {
		return nil, fmt.Errorf("boltstore: watch %q from negative revision %d: %w", prefix, fromRevision, store.ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("boltstore: watch on %s: %w", s.path, ErrClosed)
	}
	if fromRevision == 0 {
		fromRevision = s.head.Load()
	}
	w := &watch{
		s:      s,
		prefix: []byte(prefix),
		out:    make(chan store.KVEvent, s.cfg.watchBuffer),
		cursor: fromRevision,
		seen:   fromRevision,
		ctx:    ctx,
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		w.run()
	}()
	return w.out, nil
}

type watch struct {
	s      *Store
	prefix []byte
	out    chan store.KVEvent
	// cursor is the revision up to which the history has been read, seen
	// the last revision sent to the receiver.
	cursor, seen int64
	queue        []store.KVEvent // queue[head:] are read but not yet sent
	head         int
	ctx          context.Context
}

func (w *watch) run() {
	defer close(w.out)
	stop, closing := w.ctx.Done(), w.s.bg.Done()
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
			case <-stop:
				return
			case <-closing:
				w.fail(fmt.Errorf("boltstore: watch %q: %w", w.prefix, ErrClosed))
				return
			}
		default:
			continue // more to read
		}
		// wake is nil while events are queued: they are sent whatever
		// happens meanwhile. Only a progress mark gives way to a change.
		select {
		case w.out <- ev:
			w.sent(ev)
		case <-wake:
		case <-stop:
			return
		case <-closing:
			w.fail(fmt.Errorf("boltstore: watch %q: %w", w.prefix, ErrClosed))
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

// read reads the next batch of events out of the history once the last one
// has been sent. It returns a channel closed by the next commit when the
// watch has read everything and its queue is empty, and nil otherwise. It
// scans at most 8×WithWatchBuffer records per transaction, so a watch on a
// quiet prefix of a busy store keeps its transactions short too.
func (w *watch) read() (<-chan struct{}, error) {
	if w.head < len(w.queue) {
		return nil, nil
	}
	clear(w.queue)
	w.queue, w.head = w.queue[:0], 0
	wake := w.s.changed()
	var head int64
	err := w.s.view(func(tx *bolt.Tx) error {
		st, err := readState(tx)
		if err != nil {
			return err
		}
		head = st.rev
		if w.cursor >= head {
			return nil
		}
		if w.cursor+1 < st.floor {
			return fmt.Errorf("boltstore: watch %q: history after revision %d is gone (it starts at %d): %w",
				w.prefix, w.cursor, st.floor, store.ErrExpired)
		}
		buf := w.s.cfg.watchBuffer
		c := tx.Bucket(bucketLog).Cursor()
		k, rec := c.Seek(revKey(w.cursor + 1))
		for scanned := 0; k != nil && len(w.queue) < buf && scanned < 8*buf; k, rec = c.Next() {
			scanned++
			rev := revOf(k)
			if rev != w.cursor+1 {
				return fmt.Errorf("%w: history record of revision %d where %d belongs", ErrCorrupt, rev, w.cursor+1)
			}
			w.cursor = rev
			if key, ok := eventKey(rec); ok && !bytes.HasPrefix(key, w.prefix) {
				continue
			}
			ev, err := decodeEvent(rev, rec)
			if err != nil {
				return err
			}
			ev.KV.Value, ev.Prev.Value = bytes.Clone(ev.KV.Value), bytes.Clone(ev.Prev.Value)
			w.queue = append(w.queue, ev)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(w.queue) > 0 || w.cursor < head {
		return nil, nil
	}
	return wake, nil
}

// fail sends the final error event, unless the watch's ctx ends first or
// the receiver is not there to take it during Close.
func (w *watch) fail(err error) {
	select {
	case w.out <- store.KVEvent{Err: err, Revision: w.seen}:
	case <-w.ctx.Done():
	case <-w.s.bg.Done():
		select {
		case w.out <- store.KVEvent{Err: err, Revision: w.seen}:
		default:
		}
	}
}
