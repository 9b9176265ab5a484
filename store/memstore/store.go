package memstore

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// Store is an in-memory kv.Backend: a map of keys with one store-wide
// revision, a key-ordered index for List, and a bounded ring of the latest
// events for Watch and for pinned List pages.
//
// Every successful Txn advances the revision by one, starting from 1. Reads
// (Get, List) share a read lock; a Txn holds the write lock for a map update
// and a ring append, and never waits for a watcher: each watch has its own
// goroutine that copies its events out of the ring at its receiver's pace,
// and a watch whose receiver falls WithHistorySize writes behind ends with
// ErrExpired. Memory is the live keys, the ring (which holds on to the values
// of its events: in full, shared with the keys, up to WithHistoryBytes,
// and past that the older ones' old values as deltas against the key's
// next value, see history),
// at most 2×WithWatchBuffer events per watch, and the state of the past
// that the last pinned List page computed (which keys were written since
// its revision, at most the ring's), kept for the next page of its
// listing.
//
// A Store needs no Close: its only goroutines belong to watches, which end
// with their ctx. The zero value is not usable; call New. A Store is safe for
// concurrent use.
type Store struct {
	mu   sync.RWMutex
	kvs  keys // live keys; the same pointers as idx
	idx  index
	hist history
	// compacted is the revision passed to the last Compact: List pages
	// pinned below it are refused even where the ring could rebuild them.
	compacted int64
	// undo is the last pinned List page's state of the past (see takeUndo);
	// pins holds what settle keeps of the listings (see listPin). undoMu
	// guards both, as List holds mu only for reading.
	undoMu sync.Mutex
	undo   *undone
	pins   map[int64]listPin

	// waiting holds the watches that have read every change and wait for
	// the next one (see wait); waitMu orders the read-locked watches that
	// join it, and a write (holding mu) empties it.
	waitMu  sync.Mutex
	waiting []*watch

	// growHistory says the history's size is the default, which grows
	// with the keys (see WithHistorySize) and while a watch lags (see
	// lagGrow); keysWindow is the size the keys call for (at least
	// baseWindow), which the ring takes once they call for more than
	// DefaultHistorySize, and live the watches that have not ended,
	// registered only then.
	growHistory bool
	keysWindow  int
	live        map[*watch]struct{}
	growBudget  bool  // the history's budget is the default: it grows with a lagging watch's window
	lagCheck    int64 // the revision from which lagGrow looks again
	// rest is the default window's size at rest, which settle shrinks a
	// window grown for a lagging watch back to: DefaultHistorySize, or
	// keysWindow once the keys call for more. baseBudget is the budget
	// of values at rest; settleCheck the revision from which a write
	// calls settle again.
	rest        int
	baseBudget  int
	settleCheck int64
	settleOff   bool // tests compare with the window as it was, never shrunk
	// peak is the largest window lagGrow grew: a window settle shrank
	// grows back as far for a lagging watch, as a window never shrunk
	// holds that many events for it (the keys, which bound the growth,
	// may have fallen since).
	peak        int
	watchBuffer int
	count       counters

	// hooks carries the Store's follower (see Follow) for
	// internal/storeaccess.Of: store/cache reads a Store's watch in place.
	hooks
}

// hooks is an alias so that the embedded field is unexported: what it
// carries is for the project's own packages, not the API.
type hooks = storeaccess.Hooks

// keysPerHistoryEvent is how many keys the default history keeps one
// event for, at least: a watcher that falls out of the history relists,
// which costs a listing of every key, so the window grows with them,
// doubling from baseWindow. At 1M keys that is 160,000 events (at least
// 100,000), ~17 MB
// of ring and the values the history budget and deltas hold; the keys'
// own values are far more.
const keysPerHistoryEvent = 10

// baseWindow is the least window the keys call for (see keysWindow): the
// default window takes it once the Store holds more keys than
// keysPerHistoryEvent times DefaultHistorySize, and doubles from it as the
// keys grow; below that, the window at rest is DefaultHistorySize, which a
// lagging watch grows as far (see lagGrow). It is also the window
// DefaultHistoryBytes is sized for: the default budget grows with a
// lagging watch's window only past it.
const baseWindow = 10_000

// maxLagHistory is how many times the window the keys call for the default
// window may grow to, at most, while a live watch lags (see lagGrow).
const maxLagHistory = 8

var _ kv.Backend = (*Store)(nil)

// New returns an empty Store at revision 0.
func New(opts ...Option) *Store {
	c := config{historySize: DefaultHistorySize, historyBytes: DefaultHistoryBytes, watchBuffer: DefaultWatchBuffer}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	h := newHistory(c.historySize, c.historyBytes)
	keysWindow := c.historySize
	if !c.historySet {
		keysWindow = max(keysWindow, baseWindow)
	}
	if c.agingLag > 0 {
		h.agingLag = c.agingLag
	}
	s := &Store{
		hist:        h,
		growHistory: !c.historySet,
		keysWindow:  keysWindow,
		growBudget:  !c.bytesSet,
		live:        make(map[*watch]struct{}),
		rest:        c.historySize,
		baseBudget:  c.historyBytes,
		settleOff:   c.settleOff,
		watchBuffer: c.watchBuffer,
	}
	s.hooks = storeaccess.NewHooks(follower{s})
	return s
}

// Revision returns the current store revision: that of the last write, or 0
// before the first.
func (s *Store) Revision() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.hist.last
}

// Get returns the current value of key, or an error wrapping
// store.ErrNotFound. The returned Value must not be modified.
func (s *Store) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	return s.getIn(ctx, "", key)
}

// GetIn is Get of the key prefix+name, which it looks up without
// building it on the heap (see keys.getIn), for a store.Store through
// internal/storeaccess (a PartsGetter): a key passed to Get through
// kv.Backend escapes, and each of a Store's reads allocated it. The
// KeyValue's Key is the entry's own string.
func (f follower) GetIn(ctx context.Context, prefix, name string) (kv.KeyValue, error) {
	return f.s.getIn(ctx, prefix, name)
}

// getIn is Get of the key prefix+name (Get's key is the name alone).
func (s *Store) getIn(ctx context.Context, prefix, name string) (kv.KeyValue, error) {
	s.count.gets.Add(1)
	if err := ctx.Err(); err != nil || prefix == "" && name == "" {
		return kv.KeyValue{}, getRefused(err)
	}
	s.mu.RLock()
	e := s.kvs.getIn(prefix, name)
	var kvp kv.KeyValue
	if e != nil {
		kvp = *e
	}
	s.mu.RUnlock()
	if e == nil {
		return kv.KeyValue{}, notFound("get", prefix+name)
	}
	return kvp, nil
}

// The errors of Get and Txn are built out of line (go:noinline), so that
// the code of the calls that succeed, run for every event, is what fills
// the instruction cache: formatting an error inline made Get 1 KB and
// Txn 2.5 KB of code, most of it never run, their hot paths spread over
// it (cachegrind: ~15 and ~25 I1 misses per call).

// getRefused is Get's error for a ctx that ended (err) or, err nil, an
// empty key.
//
//go:noinline
func getRefused(err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("memstore: get of an empty key: %w", store.ErrInvalid)
}

// notFound is the error of op (get, delete) of key, which does not exist.
//
//go:noinline
func notFound(op, key string) error {
	return fmt.Errorf("memstore: %s %q: %w", op, key, store.ErrNotFound)
}

// invalidTxn is Txn's error for a txn kv.CheckTxn refused with err.
//
//go:noinline
func invalidTxn(err error) error { return fmt.Errorf("memstore: %w", err) }

// condFailed is Txn's error for its cond i, c, whose revision is actual.
//
//go:noinline
func condFailed(i int, c *kv.Cond, actual int64) error {
	return &kv.CondFailedError{Index: i, Cond: *c, Actual: actual}
}

// Txn applies w if every cond holds, as kv.Backend describes, and returns
// the new revision. It copies w.Value, so the caller may reuse it, unless
// w.Owned hands it over: then it keeps w.Value itself.
func (s *Store) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	s.count.txns.Add(1)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := kv.CheckTxn(conds, w); err != nil {
		return 0, invalidTxn(err)
	}
	var val []byte
	if w.Kind == kv.WritePut {
		val = w.Value
		if !w.Owned {
			val = bytes.Clone(w.Value)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// A write's first cond is on its own key (a store.Writer's always):
	// that entry is looked up once.
	e := s.kvs.getKept(w.Key)
	for i := range conds {
		c := &conds[i]
		ce := e
		if c.Key != w.Key {
			ce = s.kvs.get(c.Key)
		}
		if actual := condValue(ce, c); actual != c.Revision {
			return 0, condFailed(i, c, actual)
		}
	}
	rev := s.hist.last + 1
	if w.Kind == kv.WriteDelete {
		if e == nil {
			return 0, notFound("delete", w.Key)
		}
		s.delete(e)
	} else {
		prev := e // the key's state before, read by hist.add before it changes
		if e == nil {
			e = s.create(w.Key, rev)
		}
		if s.lagDue() {
			s.lagGrow()
		}
		s.hist.add(e.Key, false, val, e.CreateRevision, prev)
		e.Value, e.ModRevision = val, rev
	}
	if s.hist.size > s.rest && s.hist.last >= s.settleCheck {
		s.settle()
	}
	s.notify()
	return rev, nil
}

// create adds the entry of key, created at revision rev, for Txn, out of
// line: most writes update a key that exists. Callers hold s.mu for
// writing.
//
//go:noinline
func (s *Store) create(key string, rev int64) *kv.KeyValue {
	e := newEntry(key, rev)
	s.kvs.add(e)
	s.idx.insert(e)
	s.keysGrow()
	s.lagCheck = 0 // one more key: lagGrow may grow the window further
	return e
}

// delete removes the live key of e, and records its deletion, for Txn,
// out of line. Callers hold s.mu for writing.
//
//go:noinline
func (s *Store) delete(e *kv.KeyValue) {
	s.kvs.remove(e.Key)
	s.idx.remove(e.Key)
	if s.lagDue() {
		s.lagGrow()
	}
	s.hist.add(e.Key, true, nil, 0, e)
	// The strings cut from the key keep the entry alive (newEntry):
	// not its last value too, which the history keeps as it sees fit.
	e.Value = nil
}

// keysGrow grows the default window with the keys, after a create: once
// they call for more than DefaultHistorySize, the ring takes the window
// they call for (at least baseWindow), which doubles once they call for
// more. The default budget of values grows in proportion past baseWindow
// (growBudget), as lagGrow's does: at 1M keys the window is 160,000
// writes, and with the budget left at DefaultHistoryBytes (sized for
// baseWindow) every write once ~13,000 had filled it aged an old value,
// a delta encoding that was a fifth of a controller's CPU per event at
// 1M objects and none at 100,000 (whose 10,000-write window fits the
// budget): its cost per event rose with the keys. Callers hold s.mu for
// writing.
func (s *Store) keysGrow() {
	want := s.kvs.n / keysPerHistoryEvent
	if !s.growHistory || want <= DefaultHistorySize {
		return
	}
	if want > s.keysWindow {
		s.keysWindow = max(want, 2*s.keysWindow)
	}
	s.rest = s.keysWindow
	if s.keysWindow > s.hist.size {
		s.growTo(s.keysWindow)
	}
}

// condValue returns the revision c compares against, e being the entry
// of c.Key (nil for none). Callers hold s.mu.
func condValue(e *kv.KeyValue, c *kv.Cond) int64 {
	switch {
	case e == nil:
		return 0
	case c.Target == kv.CreateRevision:
		return e.CreateRevision
	default:
		return e.ModRevision
	}
}

// Compact discards the history before rev: afterwards a List pinned to a
// revision below rev, or a Watch from a revision below rev-1, fails with
// ErrExpired, including a running watch that has not yet read that far.
// Compacting to a revision already compacted is a no-op; one above the
// current revision is an error wrapping store.ErrInvalid. It implements
// storetest.Compactor, and lets tests force ErrExpired.
func (s *Store) Compact(ctx context.Context, rev int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if rev < 0 || rev > s.hist.last {
		return fmt.Errorf("memstore: compact to %d: store is at %d: %w", rev, s.hist.last, store.ErrInvalid)
	}
	if rev <= s.compacted {
		return nil
	}
	s.compacted = rev
	s.hist.dropBefore(rev)
	s.notify()
	return nil
}

// lagGrow doubles the default history, full and about to evict its
// oldest event, while a live watch has more than seven eighths of it yet
// to read: a watch that merely lags keeps its backlog rather than expire,
// and the memory is spent only once a watch lagged that far (settle
// shrinks the ring back as the watches catch up). It grows up to as many
// events as the Store holds keys, and no more than maxLagHistory times
// the window the keys call for (or as far as it grew before, the keys
// since fallen): a watch further behind relists, a listing of every key
// that decodes only those changed, which costs less than replaying the
// backlog, a decode an event. The default budget of values grows in
// proportion past baseWindow (growBudget): else each write, ageing the
// grown ring, encodes a delta, which cost more than the relists the
// window saved. It looks every sixteenth of the
// ring's writes once it is full (lagCheck), so that a watch cannot cross
// the last eighth unseen. A window settle shrank grows as well, as far
// as it ever grew, for a listing with pages left (see listPin): a Cache
// whose watch expired relists in pages, then watches from its listing's
// revision, and the window it had grown kept the writes meanwhile.
// Callers hold s.mu for writing, before hist.add, and call it only when
// lagDue.
func (s *Store) lagGrow() {
	h := &s.hist
	size := int64(h.size)
	// The next look is a sixteenth of the ring's writes on, also when
	// this one finds nothing it may grow the window for: else, with no
	// watch live or the window as large as the keys allow, every write
	// called it. What could call for a look sooner resets lagCheck: a
	// create (the keys allow more, see create) and a new watch (see
	// newWatch). A listing pins its first page's revision, the newest.
	s.lagCheck = h.last + max(size/16, 1)
	most := max(min(s.kvs.n, maxLagHistory*s.keysWindow), s.peak)
	// pins changes only under s.mu for reading (List), or for writing.
	if !s.growHistory || len(s.live) == 0 && len(s.pins) == 0 || h.size >= most {
		return
	}
	for w := range s.live {
		if h.covers(w.cursor) && w.cursor < h.first+size/8 {
			s.growTo(min(2*h.size, most))
			return
		}
	}
	if h.size < s.peak && s.pinnedBefore(h.first+size/8) {
		s.growTo(min(2*h.size, s.peak))
	}
}

// lagDue is lagGrow's first look, inlined at its calls: false when the
// ring is not yet full or lagCheck not yet reached, where lagGrow would
// return at once (nearly every write: it looks every sixteenth of the
// ring's writes once full), without a call into its 800 bytes of code.
func (s *Store) lagDue() bool {
	h := &s.hist
	return h.last >= s.lagCheck && h.last-h.first+1 >= int64(h.size)
}

// growTo grows the history to n events, and its default budget in
// proportion past baseWindow. Callers hold s.mu for writing.
func (s *Store) growTo(n int) {
	h := &s.hist
	if s.growBudget {
		h.budget = int(int64(h.budget) * int64(max(n, baseWindow)) / int64(max(h.size, baseWindow)))
	}
	h.grow(n)
	s.peak = max(s.peak, n)
}

// notify wakes the watches waiting for a change, and empties the waiting
// list. Callers hold s.mu for writing.
func (s *Store) notify() {
	for i, w := range s.waiting {
		w.waiting = false
		select {
		case w.wake <- struct{}{}:
		default: // a wake-up is pending already
		}
		s.waiting[i] = nil
	}
	s.waiting = s.waiting[:0]
}

// wait puts w on the waiting list, unless it is there already, and returns
// its wake channel, which receives a value after the next change. Callers
// hold s.mu for reading, so no change can slip in between their read and
// the registration. A value may also be left over from a change w has since
// read: waking for it costs w one more read, never a lost change.
func (s *Store) wait(w *watch) <-chan struct{} {
	s.waitMu.Lock()
	if !w.waiting {
		w.waiting = true
		s.waiting = append(s.waiting, w)
	}
	s.waitMu.Unlock()
	return w.wake
}

// unwait takes w, whose watch has ended, off the waiting list.
func (s *Store) unwait(w *watch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, w)
	if !w.waiting {
		return
	}
	w.waiting = false
	i := slices.Index(s.waiting, w)
	last := len(s.waiting) - 1
	s.waiting[i], s.waiting[last] = s.waiting[last], nil
	s.waiting = s.waiting[:last]
}
