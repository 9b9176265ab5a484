package boltstore

import (
	"bytes"
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/steady-go/steady/internal/kvwatch"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// Watch streams the changes under prefix after fromRevision, as
// kv.Backend describes: a watch from 0 replays the history from revision 1,
// or ends with store.ErrExpired once the floor has moved past it.
// fromRevision may predate the Open of this Store:
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
func (s *Store) Watch(ctx context.Context, prefix string, fromRevision int64) (<-chan kv.Event, error) {
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
	w := &watch{s: s, prefix: []byte(prefix)}
	out := make(chan kv.Event, s.cfg.watchBuffer)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		kvwatch.Watch{Out: out, Stop: ctx.Done(), Closing: s.bg.Done(), Closed: w.closed}.Run(w, fromRevision)
	}()
	return out, nil
}

// watch is one watch's kvwatch.Reader of the file's history.
type watch struct {
	s      *Store
	prefix []byte
}

func (w *watch) closed() error {
	return fmt.Errorf("boltstore: watch %q: %w", w.prefix, ErrClosed)
}

// Read reads the next batch of events out of the history, as
// kvwatch.Reader describes; the channel it returns is closed by the next
// commit. It scans at most 8×WithWatchBuffer records per transaction, so a
// watch on a quiet prefix of a busy store keeps its transactions short too.
func (w *watch) Read(q []kv.Event, cursor int64) ([]kv.Event, int64, <-chan struct{}, error) {
	wake := w.s.changed()
	var head int64
	err := w.s.view(func(tx *bolt.Tx) error {
		st, err := readState(tx)
		if err != nil {
			return err
		}
		head = st.rev
		if cursor >= head {
			return nil
		}
		if cursor+1 < st.floor {
			return fmt.Errorf("boltstore: watch %q: history after revision %d is gone (it starts at %d): %w",
				w.prefix, cursor, st.floor, store.ErrExpired)
		}
		buf := w.s.cfg.watchBuffer
		c := tx.Bucket(bucketLog).Cursor()
		k, rec := c.Seek(revKey(cursor + 1))
		for scanned := 0; k != nil && len(q) < buf && scanned < 8*buf; k, rec = c.Next() {
			scanned++
			rev := revOf(k)
			if rev != cursor+1 {
				return fmt.Errorf("%w: history record of revision %d where %d belongs", ErrCorrupt, rev, cursor+1)
			}
			cursor = rev
			if key, ok := eventKey(rec); ok && !bytes.HasPrefix(key, w.prefix) {
				continue
			}
			ev, err := decodeEvent(rev, rec)
			if err != nil {
				return err
			}
			ev.KV.Value, ev.Prev.Value = bytes.Clone(ev.KV.Value), bytes.Clone(ev.Prev.Value)
			q = append(q, ev)
		}
		return nil
	})
	if err != nil || len(q) > 0 || cursor < head {
		return q, cursor, nil, err
	}
	return q, cursor, wake, nil
}
