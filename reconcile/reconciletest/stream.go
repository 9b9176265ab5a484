package reconciletest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// stream is one watch of the controller, delivered by the scheduler. The
// backend's own watch feeds pending; the scheduler moves events from pending
// to the watcher one step at a time, and decides on the way whether an
// event is dropped, duplicated or held back, or the stream expires.
//
// Progress notifications of the backend are not passed on (their
// coalescing depends on timing); the scheduler sends its own, at the store
// revision, whenever a stream has nothing pending.
type stream struct {
	p      *Process
	sp     *space
	prefix string // the prefix watched, tagged with sp's tag
	ctx    context.Context
	feed   chan kv.Event

	// Guarded by w.mu.
	pending     []kv.Event
	sent        int64
	pausedUntil time.Time
	expireAt    time.Time // a stream that lost an event ends then
	lost        bool
	closed      bool
	again       bool // pending[0] is a duplicate to deliver as it is
}

func compareStreams(a, b *stream) int {
	if c := cmp.Compare(a.p.Incarnation, b.p.Incarnation); c != 0 {
		return c
	}
	return cmp.Compare(a.prefix, b.prefix)
}

// watch starts a stream of the changes under prefix of space sp after
// from.
func (w *world) watch(ctx context.Context, p *Process, sp *space, prefix string, from int64) (<-chan kv.Event, error) {
	ictx, cancel := context.WithCancel(ctx)
	inner, err := sp.mem.Watch(ictx, prefix, from)
	if err != nil {
		cancel()
		return nil, err
	}
	prefix = sp.tag + prefix
	s := &stream{p: p, sp: sp, prefix: prefix, ctx: ctx, feed: make(chan kv.Event, 4), sent: from}
	out := make(chan kv.Event, 8)
	w.mu.Lock()
	if p.lagged[prefix] {
		delete(p.lagged, prefix)
		s.pausedUntil = time.Now().Add(p.lagFor)
		w.traceLocked("%s watch of process %d lags behind for %v", prefix, p.Incarnation, p.lagFor)
	}
	w.streams = append(w.streams, s)
	slices.SortStableFunc(w.streams, compareStreams)
	w.mu.Unlock()
	go func() {
		defer close(out)
		defer cancel()
		for {
			select {
			case ev, ok := <-inner:
				if !ok {
					inner = nil
					continue
				}
				if ev.Progress {
					continue
				}
				w.mu.Lock()
				s.pending = append(s.pending, ev)
				w.mu.Unlock()
				w.poke()
			case ev := <-s.feed:
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
				if ev.Err != nil {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// send hands ev to s's watcher.
func (s *stream) send(ev kv.Event) {
	select {
	case s.feed <- ev:
	case <-s.ctx.Done():
	}
}

// deliver moves the next event of s to its watcher, unless a fault gets in
// the way.
func (w *world) deliver(s *stream, now time.Time) {
	revs := w.cacheRevs()
	w.mu.Lock()
	if len(s.pending) == 0 || s.closed {
		w.mu.Unlock()
		return
	}
	ev := s.pending[0]
	if ev.Err == nil && s.sent < ev.Revision-1 {
		// Catch up to just below the event first, in a step of its own:
		// then the event moves the cache by one revision, and cannot be
		// what completes a read-your-writes wait for an earlier write
		// (see ryw).
		to := w.capLocked(s, s.sent, ev.Revision-1, revs)
		s.sent = to
		w.mu.Unlock()
		s.send(kv.Event{Progress: true, Revision: to})
		return
	}
	faults := w.faultsOn && ev.Err == nil && !s.again
	if faults && w.delayLocked(s, ev, now) {
		w.mu.Unlock()
		return
	}
	s.pending = s.pending[1:]
	if faults && w.dropLocked(s, ev, now) {
		w.mu.Unlock()
		return
	}
	expire := w.passLocked(s, ev, faults)
	w.mu.Unlock()
	s.send(ev)
	if expire {
		w.fault("expire", "%s after revision %d", s.prefix, ev.Revision)
		w.expire(s)
	}
}

// delayLocked draws whether s pauses before ev (a DelayEvents fault), and
// pauses it if so.
func (w *world) delayLocked(s *stream, ev kv.Event, now time.Time) bool {
	if !w.chance(w.f.DelayEvents) {
		return false
	}
	d := time.Duration(1 + w.rng.Int64N(int64(w.f.MaxDelay)))
	s.pausedUntil = now.Add(d)
	w.rep.Faults["delay"]++
	// A held stream holds back every object with an event in it: their
	// caches lag, so their writes may conflict and be retried.
	seen := map[string]bool{}
	for _, p := range s.pending {
		if n := primaryOf(s, p); n != "" && !seen[n] {
			seen[n] = true
			w.disturbLocked(n)
		}
	}
	w.traceLocked("fault delay: %s held %v at revision %d", s.prefix, d, ev.Revision)
	return true
}

// dropLocked draws whether ev, taken off s, is lost (a DropEvents fault):
// then s expires a while later, as a watch that missed an event does.
func (w *world) dropLocked(s *stream, ev kv.Event, now time.Time) bool {
	if !w.chance(w.f.DropEvents) {
		return false
	}
	s.lost = true
	if s.expireAt.IsZero() {
		s.expireAt = now.Add(time.Duration(1 + w.rng.Int64N(int64(w.f.MaxDelay))))
	}
	w.rep.Faults["drop"]++
	w.disturbLocked(primaryOf(s, ev))
	w.traceLocked("fault drop: %s revision %d", s.prefix, ev.Revision)
	return true
}

// passLocked readies ev, taken off s, for delivery: it draws whether it is
// duplicated (put back for a step of its own) and whether s expires after
// it, which it reports.
func (w *world) passLocked(s *stream, ev kv.Event, faults bool) (expire bool) {
	dup := faults && w.chance(w.f.DuplicateEvents)
	expire = faults && w.chance(w.f.ExpireWatches)
	s.sent = max(s.sent, ev.Revision)
	if s.again {
		w.traceLocked("deliver %s revision %d again", ev.KV.Key, ev.Revision)
	} else {
		w.traceLocked("deliver %s revision %d", ev.KV.Key, ev.Revision)
	}
	s.again = false
	if dup && !expire {
		// The copy is delivered by a step of its own: sent back to back,
		// its hint would race the worker taking the first one's.
		w.rep.Faults["duplicate"]++
		w.traceLocked("fault duplicate: %s revision %d", s.prefix, ev.Revision)
		s.pending = append([]kv.Event{ev}, s.pending...)
		s.again = true
	}
	if ev.Err != nil {
		s.closed = true
	}
	return expire
}

// primaryOf names the object an event is about, for disturbance counts.
func primaryOf(s *stream, ev kv.Event) string {
	if m, _, err := storeaccess.DecodeMeta[store.Meta, store.Condition](ev.Prev.Value); err == nil && len(ev.Prev.Value) > 0 {
		return ownerOrSelf(m)
	}
	if m, _, err := storeaccess.DecodeMeta[store.Meta, store.Condition](ev.KV.Value); err == nil {
		return ownerOrSelf(m)
	}
	return ""
}

func ownerOrSelf(m store.Meta) string {
	for _, o := range m.Owners {
		if o.Controller {
			return o.Name
		}
	}
	return m.Name
}

// expire ends s with ErrExpired, as a broken watch does; its cache relists.
func (w *world) expire(s *stream) {
	w.mu.Lock()
	if s.closed {
		w.mu.Unlock()
		return
	}
	s.closed = true
	ev := kv.Event{Revision: s.sent, Err: fmt.Errorf("%w: %w: watch of %q broken", store.ErrExpired, errInjected, s.prefix)}
	w.traceLocked("expire %s at revision %d", s.prefix, s.sent)
	w.mu.Unlock()
	s.send(ev)
}

// housekeep drops finished streams, expires streams whose lost events are
// due, and sends a progress mark at the store revision to every stream that
// has nothing pending, so read-your-writes waits end. It reports whether it
// did anything, so the scheduler lets that settle before its next decision.
func (w *world) housekeep(now time.Time) bool {
	mainRev, otherRev := w.main.mem.Revision(), w.other.mem.Revision()
	revs := w.cacheRevs()
	w.mu.Lock()
	type mark struct {
		s   *stream
		rev int64
	}
	var expire []*stream
	var progress []mark
	w.streams = slices.DeleteFunc(w.streams, func(s *stream) bool { return s.closed || s.ctx.Err() != nil })
	w.settleRywsLocked(now)
	for _, s := range w.streams {
		rev := mainRev
		if s.sp == w.other {
			rev = otherRev
		}
		switch {
		case s.lost && !s.expireAt.IsZero() && !now.Before(s.expireAt):
			expire = append(expire, s)
		case len(s.pending) == 0 && s.sent < rev && !now.Before(s.pausedUntil):
			to := rev
			if h := w.holdLocked(s, revs); h > 0 {
				to = min(to, h)
			}
			to = w.capLocked(s, s.sent, to, revs)
			if to > s.sent {
				s.sent = to
				progress = append(progress, mark{s, to})
			}
		}
	}
	w.mu.Unlock()
	for _, s := range expire {
		w.expire(s)
	}
	for _, m := range progress {
		m.s.send(kv.Event{Progress: true, Revision: m.rev})
	}
	return len(expire)+len(progress) > 0
}

// streamWakes returns the instants at which a held stream may move again.
func (w *world) streamWakes() []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []time.Time
	for _, s := range w.streams {
		if !s.pausedUntil.IsZero() {
			out = append(out, s.pausedUntil)
		}
		if s.lost && !s.expireAt.IsZero() {
			out = append(out, s.expireAt)
		}
	}
	return out
}
