package store

import (
	"github.com/steady-go/steady/internal/drain"
	"github.com/steady-go/steady/internal/kvwatch"
	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/store/kv"

	"context"
	"fmt"
	"log/slog"
	"slices"
)

// Watch streams the changes to the Store's objects with revisions strictly
// greater than fromRevision, in revision order: pass List.Revision to follow
// a listing without a gap or a repeat, even a listing of an empty Store
// (Revision 0). A fromRevision of 0 is no special case: it replays every
// change from revision 1 on, or ends with ErrExpired when that history is
// gone (kv.Backend's Watch); it does not mean "from now". To see only
// changes from now on, watch from the Revision of a List. A negative
// fromRevision is ErrInvalid.
//
// Each change is an Added, Modified or Deleted event. Object is the object
// after the change, with its Meta.LastWrite and with Meta.Revision set to the
// change's revision; Prev is the object before it (nil for Added). For
// Deleted, Object and Prev both hold the last stored state, Object with the
// deleting revision and Prev with the revision it was written at; Object's
// LastWrite is therefore that of the last write before the deletion.
// Progress events (Progress true, Object nil) report that every change up to
// Revision has been delivered.
//
// The channel is closed when ctx ends or the watch fails. A watch that fails
// sends a last event whose Err is set: it wraps ErrExpired when history up to
// fromRevision is gone or the watcher fell behind (relist, then watch from
// the new list's revision). A stored value that is not an object of the kind
// does not end the watch: its event carries Undecodable instead of an
// Object (see Event). Events are never silently dropped. The caller must keep reading
// until the channel closes or cancel ctx; the Backend, not the reader, sets
// how far a reader may fall behind.
func (s *Store[S, T]) Watch(ctx context.Context, fromRevision int64) (<-chan Event[S, T], error) {
	return s.watch(ctx, fromRevision, true, nil)
}

// WatchWithoutPrev is Watch for a caller that keeps its own copy of the
// objects, as store/cache's Cache does, and so needs no previous states:
// it saves decoding one. Prev is nil in every event; a write over an
// existing value is Modified whether or not that value decoded; and a
// Deleted event's Object holds only Meta.Kind, Name and Revision (the
// deleting revision). Everything else (the Object of a write, Undecodable,
// Revision, Progress, Err, order, the end of the channel) is as Watch
// describes, except that keep, when not nil, filters the writes by name as
// ListOptions.Keep does: a write to an object whose name keep rejects is a
// Progress event at its revision, its value neither decoded nor
// remembered. Deletions are delivered whatever keep says (they decode
// nothing), so a caller holding an object keep now rejects still sees it
// deleted.
//
// It is store/cache's, reached through internal/storeaccess (see internalView).
func (v *internalView[S, T]) WatchWithoutPrev(ctx context.Context, fromRevision int64, keep func(name string) bool) (<-chan Event[S, T], error) {
	return (*Store[S, T])(v).watch(ctx, fromRevision, false, keep)
}

// WatchUndecoded is WatchWithoutPrev without its goroutine: it returns the
// backend's watch channel and the function that turns each of its events
// into the event WatchWithoutPrev would deliver, so that the caller decodes
// on its own goroutine and an event reaches it in one hand-off instead of
// two. The channel is the Backend's: it closes when ctx ends or after an
// event whose Err is set, and the caller must read it until it closes or
// cancel ctx. decode must be called in the order the events arrive, by one
// goroutine at a time (it reuses scratch space). A negative fromRevision is
// ErrInvalid.
//
// held, when not nil, is the caller's promise that the objects decode
// returns are shared and read-only, and that held(name, revision) returns
// the object it holds for name if that is the one decode returned for
// name's value at revision (or a listing did), unchanged since, and nil
// otherwise; decode calls it on the caller's goroutine. The event of a
// write of the Store's own that left the spec's bytes as they were in a
// value the caller holds (a status write) then takes the Spec of the held
// object, memory shared, instead of decoding it again (see decodeWritten):
// it is what the same bytes decode to, and no one changes either object.
// The event of any other write takes from the object held for the value
// before it what the write left as it was (see baseValue): the strings,
// maps and slices of its Meta whose text is the held ones' (metaAsWritten),
// the strings, []string and map[string]string fields of a Spec or Status
// it decodes whose text decodes to the held ones (heldSide), and, over a value the Store remembers as one it read whole or wrote (see
// lastValue.whole), what the write left byte for byte as it was:
// Conditions, the Status when its type has a sideDecoder, and, when the
// memory knows the head of that value (see storedHead), the metadata up
// to their last write (baseHead). Objects of
// different names share their ownership records, labels and annotations,
// and the []string and map[string]string fields of a Spec or Status, when
// equal to ones decode returned lately (see sharedValues). Only a kind without versions whose
// Spec type runs no code of its own as it decodes does any of these.
//
// It is store/cache's Run's, reached through internal/storeaccess.
func (v *internalView[S, T]) WatchUndecoded(ctx context.Context, fromRevision int64, keep func(name string) bool, held func(name string, revision int64) *Object[S, T]) (<-chan kv.Event, func(kv.Event) Event[S, T], error) {
	s := (*Store[S, T])(v)
	if fromRevision < 0 {
		return nil, nil, fmt.Errorf("%w: negative watch revision %d", ErrInvalid, fromRevision)
	}
	in, err := s.b.Watch(ctx, s.prefix, fromRevision)
	if err != nil {
		return nil, nil, err
	}
	d := s.decoder(false, keep, s.heldObjects(held))
	return in, d, nil
}

// FollowUndecoded is WatchUndecoded for a backend whose watch its caller
// can read in place (memstore: see kvwatch.Follower): no channel, no
// goroutine, the caller reads the backend's events with the Cursor on its
// own goroutine and waits on the channel Next returns. end ends the watch;
// the caller must call it once it stops reading. ok is false, and nothing
// started, when the backend offers no such watch; the caller then calls
// WatchUndecoded. Events, decode and held are as WatchUndecoded says.
//
// It is store/cache's Run's, reached through internal/storeaccess.
func (v *internalView[S, T]) FollowUndecoded(fromRevision int64, keep func(name string) bool, held func(name string, revision int64) *Object[S, T]) (cur *kvwatch.Cursor, end func(), decode func(kv.Event) Event[S, T], ok bool, err error) {
	s := (*Store[S, T])(v)
	f, isFollower := storeaccess.Of(s.b).(kvwatch.Follower)
	if !isFollower || f.Backend() != s.b { // a wrapper's Watch is what it means the Cache to see
		return nil, nil, nil, false, nil
	}
	if fromRevision < 0 {
		return nil, nil, nil, true, fmt.Errorf("%w: negative watch revision %d", ErrInvalid, fromRevision)
	}
	r, end, err := f.Follow(s.prefix, fromRevision)
	if err != nil {
		return nil, nil, nil, true, err
	}
	return kvwatch.NewCursor(r, fromRevision), end, s.decoder(false, keep, s.heldObjects(held)), true, nil
}

// heldObjects is what a watch knows of the objects its caller holds (see
// WatchUndecoded).
type heldObjects[S, T any] struct {
	held func(name string, revision int64) *Object[S, T]
}

// heldObjects returns the heldObjects of held, or nil when held is nil or
// the Spec cannot be taken from a held object: its decoding must be a
// function of its bytes alone (the kind has no versions, whose conversions
// are the user's code, and the type no decoding of its own: it has a
// sideDecoder).
func (s *Store[S, T]) heldObjects(held func(string, int64) *Object[S, T]) *heldObjects[S, T] {
	if held == nil || s.ver != nil || s.ownCodec || s.sides == nil || s.sides.spec == nil {
		return nil
	}
	return &heldObjects[S, T]{held: held}
}

// sameSpec returns the object held for name decoded from a value whose
// spec's bytes are those of e, a value the Store remembers, with those
// bytes (see lastValue.sameSpecAs); false when there is none.
func (h *heldObjects[S, T]) sameSpec(name string, e *lastValue) (decodedFrom[S, T], bool) {
	if h == nil || e.sameSpecAs == 0 {
		return decodedFrom[S, T]{}, false
	}
	obj := h.held(name, e.sameSpecAs)
	if obj == nil {
		return decodedFrom[S, T]{}, false
	}
	return decodedFrom[S, T]{obj: obj, spec: e.raw.Spec}, true
}

// decodeOver decodes the value of ev, a write, taking what it left as it
// was from the object held for name at the revision it was written over,
// when there is one (see baseValue): its metadata's parts that are the
// same, and when the Store remembers the value that object was decoded
// from, as decodeStored reads it whole, any part whose bytes are the same.
// mem is what the Store remembers of ev.KV.Key (see rememberedOnce).
func (s *Store[S, T]) decodeOver(ev kv.Event, name string, mem *rememberedOnce, scratch *decodeScratch, cp copies, held *heldObjects[S, T]) (decodedFrom[S, T], error) {
	if held == nil || ev.Prev.ModRevision == 0 {
		return s.decodeLike(ev.KV, scratch, nil, cp)
	}
	obj := held.held(name, ev.Prev.ModRevision)
	if obj == nil {
		return s.decodeLike(ev.KV, scratch, nil, cp)
	}
	var base, head []byte // not remembered: no bytes in common
	e, ok := mem.at(s.last, ev.Prev.ModRevision)
	if ok && e.whole {
		base, head = e.value, baseHeadOf(&e)
	}
	scratch.base.set(base, ev.KV.Value, &obj.Meta, obj.Conditions, copies{spec: s.sides.spec != nil, status: s.sides.status != nil})
	scratch.base.withHead(head)
	if !ok {
		// The memory is ahead of the event: mostly it is the Store's own
		// write, no longer remembered decoded (decodeWritten declined).
		if own, ok := mem.at(s.last, ev.KV.ModRevision); ok && own.written {
			scratch.base.overOwn(&own, ev.KV.Value, ev.Prev.ModRevision)
		}
	}
	from, err := s.decodeLikeOver(ev.KV, name, scratch, &decodedFrom[S, T]{obj: obj}, copies{}, &scratch.base)
	scratch.base = baseValue{} // holds the object no longer
	return from, err
}

// baseHeadOf returns the head (see storedHead) of e's value as the memory
// knows it (lastValue.headEnd), empty when it does not.
func baseHeadOf(e *lastValue) []byte {
	return e.value[:min(e.headEnd, len(e.value))]
}

// decoder returns the function that types a watch's backend events, with
// scratch space of its own: one goroutine at a time may call it. held is
// nil unless the caller holds the objects read-only (see WatchUndecoded).
func (s *Store[S, T]) decoder(withPrev bool, keep func(string) bool, held *heldObjects[S, T]) func(kv.Event) Event[S, T] {
	scratch := new(decodeScratch)
	if held != nil {
		scratch.sharing = new(sharedValues)
	}
	cp := copiesOf[S, T]()
	return func(ev kv.Event) Event[S, T] {
		if s.rejects(ev, keep) {
			return Event[S, T]{Revision: ev.Revision, Progress: true}
		}
		return s.typedEvent(ev, scratch, cp, withPrev, held)
	}
}

// watch is Watch, and WatchWithoutPrev without withPrev.
func (s *Store[S, T]) watch(ctx context.Context, fromRevision int64, withPrev bool, keep func(string) bool) (<-chan Event[S, T], error) {
	if fromRevision < 0 {
		return nil, fmt.Errorf("%w: negative watch revision %d", ErrInvalid, fromRevision)
	}
	wctx, cancel := context.WithCancel(ctx)
	in, err := s.b.Watch(wctx, s.prefix, fromRevision)
	if err != nil {
		cancel()
		return nil, err
	}
	out := make(chan Event[S, T])
	go func() {
		defer close(out)
		// Stopping early (ctx ended, or the watch failed) ends the
		// backend watch too; once in is drained and closed its goroutines
		// are gone, so out closes last.
		defer func() {
			cancel()
			s.drainWatch(in)
		}()
		decode := s.decoder(withPrev, keep, nil) // this goroutine's alone
		for {
			var ev kv.Event
			var open bool
			select {
			case ev, open = <-in:
			case <-ctx.Done():
				// A Backend whose channel stays open and quiet after
				// ctx ended would otherwise keep this goroutine forever.
				return
			}
			if !open {
				return
			}
			tev := decode(ev)
			select {
			case out <- tev:
			case <-ctx.Done():
				return
			}
			if tev.Err != nil {
				return
			}
		}
	}()
	return out, nil
}

// drainWatch reads in, a backend watch whose ctx was cancelled, until the
// Backend closes it, for at most drain.Grace on the Store's clock. A
// Backend that breaks kv.Backend's promise to close it once ctx ends is
// left behind, loudly: its channel and whatever sends on it are the
// Backend's, and the caller's channel must still close.
func (s *Store[S, T]) drainWatch(in <-chan kv.Event) {
	if !drain.Within(in, s.clock, drain.Grace) {
		s.logger.Error("store: the backend did not close a watch channel after its context ended; leaving it (kv.Backend's Watch must close its channel once ctx ends)",
			slog.String("kind", s.kind), slog.Duration("waited", drain.Grace))
	}
}

// rejects reports whether ev is a write to an object of the kind whose
// name keep rejects (see WatchWithoutPrev).
func (s *Store[S, T]) rejects(ev kv.Event, keep func(string) bool) bool {
	if keep == nil || ev.Progress || ev.Err != nil || ev.Type != kv.EventPut {
		return false
	}
	name, ours := s.nameOf(ev.KV.Key)
	return ours && !keep(name)
}

// typedEvent decodes one backend event with the watch's scratch space
// (see metaDecoder). The state before a modification takes from the state
// after it the Spec or Status it has unchanged, when cp allows. A value that does not
// decode is reported in Undecodable (see Event).
// A change to a key outside the Store's key space (see nameOf) turns into a
// progress mark. Without withPrev, the event leaves the state before the change
// undecoded, as WatchWithoutPrev describes. The object of a write may take
// its Spec from a held object (see WatchUndecoded).
func (s *Store[S, T]) typedEvent(ev kv.Event, scratch *decodeScratch, cp copies, withPrev bool, held *heldObjects[S, T]) Event[S, T] {
	out := Event[S, T]{Revision: ev.Revision, Progress: ev.Progress, Err: ev.Err}
	if ev.Progress || ev.Err != nil {
		return out
	}
	name, ours := s.nameOf(ev.KV.Key)
	if !ours {
		out.Progress = true
		return out
	}
	switch ev.Type {
	case kv.EventPut:
		s.putEvent(&out, ev, name, scratch, cp, withPrev, held)
	case kv.EventDelete:
		s.deleteEvent(&out, ev, name, scratch, cp, withPrev)
	default:
		return Event[S, T]{Revision: ev.Revision, Err: fmt.Errorf("%w: watch event of unknown type %d at revision %d", ErrInvalid, ev.Type, ev.Revision)}
	}
	return out
}

// putEvent fills out for ev, a write: Added or Modified, with the state
// before it when withPrev, or Undecodable.
func (s *Store[S, T]) putEvent(out *Event[S, T], ev kv.Event, name string, scratch *decodeScratch, cp copies, withPrev bool, held *heldObjects[S, T]) {
	mem := rememberedOnce{key: ev.KV.Key}
	from, written := s.decodeWritten(ev.KV, ev.Prev.ModRevision, &mem, scratch, held)
	var err error
	if !written {
		from, err = s.decodeOver(ev, name, &mem, scratch, cp, held)
	}
	var prev *Object[S, T]
	if withPrev && ev.Prev.ModRevision != 0 {
		like := &from
		if err != nil {
			like = nil
		}
		prevFrom, _ := s.decodeLike(ev.Prev, scratch, like, cp)
		prev = prevFrom.obj
	}
	// Without withPrev, a write over a value is Modified whether or not
	// that value decoded; with it, a valid value over an undecodable one is
	// Added.
	modified := prev != nil || !withPrev && ev.Prev.ModRevision != 0
	switch {
	case err != nil:
		out.Undecodable, out.Prev = err.(*DecodeError), prev
	case modified:
		out.Type, out.Object, out.Prev = Modified, from.obj, prev
		s.rememberKept(ev.KV, &from, written, &scratch.kept)
	default: // a create, or a valid value over an undecodable one
		out.Type, out.Object = Added, from.obj
		s.rememberKept(ev.KV, &from, written, &scratch.kept)
	}
}

// remember remembers kv (see WithLastValues), a value read that decoded
// as from, decoded when it can: a write from it then need not read it
// again (a Loop's status write applies to the state its cache just
// delivered). Of a value decoded from the memory (written), which holds
// it decoded, it remembers the Backend's value alone (see lastValues.put).
func (s *Store[S, T]) remember(kv kv.KeyValue, from *decodedFrom[S, T], written bool) {
	s.rememberKept(kv, from, written, nil)
}

// rememberKept is remember for a watch, whose decoder keeps what it gave
// the memory lately (kept, see keptLists).
func (s *Store[S, T]) rememberKept(kv kv.KeyValue, from *decodedFrom[S, T], written bool, kept *keptLists) {
	switch {
	case s.last == nil:
	case !written && from.plain && s.ver == nil:
		raw := &rawObject{Meta: from.obj.Meta, Conditions: slices.Clone(from.obj.Conditions), Spec: from.spec, Status: from.status}
		kept.own(&raw.Meta) // the object's maps and slices are the caller's
		if from.headEnd > 0 {
			raw.head = headText(kv.Value[:from.headEnd])
		}
		s.last.readDecoded(kv, raw)
	default:
		s.last.read(kv)
	}
}

// deleteEvent fills out for ev, the deletion of the object called name:
// with the last state and the one before it when withPrev and it decodes,
// else with only the kind, name and deleting revision.
func (s *Store[S, T]) deleteEvent(out *Event[S, T], ev kv.Event, name string, scratch *decodeScratch, cp copies, withPrev bool) {
	s.last.forget(ev.KV.Key, ev.Revision)
	out.Type = Deleted
	out.Object = &Object[S, T]{Meta: Meta{Kind: s.kind, Name: name, Revision: ev.Revision}}
	if !withPrev {
		return
	}
	gone := ev.Prev
	gone.ModRevision = ev.Revision
	from, err := s.decodeLike(gone, scratch, nil, cp)
	if err != nil {
		return
	}
	out.Object = from.obj
	prevFrom, _ := s.decodeLike(ev.Prev, scratch, &from, cp)
	out.Prev = prevFrom.obj
}
