package cache

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"github.com/steady-go/steady/internal/kvwatch"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/steady-go/steady/internal/nilness"
	"github.com/steady-go/steady/internal/objmarks"
	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// ListWatcher is what a Cache reads from. *Store[S, T] implements it; tests
// and fault injectors wrap one.
type ListWatcher[S, T any] interface {
	// List returns one page of objects; see Store.List.
	List(ctx context.Context, opts store.ListOptions) (*store.List[S, T], error)
	// Watch streams the changes after fromRevision; see Store.Watch. 0 is
	// no special case: the Cache watches from the Revision of its listing,
	// 0 for an empty store, and misses a write if a Watch from 0 starts
	// from now. The Cache never reads Event.Prev: its handlers get the object it held
	// for the key. The channel must be closed once ctx ends; the Cache
	// stops reading it then, drains it for up to 5 seconds while it waits
	// for the close, and leaves it after that with an error in its log.
	Watch(ctx context.Context, fromRevision int64) (<-chan store.Event[S, T], error)
}

// leanSource is what a Cache calls instead of List and Watch when its
// ListWatcher is a *store.Store itself: a listing that reuses the objects
// the Cache holds at their stored revision instead of decoding them again
// (the Store's ListReusing), so a relist after the watch fell behind decodes only
// what changed, and a watch that does not decode previous states
// (its WatchWithoutPrev), which the Cache never reads. A wrapper of a
// Store is not one, even if it embeds the Store: its List and Watch are
// what it means the Cache to see, and the Cache calls them. A Store offers
// them only to the project's packages, through internal/storeaccess.
type leanSource[S, T any] interface {
	ListReusing(ctx context.Context, opts store.ListOptions, reuse func(name string, revision int64) *store.Object[S, T], shared bool) (*store.List[S, T], error)
	WatchWithoutPrev(ctx context.Context, fromRevision int64, keep func(name string) bool) (<-chan store.Event[S, T], error)
}

// undecodedSource is the part of a Store's lean view that hands the Cache
// its backend's watch undecoded, with the decoder to type each event on
// Run's goroutine (the Store's WatchUndecoded); a test's wrapper of the
// lean view need not have it, and is then watched with WatchWithoutPrev.
type undecodedSource[S, T any] interface {
	WatchUndecoded(ctx context.Context, fromRevision int64, keep func(name string) bool, held func(name string, revision int64) *store.Object[S, T]) (<-chan kv.Event, func(kv.Event) store.Event[S, T], error)
}

// followSource is the part of a Store's lean view that hands the Cache a
// watch to read in place, on Run's goroutine, when its backend offers one
// (the Store's FollowUndecoded): a write then wakes Run's goroutine itself
// rather than a goroutine of the watch's that wakes it.
type followSource[S, T any] interface {
	FollowUndecoded(fromRevision int64, keep func(name string) bool, held func(name string, revision int64) *store.Object[S, T]) (*kvwatch.Cursor, func(), func(kv.Event) store.Event[S, T], bool, error)
}

// Cache is an informer: an in-memory copy of one kind's objects, kept
// current by listing and then watching its ListWatcher, with indexes and
// change handlers. Reconcilers read from a Cache and write through the
// Store.
//
// Run fills and follows it: it lists (in pages), then watches from the
// listing's revision. When the watch ends, whether with ErrExpired (history
// gone, or the cache fell behind) or for any other reason, Run relists after
// a backoff delay, compares the new listing with what the cache holds, and
// reports every difference to the handlers as a synthetic Added, Modified or
// Deleted change, so nothing that happened while the cache was blind is
// lost. An object deleted and recreated while blind (a new UID) is reported
// as a deletion and an addition. That listing is applied page by page as it
// is read (WithPageSize), each page's deletions first, so that the relist
// holds no second copy of the kind; the Cache's Revision stays where the
// watch left it until the listing ends. While the watch runs, Run also relists
// every relist period (WithRelistPeriod, DefaultRelistPeriod, jittered) and
// repairs the same way what a watch lost without ending, counting each
// difference in DriftRepairs. The Loop's resync re-queues keys from
// the Cache (use Keys or Range); the relist is what makes the Cache right.
//
// Objects served by Get, List and ByIndex and passed to handlers are shared,
// read-only values: a caller that wants to change one copies it first.
// Successive objects of one name, and objects of different names, may share
// memory (see the package doc). A
// mutation detector catches callers that do not. It is off unless turned
// on, with WithMutationDetector or MutationDetectorEnv (which a test's
// TestMain can set); a test binary alone does not turn it on.
//
// Before Run has completed its first listing the Cache is empty, Revision is
// 0 and HasSynced is false. After ctx ends, Run returns and the Cache keeps
// serving its last contents. All methods are safe for concurrent use; Run
// may be called only once.
type Cache[S, T any] struct {
	src     ListWatcher[S, T]
	cfg     config
	initErr error // a bad argument to New, returned by Run
	// lean is src when src is a *store.Store, else nil (see leanSource);
	// reuse is c.reused, made once.
	lean  leanSource[S, T]
	reuse func(name string, revision int64) *store.Object[S, T]
	// last is the item reused last looked up or apply last set, so that
	// an event's next looks at its name (decoding a status write looks
	// twice; apply once more) take no lookup in items. Only Run's
	// goroutine reads or writes it (see reused), and every change of
	// items keeps it true: apply sets it, putListedLocked and
	// removeDeletedLocked clear it.
	last heldItem[S, T]

	mu    sync.RWMutex
	items map[string]*store.Object[S, T]
	// quarantine holds, by name, the keys whose current value does not
	// decode; items may still hold the last valid object of one.
	quarantine map[string]*store.DecodeError
	rev        int64
	listRev    int64 // revision of the last listing; older events are stale
	indexes    map[string]*index[S, T]
	ixList     []*index[S, T] // indexes' values, for reindexLocked to walk
	waiters    revWaiters     // WaitFor calls, by revision; woken as told reaches theirs
	detect     *mutationDetector[S, T]
	transform  func(*store.Object[S, T]) // see WithTransform; nil for none
	// loud holds the marks (internal/objmarks) of the held objects whose
	// marks are not quiet, by name, once a Loop asked for them (KeepMarks;
	// nil before); loudPeak is its largest length since it was last made
	// anew, and counts.Loud its length, which Marks reads without c.mu.
	loud     map[string]objmarks.Marks
	loudPeak int
	// turns records the objects that turned fresh or stopped being fresh,
	// for WasFresh, once KeepMarks was called; counts.Turns counts them.
	turns  freshTurns
	counts objmarks.Counts

	// dispatch serializes applying a change with calling the handlers on
	// it, so a handler added concurrently sees each object's changes in
	// order, exactly once.
	dispatch sync.Mutex
	handlers []func(old, new *store.Object[S, T])

	lists        int64        // listings applied, the first included
	driftRepairs int64        // differences found by periodic relists
	panics       atomic.Int64 // see Panics
	// toldRev is the revision whose changes every handler has been told of:
	// WaitFor waits for it, not for rev, so what a handler does with
	// a change (a Loop's hint) happens before a WaitFor of its revision
	// returns. nwait is len(waiters), for tellWaiters to read without c.mu.
	toldRev atomic.Int64
	nwait   atomic.Int64
	listing atomic.Bool // see Listing; written under dispatch

	running  atomic.Bool
	refilter refilterState // see Refilter
	prune    refilterState // see Prune
	// nudge (buffered, 1) wakes Run's goroutine between watch events for
	// what is not an event: a Refilter or Prune call, or the end of Run's
	// context (see serve). One channel for all three, so that the wait for
	// the next event, one per event on a quiet watch, selects on three
	// channels (the watch's, this and the relist timer's), not five.
	nudge chan struct{}
	// poke, while Run's goroutine follows a watch it can poke (see
	// followInPlace), fills that watch's wake after each nudge, so that
	// the wait for the next event receives on one channel, not two.
	poke    atomic.Pointer[func()]
	lastErr atomic.Pointer[error] // the last list or watch error, for LastError
	synced  chan struct{}
	stopped chan struct{} // closed when a Run that ran returns
	// warnedIdle: WaitForSync logged that Run has not been called.
	warnedIdle atomic.Bool

	// hooks carries the Cache's internalView for internal/storeaccess.Of.
	hooks
}

// hooks is an alias so that the embedded field is unexported: what it
// carries is for the project's own packages (reconcile), not the API.
type hooks = storeaccess.Hooks

// internalView is what a Cache offers the project's own packages and not
// its users: the marks of its objects for a reconcile Loop (it is an
// objmarks.Reader). A Cache carries it in its hooks (storeaccess.Of(c)
// returns it).
//
// The Cache works an object's marks out when it stores the object and
// keeps only the loud ones, by name: most objects are quiet (not paused,
// not observe-only, no Reconciling=True), so that the Loop's check before
// each reconcile reads two counters (objmarks.Counts) while none is loud,
// and otherwise a map of the few loud objects, instead of each object's
// metadata and conditions, which at 100k objects are cache misses
// (BenchmarkLoopNoopResync100k). Whether an object was new before a
// reconcile, which the Loop asks only after one that failed, comes from a
// bounded record of the objects that turned new or stopped being new
// (freshTurns), not from a read of the object before each reconcile. A
// Cache no Loop reads keeps none.
type internalView[S, T any] Cache[S, T]

// KeepMarks makes the Cache keep the marks of what it holds from now on,
// starting with the objects it holds.
func (v *internalView[S, T]) KeepMarks() {
	c := (*Cache[S, T])(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loud != nil {
		return
	}
	c.loud = map[string]objmarks.Marks{}
	c.turns.ring = make([]freshTurn, turnsKept)
	for name, obj := range c.items {
		c.markLocked(name, obj, obj)
	}
}

// Marks returns the marks of the object held under name and true when
// they are loud; zero and false when they are quiet, when the Cache holds
// no such object, and before KeepMarks. at stamps the read for WasFresh:
// it is the number of turns recorded. While no object is loud, Marks
// reads the two counters alone, with no lock and no lookup of name: a
// Loop calls it before every reconcile.
func (v *internalView[S, T]) Marks(name string) (m objmarks.Marks, loud bool, at uint64) {
	c := (*Cache[S, T])(v)
	at, quiet := c.counts.Quiet()
	if !quiet {
		c.mu.RLock()
		m, loud = c.loud[name]
		c.mu.RUnlock()
	}
	return m, loud, at
}

// Counts returns the counters Marks reads.
func (v *internalView[S, T]) Counts() *objmarks.Counts { return &v.counts }

// WasFresh reports whether the object held under name at stamp at (a
// Marks' at) was fresh (objmarks.Marks.Fresh; no object held is not):
// the earliest turn of name recorded after at says what it was before,
// and with none, the object held now says. When more than turnsKept turns
// came after at, those lost may have been name's: it then answers about
// the object held now (see objmarks.Reader).
func (v *internalView[S, T]) WasFresh(name string, at uint64) bool {
	c := (*Cache[S, T])(v)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if was, ok := c.turns.since(name, at, c.counts.Turns.Load()); ok {
		return was
	}
	return fresh(c.items[name])
}

// fresh reports whether obj is a new object: held (not nil) and Fresh.
func fresh[S, T any](obj *store.Object[S, T]) bool {
	return obj != nil && objmarks.Of(&obj.Meta, obj.Conditions).Fresh()
}

// turnsKept is how many turns a Cache's freshTurns keeps: a reconcile
// judged after more turns than that (a creation burst of this many
// objects while it ran) judges its object as it is then.
const turnsKept = 1024

// freshTurns is a bounded record of turns: the objects held under a name
// that turned fresh (objmarks.Marks.Fresh), or stopped being fresh, by a
// change the Cache applied (no object held is not fresh, so creating a
// new object and deleting one are turns). It is written under c.mu, and
// the Cache's counts.Turns counts the turns recorded: turn i is
// ring[i%turnsKept] while i >= counts.Turns-turnsKept.
type freshTurns struct {
	ring []freshTurn // nil before KeepMarks
}

type freshTurn struct {
	name string
	was  bool // the object held under name was fresh before the turn
}

// addTurnLocked records that the object held under name turned, from fresh
// when was. The caller holds c.mu.
func (c *Cache[S, T]) addTurnLocked(name string, was bool) {
	n := c.counts.Turns.Load()
	c.turns.ring[n%turnsKept] = freshTurn{name, was}
	c.counts.Turns.Store(n + 1) // after the turn is in ring: Marks' at never counts an unrecorded turn
}

// since returns what the earliest turn of name after stamp at, of the n
// recorded, says the object was before it, and true; false when no turn
// of name came after at, or when the record lost some that came after it.
// The caller holds c.mu.
func (f *freshTurns) since(name string, at, n uint64) (was, ok bool) {
	if n-at > turnsKept {
		return false, false
	}
	for i := at; i < n; i++ {
		if t := &f.ring[i%turnsKept]; t.name == name {
			return t.was, true
		}
	}
	return false, false
}

// markLocked keeps the marks of new, now held under name in place of old
// (nil: none is, none was), once KeepMarks was called, and records a turn
// of freshness. A loud map that shrank to a quarter of its peak
// (a rollout whose Reconciling=True were all turned off) is made anew, so
// that lookups in it stay in a few cache lines.
func (c *Cache[S, T]) markLocked(name string, old, new *store.Object[S, T]) {
	if c.loud == nil {
		return
	}
	var m objmarks.Marks
	if new != nil {
		m = objmarks.Of(&new.Meta, new.Conditions)
	}
	if was := fresh(old); was != (new != nil && m.Fresh()) {
		c.addTurnLocked(name, was)
	}
	if new != nil && !m.Quiet() {
		c.loud[name] = m
		c.loudPeak = max(c.loudPeak, len(c.loud))
		c.counts.Loud.Store(int64(len(c.loud)))
		return
	}
	if len(c.loud) == 0 { // no object loud, the usual case: no lookup
		return
	}
	if _, ok := c.loud[name]; !ok {
		return
	}
	delete(c.loud, name)
	if len(c.loud) < c.loudPeak/4 {
		c.loud = maps.Collect(maps.All(c.loud))
		c.loudPeak = len(c.loud)
	}
	c.counts.Loud.Store(int64(len(c.loud)))
}

// ErrRunning is returned by a second call of Cache.Run.
var ErrRunning = errors.New("cache: already running")

// New returns an empty Cache over src; call Run to fill it. A nil src (or
// a typed nil, such as a nil *store.Store) or a bad option (a negative page
// size, an invalid backoff policy, a typed nil clock) is reported by Run,
// which then returns an error wrapping ErrInvalid at once.
//
// Every Cache has the IndexOwnerUID index; AddIndex adds more.
func New[S, T any](src ListWatcher[S, T], opts ...Option) *Cache[S, T] {
	cfg, err := newConfig(opts)
	if nilness.IsNil(src) {
		src = nil // so that Kind, Version and Source see no ListWatcher, not a typed nil
		if err == nil {
			err = fmt.Errorf("%w: the cache needs a ListWatcher, got nil", store.ErrInvalid)
		}
	}
	transform, terr := transformFor[S, T](cfg.transform)
	if err == nil {
		err = terr
	}
	c := &Cache[S, T]{
		src:        src,
		cfg:        cfg,
		initErr:    err,
		items:      make(map[string]*store.Object[S, T]),
		quarantine: make(map[string]*store.DecodeError),
		indexes:    map[string]*index[S, T]{},
		synced:     make(chan struct{}),
		stopped:    make(chan struct{}),
		transform:  transform,
	}
	if cfg.report != nil {
		c.detect = newMutationDetector[S, T]()
	}
	if st, ok := src.(*store.Store[S, T]); ok && st != nil {
		c.lean, _ = storeaccess.Of(st).(leanSource[S, T])
	}
	owners := newIndex(ownerUIDs[S, T])
	owners.name, owners.owners = IndexOwnerUID, true
	c.indexes[IndexOwnerUID], c.ixList = owners, []*index[S, T]{owners}
	c.reuse = c.reused
	c.hooks = storeaccess.NewHooks((*internalView[S, T])(c))
	c.nudge = make(chan struct{}, 1)
	c.refilter.init(c.nudgeRun)
	c.prune.init(c.nudgeRun)
	return c
}

// reused returns the object the Cache holds for name if it is at revision,
// for a listing to use instead of decoding the stored value again; nil
// otherwise. Only Run's goroutine lists, and only it changes c.items (apply
// and replace), so it reads c.items without c.mu: a relist of n objects
// takes no lock n times.
func (c *Cache[S, T]) reused(name string, revision int64) *store.Object[S, T] {
	obj := c.item(name)
	if obj != nil && obj.Meta.Revision == revision {
		return obj
	}
	return nil
}

// heldItem is an item of Cache.items, obj nil for a name it does not
// hold; set is false for none (see Cache.last).
type heldItem[S, T any] struct {
	name string
	obj  *store.Object[S, T]
	set  bool
}

// item returns the object items holds under name, nil for none, from
// c.last when it is name's; else it looks it up, and remembers it in
// c.last. Only Run's goroutine calls it: it reads items without c.mu.
func (c *Cache[S, T]) item(name string) *store.Object[S, T] {
	if c.last.set && c.last.name == name {
		return c.last.obj
	}
	obj := c.items[name]
	c.last = heldItem[S, T]{name: name, obj: obj, set: true}
	return obj
}

// Get returns the cached object with this name. The object is shared and
// must not be modified. It does not allocate.
func (c *Cache[S, T]) Get(name string) (*store.Object[S, T], bool) {
	c.mu.RLock()
	obj, ok := c.items[name]
	c.mu.RUnlock()
	return obj, ok
}

// List returns the cached objects whose labels sel matches (nil matches
// all), in name order (empty when none match). The objects are shared and must
// not be modified.
func (c *Cache[S, T]) List(sel store.Selector) []*store.Object[S, T] {
	c.mu.RLock()
	var out []*store.Object[S, T]
	if sel == nil {
		out = make([]*store.Object[S, T], 0, len(c.items))
	}
	for _, obj := range c.items {
		if sel == nil || sel.Matches(obj.Meta.Labels) {
			out = append(out, obj)
		}
	}
	c.mu.RUnlock()
	sortByName(out)
	return out
}

// Len returns the number of cached objects.
func (c *Cache[S, T]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.items)
}

// Keys returns the names of the cached objects, in name order.
func (c *Cache[S, T]) Keys() []string {
	c.mu.RLock()
	out := make([]string, 0, len(c.items))
	for name := range c.items {
		out = append(out, name)
	}
	c.mu.RUnlock()
	slices.Sort(out)
	return out
}

// Range calls f with the name of every cached object, in name order, until
// f returns false. It iterates over a snapshot of the names taken when it
// starts, so f may call any method of the Cache.
func (c *Cache[S, T]) Range(f func(name string) bool) {
	for _, name := range c.Keys() {
		if !f(name) {
			return
		}
	}
}

// Source returns the ListWatcher the Cache lists and watches (New's src):
// for a Cache over a typed Store, that Store, whose Backend says which
// backend's revisions Revision counts.
func (c *Cache[S, T]) Source() ListWatcher[S, T] { return c.src }

// Revision returns the store revision the Cache reflects: every change up
// to it has been applied. It is 0 before the first listing completes.
func (c *Cache[S, T]) Revision() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rev
}

// HasSynced reports whether the first listing has been applied and every
// handler added before it has been called on it.
func (c *Cache[S, T]) HasSynced() bool {
	select {
	case <-c.synced:
		return true
	default:
		return false
	}
}

// WaitForSync blocks until the first listing has been applied and handed to
// the handlers added before it (then it returns nil), Run returned without
// syncing (an error wrapping ErrNotRunning, at once), or ctx ends (an error
// wrapping ctx's error that says why the Cache has not synced: its last
// list or watch error, or, wrapping ErrNotRunning too, that Run has not been
// called, which the first such call also logs at Warn). It returns New's error at once for a
// Cache given bad arguments.
func (c *Cache[S, T]) WaitForSync(ctx context.Context) error {
	if c.initErr != nil {
		return c.initErr
	}
	select {
	case <-c.synced:
		return nil
	case <-c.stopped:
		if c.HasSynced() {
			return nil
		}
		return fmt.Errorf("cache %q: %w: Run returned before the first listing", c.Kind(), ErrNotRunning)
	case <-ctx.Done():
		return c.notSynced(ctx)
	}
}

// notSynced is WaitForSync's error for a ctx that ended first. A Cache
// nobody runs (client-go's forgotten informer Start) would otherwise fail
// with a bare "context deadline exceeded", so it says so, loudly.
func (c *Cache[S, T]) notSynced(ctx context.Context) error {
	if !c.running.Load() {
		err := fmt.Errorf("cache %q: %w before the first listing: %w: Run has not been called", c.Kind(), ctx.Err(), ErrNotRunning)
		if !c.warnedIdle.Swap(true) { // once: a probe polling with a short deadline must not flood the log
			c.cfg.panicLog.LogAttrs(ctx, slog.LevelWarn, "cache: WaitForSync gave up on a Cache whose Run has not been called",
				slog.String("kind", c.Kind()), slog.Any("error", err))
		}
		return err
	}
	if last := c.LastError(); last != nil {
		return fmt.Errorf("cache %q: %w before the first listing; last list or watch error: %w", c.Kind(), ctx.Err(), last)
	}
	return fmt.Errorf("cache %q: %w before the first listing", c.Kind(), ctx.Err())
}

// WaitFor blocks until the Cache reflects at least revision, for
// read-your-writes: after a write returned revision r, WaitFor(ctx, r)
// returns once Get shows that write or a later state, and once the handlers
// have been told of every change up to it (so a Loop's hint of the change
// is queued before the Loop's worker that waited goes on, whatever the
// goroutines' timing). Progress notifications count, so it returns even
// when r was a write to another kind. It returns nil at once for a
// revision of 0 or below, and ctx's error if ctx ends first.
func (c *Cache[S, T]) WaitFor(ctx context.Context, revision int64) error {
	if c.toldRev.Load() >= revision {
		return nil
	}
	c.mu.Lock()
	w := &revWaiter{rev: revision, ch: make(chan struct{})}
	heap.Push(&c.waiters, w)
	// Counted, then told read again, as tellWaiters stores toldRev, then
	// reads the count: one of the two sees the other's store.
	c.nwait.Store(int64(len(c.waiters)))
	if c.toldRev.Load() >= revision {
		heap.Remove(&c.waiters, w.i)
		c.nwait.Store(int64(len(c.waiters)))
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		if w.i < 0 { // woken meanwhile
			return nil
		}
		heap.Remove(&c.waiters, w.i)
		c.nwait.Store(int64(len(c.waiters)))
		return ctx.Err()
	}
}

// setRevisionLocked advances the revision that Get and Revision show. The
// WaitFor calls it reaches wake in tellWaiters, once the handlers have
// been told.
func (c *Cache[S, T]) setRevisionLocked(rev int64) {
	c.rev = max(c.rev, rev)
}

// tellWaiters records that the handlers have been told of every change up
// to the Cache's revision and wakes the WaitFor calls it reaches, and only
// those:
// a Cache that runs behind a Loop's writes has a waiter per key, and each
// revision wakes the few it concerns. The caller holds c.dispatch, under
// which every change of c.rev is made, and not c.mu. It takes c.mu only
// when a WaitFor waits.
func (c *Cache[S, T]) tellWaiters() {
	rev := c.rev
	if rev <= c.toldRev.Load() {
		return
	}
	c.toldRev.Store(rev)
	if c.nwait.Load() == 0 {
		return
	}
	c.mu.Lock()
	for len(c.waiters) > 0 && c.waiters[0].rev <= rev {
		close(heap.Pop(&c.waiters).(*revWaiter).ch)
	}
	c.nwait.Store(int64(len(c.waiters)))
	c.mu.Unlock()
}

// revWaiter is one WaitFor call: ch is closed once the Cache holds rev.
// i is its place in revWaiters, -1 once it has left.
type revWaiter struct {
	rev int64
	ch  chan struct{}
	i   int
}

// revWaiters is a min-heap of waiters by revision (container/heap).
type revWaiters []*revWaiter

func (h revWaiters) Len() int           { return len(h) }
func (h revWaiters) Less(i, j int) bool { return h[i].rev < h[j].rev }
func (h revWaiters) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].i, h[j].i = i, j
}

func (h *revWaiters) Push(x any) {
	w := x.(*revWaiter)
	w.i = len(*h)
	*h = append(*h, w)
}

func (h *revWaiters) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	w.i = -1
	return w
}

func sortByName[S, T any](objs []*store.Object[S, T]) {
	slices.SortFunc(objs, func(a, b *store.Object[S, T]) int { return strings.Compare(a.Meta.Name, b.Meta.Name) })
}

// Relists counts the listings after the first: after a watch ended, and
// the periodic ones (WithRelistPeriod). The Prometheus adapter and the debug
// page read it.
func (c *Cache[S, T]) Relists() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return max(c.lists-1, 0)
}

// DriftRepairs counts the differences periodic relists found between the
// listing and what the watch had delivered (events the watch lost), each
// reported to the handlers as a synthetic change.
func (c *Cache[S, T]) DriftRepairs() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.driftRepairs
}

// Undecodable returns the number of keys whose value is quarantined (see
// Quarantined).
func (c *Cache[S, T]) Undecodable() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.quarantine)
}

// Panics counts the panics of the functions the Cache called for its user:
// handlers, index functions, the error handler, and the ListWatcher's List
// and Watch. Each was logged at Error, and each but the error handler's
// own passed to the error handler (WithErrorHandler; a List or Watch that
// panicked fails like one that returned an error); the Cache went on.
func (c *Cache[S, T]) Panics() int64 { return c.panics.Load() }
