package memstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/steady-go/steady/internal/kvwatch"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// Watch streams the changes under prefix after fromRevision, as
// kv.Backend describes: a watch from 0 replays the ring from revision 1,
// or ends with ErrExpired once revision 1 has left it.
//
// The history ring is the watch's backlog. Each watch has a goroutine that
// copies its events out of the ring, at most WithWatchBuffer at a time, and
// sends them on a channel of capacity WithWatchBuffer; it reads the next batch only
// once the last one is in the channel. Writers only append to the ring
// and wake waiting watches; they never wait for one, and a slow receiver
// costs them nothing. A watch ends with a final ErrExpired event when the
// events it has yet to read leave the ring: fromRevision is older than the
// history, or the receiver fell WithHistorySize writes behind, or Compact
// discarded them. The default window (no WithHistorySize) grows instead
// while a live watch lags, up to as many writes as the Store holds keys
// (see WithHistorySize), so a receiver that merely lags keeps its backlog. When ctx ends the goroutine exits and the channel is
// closed.
//
// Once the watch has sent everything under prefix, it sends a Progress event
// carrying the store revision whenever the store has moved past the last
// revision it sent. A mark waiting for room in a full channel is replaced by
// a newer one rather than queued, so a receiver that was away for many
// writes finds at most WithWatchBuffer+2 marks, however many writes there were.
func (s *Store) Watch(ctx context.Context, prefix string, fromRevision int64) (<-chan kv.Event, error) {
	s.count.watches.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if fromRevision < 0 {
		return nil, fmt.Errorf("memstore: watch %q from negative revision %d: %w", prefix, fromRevision, store.ErrInvalid)
	}
	w := s.newWatch(prefix, fromRevision)
	w.stop = make(chan struct{})
	out := make(chan kv.Event, s.watchBuffer)
	// Each watch waits on a channel of its own rather than on ctx.Done(),
	// which all watches of one ctx would contend for in every select.
	release := context.AfterFunc(ctx, func() { close(w.stop) })
	go func() {
		defer release()
		defer s.unwait(w)
		kvwatch.Watch{Out: out, Stop: w.stop}.Run(w, fromRevision)
	}()
	return out, nil
}

// newWatch returns a watch of prefix from fromRevision, registered as live
// (see lagGrow) when the history grows with its watches. Its end must
// unwait it.
func (s *Store) newWatch(prefix string, fromRevision int64) *watch {
	w := &watch{s: s, prefix: prefix, wake: make(chan struct{}, 1)}
	if s.growHistory {
		s.mu.Lock()
		w.cursor = fromRevision
		s.live[w] = struct{}{}
		s.lagCheck = 0 // lagGrow looks at it at the next write
		s.unpin(fromRevision)
		s.mu.Unlock()
	}
	return w
}

// follower is what the Store offers store/cache through
// internal/storeaccess: its watch read in place (kvwatch.Follower).
type follower struct{ s *Store }

func (f follower) Backend() kv.Backend { return f.s }

// Follow is Watch without its goroutine and channel: the caller reads the
// watch's events with a kvwatch.Cursor on its own goroutine, and waits on
// the channel Next returns, which a write wakes, as Watch's goroutine
// does. end takes the watch off the Store's lists; it must be called
// once, when the caller stops reading.
func (f follower) Follow(prefix string, fromRevision int64) (kvwatch.Reader, func(), error) {
	s := f.s
	s.count.watches.Add(1)
	if fromRevision < 0 {
		return nil, nil, fmt.Errorf("memstore: watch %q from negative revision %d: %w", prefix, fromRevision, store.ErrInvalid)
	}
	w := s.newWatch(prefix, fromRevision)
	return w, func() { s.unwait(w) }, nil
}

// watch is one watch's kvwatch.Reader of the history ring.
type watch struct {
	s      *Store
	prefix string
	stop   chan struct{} // closed when the watch's ctx ends
	// wake receives a value after a change while the watch is on the
	// Store's waiting list (see Store.wait); waiting says it is, and is
	// guarded by the Store (its waitMu, or mu held for writing).
	wake    chan struct{}
	waiting bool
	// cursor is the revision up to which the watch has read the ring,
	// kept for lagGrow and settle: Read sets it holding the Store's mu for
	// reading, they read it holding it for writing. lagged says a Read
	// left events to read since the watch last caught up; only Read uses
	// it, and asked, the store revision when it last asked the Store to
	// settle since (0: not yet).
	cursor int64
	lagged bool
	asked  int64
}

// Poke fills the watch's wake without a change (kvwatch.Poker): its
// reader wakes, reads nothing new and waits again. A value pending
// already will do.
func (w *watch) Poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Read copies the next batch of events out of the ring, as kvwatch.Reader
// describes; the channel it returns, with or without events whenever it
// read up to the store revision, is the watch's wake. A watch that
// comes near enough to the store revision for its lag to let the window
// shrink, with a backlog behind it and the window grown, asks the Store to
// (see settle): once it has caught up, no write may follow that would. It
// asks again once caught up, or once a sixteenth of the window at rest
// was written since it last asked.
func (w *watch) Read(q []kv.Event, cursor int64) ([]kv.Event, int64, <-chan struct{}, error) {
	s := w.s
	s.mu.RLock()
	last := s.hist.last
	if cursor < last && !s.hist.covers(cursor) {
		first := s.hist.first
		s.mu.RUnlock()
		return q, cursor, nil, fmt.Errorf("memstore: watch %q: history after revision %d is gone (oldest kept is %d): %w",
			w.prefix, cursor, first, store.ErrExpired)
	}
	for cursor < last && len(q) < s.watchBuffer {
		cursor++
		if ev := s.hist.at(cursor); strings.HasPrefix(ev.key, w.prefix) {
			q = append(q, s.hist.kvEvent(cursor, ev))
		}
	}
	w.cursor = cursor
	settle := w.asksToSettle(last)
	var wake <-chan struct{}
	if cursor >= last {
		// At the store revision, or past it: a watch from a revision
		// not yet written waits for writes (kv.Backend), rather than
		// reading nothing again and again. With events, the wake comes
		// with them (see kvwatch.Reader): their reader looks at it once
		// they are delivered, and reads again only after a change,
		// rather than to find nothing new.
		wake = s.wait(w)
	}
	s.mu.RUnlock()
	if settle {
		s.mu.Lock()
		s.settle()
		s.mu.Unlock()
	}
	return q, cursor, wake, nil
}

// asksToSettle reports whether the watch, having read up to w.cursor with
// the store at revision last, asks the Store to settle (see Read), and
// notes that it does. Callers hold s.mu for reading.
func (w *watch) asksToSettle(last int64) bool {
	s := w.s
	w.lagged = w.lagged || w.cursor < last
	if !w.lagged || s.hist.size <= s.rest || !s.shrinks(s.shrinkTo(last-w.cursor)) {
		return false
	}
	if w.cursor < last && w.asked != 0 && last < w.asked+int64(max(s.rest/16, 1)) {
		return false // it asked lately
	}
	w.asked = last
	if w.cursor == last {
		w.lagged, w.asked = false, 0
	}
	return true
}
