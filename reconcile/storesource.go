package reconcile

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/internal/objpath"
	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// changeFunc is a cache source's change judge (see WithChanges).
type changeFunc[S, T any] func(old, new *store.Object[S, T], manager string) (owned, foreign []diff.Path)

// CacheSourceOption configures a cache source (FromStore, FromOwned,
// FromCacheMapped).
type CacheSourceOption[S, T any] func(*cacheSource[S, T])

// WithChanges replaces the function the source judges a change with: f
// reports which paths changed between old and new, and splits them by
// whether manager owns them after the change. By default FromStore judges
// with the store's field-level FieldChanges; FromOwned and FromCacheMapped,
// which have a cache alone, with SectionChanges. An f that panics is
// reported like a reconcile panic, and its change is judged by its writer
// alone: the Loop's own write is not a hint, another writer's change is. A
// nil f changes nothing. Another writer's change is a hint whatever f finds
// unless Stalled changed, so FromStore's source then queues it without
// calling f, and calls f on it only for the oscillation detector, when the
// Loop keeps state for the key: after the hint, before it judges its next
// change. The Loop's oscillation detector keeps the paths f returns (not
// the lists): f must not modify one afterwards.
func WithChanges[S, T any](f func(old, new *store.Object[S, T], manager string) (owned, foreign []diff.Path)) CacheSourceOption[S, T] {
	return func(s *cacheSource[S, T]) {
		if f != nil {
			s.changes, s.fieldLevel = f, false
		}
	}
}

// WithSortedKeys makes FromStore's source list its keys in name order at
// every resync and new term, so that the order in which they are queued is
// reproducible (reconciletest's seeded runs use it). It costs a sort of
// every name per resync; without it the keys come in no promised order
// (today about the order the source first saw them, which a delete
// reshuffles), and no longer in Go's random map order. Other
// sources ignore it: FromOwned lists its keys (at term start only) in name
// order always, FromCacheMapped lists none.
func WithSortedKeys[S, T any]() CacheSourceOption[S, T] {
	return func(s *cacheSource[S, T]) { s.sorted = true }
}

// cacheSource turns the changes of a cache.Cache into hints for a Loop
// keyed by object name; FromStore documents what every one does. The
// primary one (FromStore, names != nil) also lists keys and reports to the
// Loop (observe.go).
//
// Judging own writes needs the Loop's manager names and the observations
// need the Loop: a cache source gets both through loopHooks, the contract
// a Loop's Sink offers its sources (see observe.go).
//
// A cache source registers one handler on the cache when it first runs and
// may run once; after its Run returns the handler does nothing.
type cacheSource[S, T any] struct {
	c       *cache.Cache[S, T]
	st      *store.Store[S, T]                     // primary (FromStore) only
	mapKeys func(obj *store.Object[S, T]) []string // nil for the primary: the key is the name
	changes changeFunc[S, T]
	// fieldLevel: changes is the Store's FieldChanges (FromStore without
	// WithChanges), whose owned paths of a change judged as its own
	// writer are all that writer's by ChangedBy too (see observe).
	fieldLevel bool
	// statusEqual is reflect.DeepEqual of two statuses, or the primary's
	// Store's equality of T (the same verdicts, without walking the type
	// on every event); nil for reflect.DeepEqual.
	statusEqual func(a, b *T) bool
	// by is the primary's Store's ChangedBy, looked up once; nil for the
	// others, which observe nothing.
	by changedBy[S, T]
	// appendChanges is the Store's FieldChangesAppend when changes is its
	// FieldChanges (fieldLevel), which changed calls instead, into judged:
	// a judgement then allocates no list. nil otherwise.
	appendChanges fieldChangesAppender[S, T]
	sorted        bool
	pred          predicates[S, T] // see WithPredicate
	// backend is the backend the cache follows (backendID), nil when
	// unknown: its revisions are the only ones the source compares.
	backend any

	sink    atomic.Pointer[sinkRef]
	started atomic.Bool

	mu    sync.Mutex
	names *nameSet // primary only
	buf   []string // Keys' copy of names.list, kept between resyncs up to keysBufKept
	// judged holds the owned (the first half) and foreign paths of the
	// last judgement changed made with appendChanges: read under mu, and
	// never kept past the judgement (see loopHooks.observeWrite).
	judged [2 * judgedPaths]diff.Path
	// sections holds judgeLater's section diff, read under mu and never
	// kept past the judgement: a buffer on its stack was zeroed at
	// every event.
	sections [8]diff.Path
	// deferred is another writer's change whose hint was certain before
	// its field-level judgement (see judgeLater), judged after the hint: the
	// judgement feeds the oscillation detector alone, and made before the
	// hint it delayed every such event's reconcile by its cost. It is
	// made (flushLocked) before the next change is judged, or when the
	// Loop is about to observe a write of its own that no event carries;
	// at most one waits.
	deferred deferredJudge[S, T]
}

// deferredJudge is a change whose field-level judgement waits: the Loop
// that judges it, the objects before and after, the manager it is judged
// as, and when it was seen (a change split by ChangedBy may hold writes of
// the Loop's, whose time counts). loop is nil when none waits.
type deferredJudge[S, T any] struct {
	loop     loopHooks
	old, new *store.Object[S, T]
	judgeAs  string
	at       time.Time
	others   bool // see observe
}

type sinkRef struct {
	sink Sink[string]
	loop loopHooks // nil when the sink is not a Loop
}

// storeSource is FromStore's source: the primary cache source, a
// keyLister, and the ConditionWriter of its kind.
type storeSource[S, T any] struct {
	*cacheSource[S, T]
	storeConditions[S, T]
}

// FromStore returns the source for the Loop's own kind: every change to an
// object of c is a hint for its name (own writes excepted), and every cached
// name is listed for resync and new terms (from a set of names it keeps,
// without store reads). It carries StoreConditions(c, st), so the Loop writes
// its Stalled condition through st, and it judges own writes and
// oscillation field by field with st's FieldChanges (from Meta.Managed):
// oscillation reports name the flipping fields (.spec.replicas), and another
// actor's change merged into an event of ours still triggers. The
// oscillation detector attributes each changed field to the manager that
// owns it after the event (the Store's ChangedBy), so a relist that merges
// two managers' writes is not taken for a fight.
//
// Like every cache source (FromOwned, FromCacheMapped), it:
//   - drops own writes: a modification written by the Loop's field manager
//     (or by the Loop itself, for Stalled) whose every changed path that
//     manager owns is not a hint for the key whose reconcile wrote it, so
//     a status write cannot defeat backoff; it is a hint for any other key
//     (see "Own writes and oscillation" in the package documentation);
//   - is a syncer, so the Loop starts work only once the cache is warm;
//   - is a revisionWaiter, so Result.RequeueAfterWrite waits for the cache;
//   - serves one Loop: a second Run returns ErrAlreadyRunning.
//
// FromStore's source also reports to the Loop what it sees: the writes, to
// the oscillation detector, and the objects' Ready and Stalled conditions,
// for time-to-converge metrics and Stalled bookkeeping. It finds the Loop
// (and the manager names it judges by) as the Sink it runs with; run with
// any other Sink, a cache source delivers every change as a hint.
//
// Run the cache itself separately (cache.Cache.Run, or Manager.AddCache).
// New refuses a nil c or st, and a c over other objects than st's
// (another kind, key prefix or backend).
func FromStore[S, T any](c *cache.Cache[S, T], st *store.Store[S, T], opts ...CacheSourceOption[S, T]) Source[string] {
	if st != nil {
		opts = append([]CacheSourceOption[S, T]{func(s *cacheSource[S, T]) { s.changes, s.fieldLevel = st.FieldChanges, true }}, opts...)
	}
	s := newCacheSource(c, nil, opts) // its key is the object's name
	s.st = st
	hooks := storeaccess.Of(st)
	if eq, ok := hooks.(statusEqualer[T]); ok {
		s.statusEqual = eq.StatusEqual
	}
	s.by, _ = hooks.(changedBy[S, T])
	if s.fieldLevel {
		s.appendChanges, _ = hooks.(fieldChangesAppender[S, T])
	}
	s.names = newNameSet()
	return storeSource[S, T]{cacheSource: s, storeConditions: newStoreConditions(c, st)}
}

// statusEqualer is the Store's StatusEqual, which it offers the project's
// packages only (internal/storeaccess).
type statusEqualer[T any] interface {
	StatusEqual(a, b *T) bool
}

// FromOwned returns a source over a child kind: a change to a child is a
// hint for its controller owner of kind ownerKind (the OwnerRef with
// Controller set), before and after the change, so moving a child between
// owners wakes both. It is a cache source (see FromStore): the Loop's own
// writes to children are not hints, judged with SectionChanges unless
// WithChanges says otherwise.
//
// At the start of each leadership term (not at resync) it lists the owner
// names of every child it sees, in name order. A term starts without the
// hints and retries of the last one, so an owner deleted while no Loop led
// (or whose cleanup was still failing when the term ended) is gone from the
// owner kind's cache and listed by nobody else: its children, which still
// name it, bring it back, and its reconcile finds it deleted and cleans up.
// No key lister of the user's is needed for that.
//
// Its hints are owner names, so they are keys of the Loop only if the Loop
// reconciles objects of ownerKind. New checks what it can know: it rejects
// (ErrInvalidOption) an empty ownerKind, and an ownerKind that is not the
// Kind of a FromStore source of the same Loop ("deployment" beside
// FromStore over "Deployment"). A Loop whose keys come from no FromStore
// source cannot be checked: no store declares what its keys name.
func FromOwned[S, T any](c *cache.Cache[S, T], ownerKind string, opts ...CacheSourceOption[S, T]) Source[string] {
	s := newCacheSource(c, func(obj *store.Object[S, T]) []string {
		var out []string
		for _, o := range obj.Meta.Owners {
			if o.Controller && o.Kind == ownerKind {
				out = append(out, o.Name)
			}
		}
		return out
	}, opts)
	return ownedSource[S, T]{cacheSource: s, kind: ownerKind}
}

// ownedSource is FromOwned's source: a cache source that knows the owner
// kind its hints name, for checkSources.
type ownedSource[S, T any] struct {
	*cacheSource[S, T]
	kind string
}

func (s ownedSource[S, T]) ownerKind() string { return s.kind }

// termKeys yields the owner names of every cached child, sorted and each
// once (see FromOwned). It reads the cache alone.
func (s ownedSource[S, T]) termKeys() iter.Seq[string] {
	return func(yield func(string) bool) {
		if s.c == nil {
			return
		}
		var keys []string
		for _, obj := range s.c.List(nil) {
			keys = append(keys, s.mapKeys(obj)...)
		}
		slices.Sort(keys)
		for _, k := range slices.Compact(keys) {
			if !yield(k) {
				return
			}
		}
	}
}

// reconciledKind is the kind whose names FromStore's source lists as keys.
func (s storeSource[S, T]) reconciledKind() string {
	if s.cacheSource.st == nil {
		return ""
	}
	return s.cacheSource.st.Kind()
}

// mismatch says how FromStore's cache and store hold different objects
// (another kind, key prefix or backend), or "" when they hold the same or
// it cannot tell (a nil one, which checkSources refuses, or a cache over another
// ListWatcher than a Store, known only by its Kind).
func (s storeSource[S, T]) mismatch() string {
	c, st := s.cacheSource.c, s.cacheSource.st
	if c == nil || st == nil {
		return ""
	}
	cst, ok := c.Source().(*store.Store[S, T])
	if !ok || cst == nil {
		if k := c.Kind(); k != "" && k != st.Kind() {
			return fmt.Sprintf("a cache of kind %q and a store of kind %q", k, st.Kind())
		}
		return ""
	}
	switch {
	case cst.Kind() != st.Kind():
		return fmt.Sprintf("a cache of kind %q and a store of kind %q", cst.Kind(), st.Kind())
	case cst.Prefix() != st.Prefix():
		return fmt.Sprintf("a cache of keys %q and a store of keys %q", cst.Prefix(), st.Prefix())
	case backendID(cst.Backend()) != backendID(st.Backend()):
		return fmt.Sprintf("a cache and a store of kind %q over two backends", st.Kind())
	}
	return ""
}

// missing says what a cache source lacks: a nil cache, FromStore's nil
// store, or a nil predicate; "" when it lacks nothing.
func (s *cacheSource[S, T]) missing() string {
	switch {
	case s.c == nil:
		return "a nil cache"
	case s.names != nil && s.st == nil:
		return "FromStore with a nil store"
	case s.pred.nilGiven:
		return "WithPredicate got a nil predicate (an And, Or or Not of a nil predicate is nil)"
	}
	return ""
}

// checkSources rejects a cache source among srcs that lacks a part (a nil
// cache, store or predicate), a FromStore source whose cache and store
// hold different objects, and a FromOwned source whose owner kind is
// empty, or differs from the kind of every FromStore source among srcs when
// there is one (see FromOwned).
func checkSources[K comparable](srcs []Source[K]) error {
	var kinds []string
	for _, s := range srcs {
		if m, ok := s.(interface{ missing() string }); ok {
			if why := m.missing(); why != "" {
				return invalid("cache source over %s", why)
			}
		}
		if m, ok := s.(interface{ mismatch() string }); ok {
			if why := m.mismatch(); why != "" {
				return invalid("FromStore over %s: the Loop would reconcile names its store does not hold", why)
			}
		}
		if r, ok := s.(interface{ reconciledKind() string }); ok && r.reconciledKind() != "" {
			kinds = append(kinds, r.reconciledKind())
		}
	}
	for _, s := range srcs {
		o, ok := s.(interface{ ownerKind() string })
		if !ok {
			continue
		}
		switch k := o.ownerKind(); {
		case k == "":
			return invalid("FromOwned with an empty owner kind")
		case len(kinds) > 0 && !slices.Contains(kinds, k):
			return invalid("FromOwned owner kind %q: the Loop reconciles %s (its FromStore source), so hints for owners of kind %q would name keys it does not have",
				k, strings.Join(kinds, ", "), k)
		}
	}
	return nil
}

// FromCacheMapped returns a source whose hints are the names fn maps each
// changed object of c to (before and after the change): a custom mapper, for
// example a dependency index that maps a secret to every object that
// references it. It is a cache source like FromOwned. A call of fn that
// panics is reported like a reconcile panic and maps its object to no key.
func FromCacheMapped[S, T any](c *cache.Cache[S, T], fn func(obj *store.Object[S, T]) []string, opts ...CacheSourceOption[S, T]) Source[string] {
	return newCacheSource(c, fn, opts)
}

func newCacheSource[S, T any](c *cache.Cache[S, T], fn func(*store.Object[S, T]) []string, opts []CacheSourceOption[S, T]) *cacheSource[S, T] {
	s := &cacheSource[S, T]{c: c, mapKeys: fn, changes: SectionChanges[S, T]}
	if c != nil {
		if st, ok := c.Source().(*store.Store[S, T]); ok && st != nil {
			s.backend = backendID(st.Backend())
		}
	}
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
	return s
}

// Run delivers the cache's changes to sink until ctx ends. It returns an
// error for a source that lacks a part (which New and AddSource refuse), or
// ErrAlreadyRunning when called a second time.
func (s *cacheSource[S, T]) Run(ctx context.Context, sink Sink[string]) error {
	if why := s.missing(); why != "" {
		return errors.New("reconcile: cache source over " + why)
	}
	if !s.started.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	ref := &sinkRef{sink: sink}
	if l, ok := sink.(loopHooks); ok {
		ref.loop = l
		l.judgeOwnWrites()
	}
	s.sink.Store(ref)
	if ref.loop != nil && s.names != nil { // only the primary defers judgements
		defer ref.loop.deferJudgements(s.flush)()
	}
	s.c.AddHandler(s.handle)
	<-ctx.Done()
	s.sink.Store(nil)
	return nil
}

// flush makes the deferred judgement, if one waits (see deferred).
func (s *cacheSource[S, T]) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushLocked()
}

// flushLocked is flush for a caller holding s.mu.
func (s *cacheSource[S, T]) flushLocked() {
	d := s.deferred
	if d.loop == nil {
		return
	}
	s.deferred = deferredJudge[S, T]{}
	owned, foreign, p := s.changed(d.old, d.new, d.judgeAs)
	if p != nil {
		d.loop.userPanic("ChangeFunc", p, slog.String("key", d.new.Meta.Name))
		return
	}
	if len(owned)+len(foreign) > 0 {
		s.observe(d.loop, d.new, d.judgeAs, owned, foreign, d.at, d.others)
	}
}

// WaitForSync waits for the cache's first listing (syncer).
func (s *cacheSource[S, T]) WaitForSync(ctx context.Context) error {
	if s.c == nil {
		return nil
	}
	return s.c.WaitForSync(ctx)
}

// LastError returns the cache's last list or watch error, which a Loop
// waiting for the source to sync logs.
func (s *cacheSource[S, T]) LastError() error {
	if s.c == nil {
		return nil
	}
	return s.c.LastError()
}

// String names the source in logs: FromStore(kind), FromStore(kind@version)
// for a versioned kind (see store.WithVersion), or "cache source".
func (s *cacheSource[S, T]) String() string {
	if s.st != nil {
		if v, ok := storeaccess.Of(s.st).(interface{ Version() string }); ok && v.Version() != "" {
			return "FromStore(" + s.st.Kind() + "@" + v.Version() + ")"
		}
		return "FromStore(" + s.st.Kind() + ")"
	}
	return "cache source"
}

// refilter makes the cache follow its WithKeep function (a sharded Loop's
// shards moved): see cache.Cache.Refilter.
func (s *cacheSource[S, T]) refilter(ctx context.Context) error {
	if s.c == nil {
		return nil
	}
	return s.c.Refilter(ctx)
}

// prune drops what the cache's WithKeep function rejects now (a sharded
// Loop let shards go): see cache.Cache.Prune.
func (s *cacheSource[S, T]) prune(ctx context.Context) error {
	if s.c == nil {
		return nil
	}
	return s.c.Prune(ctx)
}

// Revision returns the store revision the cache reflects (revisionWaiter).
func (s *cacheSource[S, T]) Revision() int64 {
	if s.c == nil {
		return 0
	}
	return s.c.Revision()
}

// followedBackend returns the backend the cache follows (backendFollower).
func (s *cacheSource[S, T]) followedBackend() any { return s.backend }

// WaitFor waits until the cache reflects revision (revisionWaiter).
func (s *cacheSource[S, T]) WaitFor(ctx context.Context, revision int64) error {
	if s.c == nil {
		return nil
	}
	return s.c.WaitFor(ctx, revision)
}

// keysBufKept is the most names whose copy Keys keeps for the next
// resync: a larger one would stay for the GC to scan between resyncs (16
// bytes a name, 16 MB at 1M names) to save an allocation a resync.
const keysBufKept = 4096

// Keys yields every object name the source has seen and not seen deleted
// (keyLister), in name order under WithSortedKeys.
func (s storeSource[S, T]) Keys() iter.Seq[string] {
	return func(yield func(string) bool) {
		s.mu.Lock()
		buf := append(s.buf[:0], s.names.list...)
		s.buf = nil // owned by this iteration until it ends
		s.mu.Unlock()
		defer func() {
			if cap(buf) > keysBufKept {
				return
			}
			clear(buf) // the names it held may be deleted meanwhile
			s.mu.Lock()
			s.buf = buf[:0]
			s.mu.Unlock()
		}()
		if s.sorted {
			slices.Sort(buf)
		}
		for _, n := range buf {
			if !yield(n) {
				return
			}
		}
	}
}

// handle is the cache handler: h(nil, obj) added, h(old, new) modified,
// h(old, nil) deleted.
func (s *cacheSource[S, T]) handle(old, new *store.Object[S, T]) {
	ref := s.sink.Load()
	if ref == nil {
		return
	}
	obj, typ := new, store.Modified
	switch {
	case old == nil:
		typ = store.Added
	case new == nil:
		obj, typ = old, store.Deleted
	}
	primary := s.names != nil
	// The name set and the hint change together under s.mu, and Keys
	// snapshots under it too: a term that starts while this change is
	// being handled sees the key either in its snapshot or as a hint, and
	// its workers start only after the snapshot is queued, so the key runs
	// once, not twice.
	//
	// While no term of the Loop runs, the primary source hints only
	// deletions: the name of an added or modified object is in its name
	// set, which the next term lists, so a hint would be kept twice and a
	// first listing larger than the Loop's pending cap would fill it.
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushLocked() // the detector hears of the last change before this one
	if primary && typ != store.Modified {
		// A modification's name is in already: the cache tells a handler
		// of each object's addition first (AddHandler replays what it
		// holds as additions), and a lookup in a set of every name is a
		// cache miss per event at 10,000 objects.
		s.noteName(obj.Meta.Name, typ)
	}
	j := judgement{hint: s.passes(ref, old, new)}
	if j.hint && typ == store.Modified {
		j = s.judgeLater(ref.loop, old, new)
	}
	if primary && ref.loop != nil {
		s.reportState(ref.loop, obj, typ)
	}
	if j.early {
		// Judged the Loop's own by its writer's name alone: the keys wait
		// for the write's report, which names its author.
		ref.loop.missedHints(s.backend, new.Meta.Revision, s.keys(ref, old, new, obj, "", false))
	}
	if j.hint && !(primary && typ != store.Deleted && ref.loop != nil && !ref.loop.inTerm()) {
		s.hint(ref, old, new, obj, j.except, j.excepting)
	}
}

// noteName keeps the primary source's set of names (Keys) in step with an
// event of type typ. It runs under s.mu.
func (s *cacheSource[S, T]) noteName(name string, typ store.EventType) {
	if typ == store.Deleted {
		s.names.remove(name)
	} else {
		s.names.add(name)
	}
}

// reportState tells loop of obj as the primary cache now holds it (or of
// its deletion): its generations and whether it carries a Stalled of the
// Loop's.
func (s *cacheSource[S, T]) reportState(loop loopHooks, obj *store.Object[S, T], typ store.EventType) {
	if typ == store.Deleted {
		loop.forgetKey(obj.Meta.Name)
		return
	}
	stalled := false
	if len(obj.Conditions) > 0 && stalledNotFalse(obj.Conditions) {
		_, loopSelf := loop.managers()
		stalled = ownsCondition(s.st, obj, loopSelf, conditions.Stalled)
	}
	loop.observeState(obj.Meta.Name, obj.Meta.Generation, obj.Conditions, stalled)
}

// hint adds the keys of a change to obj (see keys), but except when
// excepting.
func (s *cacheSource[S, T]) hint(ref *sinkRef, old, new, obj *store.Object[S, T], except string, excepting bool) {
	if s.names != nil {
		if !excepting || obj.Meta.Name != except {
			ref.sink.Add(obj.Meta.Name)
		}
		return
	}
	for _, k := range s.keys(ref, old, new, obj, except, excepting) {
		ref.sink.Add(k)
	}
}

// keys returns the keys a change to obj hints: its name for the primary
// source; else what it maps to, before and after a modification, each
// once; but except when excepting.
func (s *cacheSource[S, T]) keys(ref *sinkRef, old, new, obj *store.Object[S, T], except string, excepting bool) []string {
	if s.names != nil {
		if excepting && obj.Meta.Name == except {
			return nil
		}
		return []string{obj.Meta.Name}
	}
	keys := s.mapped(ref, nil, obj)
	if old != nil && new != nil {
		keys = s.mapped(ref, keys, old)
		slices.Sort(keys)
		keys = slices.Compact(keys)
	}
	if excepting {
		keys = slices.DeleteFunc(keys, func(k string) bool { return k == except })
	}
	return keys
}

// mapped appends the keys mapKeys maps obj to. A mapper that panics is
// reported (reportPanic) and maps obj to nothing: the other objects' hints
// still go.
func (s *cacheSource[S, T]) mapped(ref *sinkRef, keys []string, obj *store.Object[S, T]) (out []string) {
	var p *guard.Panic
	defer func() {
		if p != nil {
			reportPanic(ref.sink, "mapper", p, slog.String("object", obj.Meta.Name))
			out = keys
		}
	}()
	defer guard.Catch(&p)
	return append(keys, s.mapKeys(obj)...)
}

// changed runs the ChangeFunc under recovery. The caller holds s.mu: the
// Store's FieldChanges appends to s.judged, whose lists are the caller's
// until its next call.
func (s *cacheSource[S, T]) changed(old, new *store.Object[S, T], manager string) (owned, foreign []diff.Path, p *guard.Panic) {
	defer guard.Catch(&p)
	if s.appendChanges != nil {
		owned, foreign = s.appendChanges.FieldChangesAppend(old, new, manager,
			s.judged[:0:judgedPaths], s.judged[judgedPaths:judgedPaths:2*judgedPaths])
		return owned, foreign, nil
	}
	owned, foreign = s.changes(old, new, manager)
	return owned, foreign, nil
}

// judgedPaths is the room in s.judged for each of a judgement's lists:
// more paths than that take a list of their own.
const judgedPaths = 4

// fieldChangesAppender is the Store's FieldChangesAppend, which it offers
// the project's packages only (internal/storeaccess): FieldChanges
// appending to the caller's lists.
type fieldChangesAppender[S, T any] interface {
	FieldChangesAppend(old, new *store.Object[S, T], manager string, owned, foreign []diff.Path) ([]diff.Path, []diff.Path)
}

// judgement is what judgeLater decides of a modification: whether it is a
// hint; when excepting, for every key but except (the Loop's own write,
// made by the reconcile of except); early, when it was judged the Loop's
// own by its writer's name alone, before the write's report (see
// missedHints).
type judgement struct {
	hint, excepting, early bool
	except                 string
}

// judgeLater feeds the oscillation detector and decides whether a
// modification is a hint for loop (nil when the sink is not a Loop: then
// every change is): an own write that hints every key but its author's
// counts as none. The field-level judgement of another writer's change
// whose hint is certain without it waits in s.deferred: it feeds the
// detector alone, and the caller hints first (flush makes it). The caller
// holds s.mu.
//
// The ChangeFunc (field-level by default, tens of µs) runs at most once per
// event, and only when its answer matters: a cheap section diff first settles
// events that change nothing a Loop judges or only Stalled, and a secondary
// source (FromOwned, FromCacheMapped) hints another writer's change without
// judging it.
//
// The Loop's own write is judged per key: it is no hint for its author,
// the key whose reconcile wrote it, and a hint, as another writer's change
// is, for any other key it maps to. So a primary source judges an own
// write of another key's object as another writer's change, for the hint
// and the oscillation detector alike; a secondary one hints the keys but
// its author's. A write whose author is unknown (RecordWrite's, or one by
// the Loop's manager name that no reconcile reported) is its own for
// every key.
func (s *cacheSource[S, T]) judgeLater(loop loopHooks, old, new *store.Object[S, T]) judgement {
	if loop == nil {
		return judgement{hint: true}
	}
	writer := new.Meta.LastWrite.Manager
	judgeAs, loopSelf, by, reported := judgedAs(loop, s.backend, writer, new.Meta.Revision)
	primary := s.names != nil
	// mine: judged as the Loop's own write; own: not a hint for the
	// event's keys but others when excepting.
	mine, others := writer == judgeAs, false
	own := judgement{early: mine && !reported}
	if mine && by.kind != authorUnknown {
		if !primary {
			key, _ := by.keyOf(new.Meta.Name)
			own = judgement{hint: true, excepting: true, except: key}
		} else if by.kind == authorKey && by.key != new.Meta.Name {
			mine, others = false, true // authorName: the name is the key
		}
	}
	sections := sectionDiff(s.sections[:0], old, new, s.statusEqual)
	if len(sections) == 0 {
		// Bookkeeping only: an own write (not a hint) when ours.
		if mine {
			return own
		}
		return judgement{hint: true}
	}
	reports, stalled := reportSections(sections)
	if reports == len(sections) {
		// Stalled is the Loops' report, never an input: a change to it
		// alone (by any Loop) is not a hint, nor a write that counts.
		return judgement{}
	}
	if !mine && (!primary || !stalled) {
		// Another actor's change is a hint, whatever its paths, unless
		// every path it changed is under Stalled. A secondary source
		// never asks. A primary one need not either when Stalled did
		// not change (the section check compares every field of a
		// condition, as the field-level diff does, so the latter finds
		// no path under Stalled). The field-level judgement then only
		// feeds the oscillation detector, which ignores other writers'
		// changes to keys the Loop keeps no state for (see
		// observeWrite); for the others it is made after the hint.
		if primary && loop.keepsState(new.Meta.Name) {
			s.deferred = deferredJudge[S, T]{loop: loop, old: old, new: new, judgeAs: judgeAs, at: loop.now(), others: others}
		}
		return judgement{hint: true}
	}
	owned, foreign, p := s.changed(old, new, judgeAs)
	if p != nil {
		// Unjudged: an own write stays not a hint (hinting it would let
		// the Loop's writes wake it, a spin), another writer's change is
		// one.
		loop.userPanic("ChangeFunc", p, slog.String("key", new.Meta.Name))
		if mine {
			return own
		}
		return judgement{hint: true}
	}
	if primary && writer != loopSelf && len(owned)+len(foreign) > 0 {
		// judgeAs is the reconciler's manager here (self, or the name a
		// reconcile wrote as): the paths are from its point of view.
		if own.early {
			s.holdEarly(loop, new, judgeAs, owned, foreign)
		} else {
			s.observe(loop, new, judgeAs, owned, foreign, time.Time{}, others)
		}
	}
	if (reports > 0 || !s.fieldLevel) && onlyStalled(owned, foreign) {
		// The Store's FieldChanges finds a path under Stalled or
		// Reconciling only where the section check found one: it
		// compares every field of a condition as conditionEqual does.
		return judgement{}
	}
	// An own write is not a hint: a modification by judgeAs whose every
	// changed path judgeAs owns (reacting to it would let a status write
	// defeat backoff, crossplane#3455). Changes by other actors merged into
	// the same event (a relist can merge writes) are paths judgeAs does not
	// own, so they still make it a hint.
	if mine && len(foreign) == 0 {
		return own
	}
	return judgement{hint: true}
}

// judgedAs names the manager a modification by writer at revision rev of
// backend b is judged as: the Loop's own manager for its own (Stalled)
// write, writer when a reconcile of the Loop wrote rev under that name (a
// name the Loop then knows as its own), else the reconciler's manager. It
// says who wrote rev (by) when a reconcile of the Loop reported it
// (reported).
func judgedAs(loop loopHooks, b any, writer string, rev int64) (judgeAs, loopSelf string, by author, reported bool) {
	self, loopSelf := loop.managers()
	switch {
	case writer == loopSelf:
		by, reported = loop.sawWrite(b, rev)
		return loopSelf, loopSelf, by, reported
	case writer == self:
		by, reported = loop.sawWrite(b, rev)
		return self, loopSelf, by, reported
	}
	if by, reported, own := loop.ownWrite(b, writer, rev); own {
		return writer, loopSelf, by, reported
	}
	return self, loopSelf, author{}, false
}

// changedBy is the Store's ChangedBy, which it offers the project's
// packages only (internal/storeaccess): it splits changed paths by who
// made them, from new's field ownership.
type changedBy[S, T any] interface {
	ChangedBy(new *store.Object[S, T], manager string, paths []diff.Path) (mine, others []diff.Path)
}

// observe feeds loop's oscillation detector one modification, split path
// by path into the writes of judgeAs and of other managers, as
// the Store's ChangedBy attributes them from new's field ownership: a relist (or
// a watch that coalesces) can merge both into one event, and attributing
// it all to its last writer would count the other's paths as re-sets by
// judgeAs and judgeAs' paths as changes by another, a fight between two
// managers that write disjoint fields. The last writer's part is observed
// last, as it was written last.
//
// A change judgeAs wrote last, judged by the Store's FieldChanges, keeps
// its owned paths whole without asking ChangedBy, which would give them
// all to judgeAs: FieldChanges owns judgeAs a path only when judgeAs owns
// it after the change, or nobody does, by the same record of new that
// ChangedBy reads (ownership.Attribute and ownership.ChangedBy), and
// ChangedBy gives the last writer every such path. That is the Loop's own
// status write, every one. Likewise a change another manager wrote last
// keeps its foreign paths whole as that manager's, without asking
// ChangedBy, which would give them all to others: FieldChanges leaves a
// path foreign when judgeAs does not own it after the change, or nobody
// does and judgeAs did not before (or the side's record cannot be read),
// and ChangedBy gives judgeAs, when it is not the last writer, only a
// path it owns after the change. That is another writer's spec change,
// every one the Loop keeps state for.
//
// others: the change is the Loop's own write of another key's object (see
// judgeLater), one write by another writer as far as the object's
// detector is concerned, whatever the field ownership says (which names
// the Loop's manager): every path changed is foreign, as another writer's
// change to the object is progress, not a re-set by itself.
func (s *cacheSource[S, T]) observe(loop loopHooks, new *store.Object[S, T], judgeAs string, owned, foreign []diff.Path, at time.Time, others bool) {
	by := s.by
	if by == nil {
		return
	}
	if others {
		paths := append(slices.Clip(foreign), owned...)
		loop.observeWrite(new.Meta.Name, oscillation.Write{Time: at, Foreign: paths})
		return
	}
	selfLast := new.Meta.LastWrite.Manager == judgeAs
	// FieldChanges settles one half of the split (see above); ChangedBy
	// splits the other, and no empty list (it returns two nil ones).
	var selfOwned, otherOwned, selfForeign, otherForeign []diff.Path
	switch {
	case !s.fieldLevel:
		selfOwned, otherOwned = splitBy(by, new, judgeAs, owned)
		selfForeign, otherForeign = splitBy(by, new, judgeAs, foreign)
	case selfLast:
		selfOwned = owned
		selfForeign, otherForeign = splitBy(by, new, judgeAs, foreign)
	default:
		selfOwned, otherOwned = splitBy(by, new, judgeAs, owned)
		if len(foreign) > 0 {
			otherForeign = foreign
		}
	}
	self := len(selfOwned)+len(selfForeign) > 0
	if self && !selfLast {
		loop.observeWrite(new.Meta.Name, oscillation.Write{Time: at, Self: true, Owned: selfOwned, Foreign: selfForeign})
	}
	if len(otherOwned)+len(otherForeign) > 0 {
		loop.observeWrite(new.Meta.Name, oscillation.Write{Time: at, Owned: otherOwned, Foreign: otherForeign})
	}
	if self && selfLast {
		loop.observeWrite(new.Meta.Name, oscillation.Write{Time: at, Self: true, Owned: selfOwned, Foreign: selfForeign})
	}
}

// splitBy is by.ChangedBy(new, manager, paths), without the call when
// paths is empty.
func splitBy[S, T any](by changedBy[S, T], new *store.Object[S, T], manager string, paths []diff.Path) (mine, others []diff.Path) {
	if len(paths) == 0 {
		return nil, nil
	}
	return by.ChangedBy(new, manager, paths)
}

// holdEarly gives loop the writes observe would make of an event judged
// the Loop's own by its writer's name alone, before the write was
// reported: both as the Loop's own write and as another writer's (a write
// of the object by a reconcile of another key), for the report to choose
// from (see earlyWrite).
func (s *cacheSource[S, T]) holdEarly(loop loopHooks, new *store.Object[S, T], judgeAs string, owned, foreign []diff.Path) {
	at := loop.now()
	h := &heldWrites{loopHooks: loop}
	s.observe(h, new, judgeAs, owned, foreign, at, false)
	own := h.ws
	h.ws = nil
	s.observe(h, new, judgeAs, owned, foreign, at, true)
	if len(h.ws) != 1 {
		return // no ChangedBy: observe feeds the detector nothing
	}
	loop.holdEarly(s.backend, new.Meta.Revision, &earlyWrite{key: new.Meta.Name, own: own, other: h.ws[0]})
}

// heldWrites keeps, with copies of their paths, the writes that
// cacheSource.observe would feed a Loop's oscillation detector.
type heldWrites struct {
	loopHooks
	ws []oscillation.Write
}

func (h *heldWrites) observeWrite(_ string, w oscillation.Write) {
	w.Owned, w.Foreign = slices.Clone(w.Owned), slices.Clone(w.Foreign)
	h.ws = append(h.ws, w)
}

// onlyStalled reports whether a and b together hold a path and every one
// is the Stalled or the Reconciling condition or below them: a change to
// the Loops' reports alone, which are never an input.
func onlyStalled(a, b []diff.Path) bool {
	if len(a)+len(b) == 0 {
		return false
	}
	for _, p := range a {
		if !isReport(p) {
			return false
		}
	}
	for _, p := range b {
		if !isReport(p) {
			return false
		}
	}
	return true
}

func isReport(p diff.Path) bool { return p.HasPrefix(stalledPath) || p.HasPrefix(reconcilingPath) }

// readyGeneration returns the ObservedGeneration of a Ready=True condition,
// or 0.
func readyGeneration(conds []store.Condition) int64 {
	if c, ok := conditions.Get(conds, conditions.Ready); ok && c.Status == store.ConditionTrue {
		return max(c.ObservedGeneration, 1)
	}
	return 0
}

// SectionChanges is the change function (WithChanges) of FromOwned and FromCacheMapped. It
// reports changes by section of the object:
//
//	.metadata.labels  .metadata.annotations  .metadata.owners
//	.metadata.finalizers  .metadata.deletionRequested
//	.spec  .status  .conditions[type="T"]
//
// (.spec when the generation moved, one path per changed condition type).
//
// Ownership is attributed to the writer of the change (Meta.LastWrite):
// every changed path is owned by the manager that wrote it. This is exact
// for single writes, which is what the watch delivers; a relist that merges
// writes by several actors into one change is attributed to the last
// writer, so a merged change of another actor can be missed until resync.
// FromStore judges field by field from the object's managed fields instead.
// A nil old or new (a creation or a deletion, which sources never judge)
// has no changed paths.
func SectionChanges[S, T any](old, new *store.Object[S, T], manager string) (owned, foreign []diff.Path) {
	if old == nil || new == nil { // not a modification: nothing to compare
		return nil, nil
	}
	changed := sectionDiff(nil, old, new, nil)
	if new.Meta.LastWrite.Manager == manager {
		return changed, nil
	}
	return nil, changed
}

var (
	stalledPath     = conditionPath(conditions.Stalled)
	reconcilingPath = conditionPath(conditions.Reconciling)
)

// sectionDiff appends to out the sections that differ between old and new.
// The paths it appends share their backing arrays: callers must not modify
// them. statusEqual, when not nil, is reflect.DeepEqual of two statuses.
func sectionDiff[S, T any](out []diff.Path, old, new *store.Object[S, T], statusEqual func(a, b *T) bool) []diff.Path {
	om, nm := &old.Meta, &new.Meta
	if len(om.Labels)|len(nm.Labels)|len(om.Annotations)|len(nm.Annotations)|
		len(om.Owners)|len(nm.Owners)|len(om.Finalizers)|len(nm.Finalizers) != 0 {
		out = metaSections(out, om, nm)
	}
	if om.DeletionRequested != nm.DeletionRequested {
		out = append(out, objpath.DeletionRequested)
	}
	if om.Generation != nm.Generation {
		out = append(out, objpath.Spec)
	}
	if statusEqual == nil {
		statusEqual = deepEqual[T]
	}
	if !statusEqual(&old.Status, &new.Status) {
		out = append(out, objpath.Status)
	}
	if len(old.Conditions)+len(new.Conditions) > 0 {
		out = conditionSections(out, old.Conditions, new.Conditions)
	}
	return out
}

// metaSections appends to out the sections of the metadata's collections
// that differ between om and nm: sectionDiff's, out of its line, so that
// an event of objects without labels, annotations, owners or finalizers
// runs through less code (sectionDiff missed the instruction cache about
// 50 times an event of cmd/ctl-steady, cachegrind).
//
//go:noinline
func metaSections(out []diff.Path, om, nm *store.Meta) []diff.Path {
	if !mapsEqual(om.Labels, nm.Labels) {
		out = append(out, objpath.Labels)
	}
	if !mapsEqual(om.Annotations, nm.Annotations) {
		out = append(out, objpath.Annotations)
	}
	if !slices.Equal(om.Owners, nm.Owners) {
		out = append(out, objpath.Owners)
	}
	if !slices.Equal(om.Finalizers, nm.Finalizers) {
		out = append(out, objpath.Finalizers)
	}
	return out
}

// conditionSections appends to out the paths of the conditions that differ
// between old and new: sectionDiff's, out of its line (see metaSections).
//
//go:noinline
func conditionSections(out []diff.Path, old, new []store.Condition) []diff.Path {
	for _, c := range new {
		if o, ok := conditions.Get(old, c.Type); !ok || !conditionEqual(o, c) {
			out = append(out, typedConditionPath(c.Type))
		}
	}
	for _, o := range old {
		if _, ok := conditions.Get(new, o.Type); !ok {
			out = append(out, typedConditionPath(o.Type))
		}
	}
	return out
}

// deepEqual is reflect.DeepEqual of two values of type T.
func deepEqual[T any](a, b *T) bool {
	return reflect.DeepEqual(a, b) // pointers: boxing them costs no allocation
}

// reportSections counts the sections of sectionDiff that are the Loops'
// reports (Stalled and Reconciling: see onlyStalled), and says whether
// Stalled is one: sectionDiff puts a change to either in sections as the
// one copy of its path (typedConditionPath), known by its address.
func reportSections(sections []diff.Path) (reports int, stalled bool) {
	for _, p := range sections {
		switch {
		case samePath(p, stalledPath):
			reports, stalled = reports+1, true
		case samePath(p, reconcilingPath):
			reports++
		}
	}
	return reports, stalled
}

// typedConditionPath is conditionPath, without building the three
// conditions the Loop itself judges: each of those is one copy, which
// reportSections knows by its address.
func typedConditionPath(t string) diff.Path {
	switch t {
	case conditions.Stalled:
		return stalledPath
	case conditions.Ready:
		return readyPath
	case conditions.Reconciling:
		return reconcilingPath
	}
	return conditionPath(t)
}

var readyPath = conditionPath(conditions.Ready)

func conditionEqual(a, b store.Condition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message &&
		a.ObservedGeneration == b.ObservedGeneration && a.LastTransitionTime.Equal(b.LastTransitionTime)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true // no range: its iterator's start costs a call even over an empty map
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
