package reconcile

import (
	"context"
	"errors"
	"iter"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// ErrSourceRunning is returned by a second Run of a CacheSource.
var ErrSourceRunning = errors.New("reconcile: cache source is already running")

// CacheSource turns the changes of a cache.Cache into hints for a Loop
// keyed by object name. Build one with FromCache (the Loop's own kind),
// FromOwned (children that enqueue their controller owner) or FromCacheMapped
// (any mapping, such as a dependency index).
//
// Every source:
//   - drops own writes: a modification written by the Loop's manager (or by
//     the Loop itself, for Stalled) whose every changed path that manager
//     owns is not a hint, so a status write cannot defeat backoff;
//   - is a Syncer, so the Loop starts work only once the cache is warm;
//   - is a cache the Loop waits on for read-your-writes (Result.Requeue).
//
// FromCache also lists every cached name for resync and new terms (from a
// set of names it keeps, without store reads and without sorting), feeds the
// Loop's oscillation detector and measures time to converge from the Ready
// condition.
//
// A CacheSource registers one handler on the cache when it first runs and
// may run once; after its Run returns the handler does nothing. Run the
// cache itself separately (cache.Cache.Run).
type CacheSource[S, T any] struct {
	c       *cache.Cache[S, T]
	mapKeys func(obj *store.Object[S, T]) []string
	primary bool
	changes ChangeFunc[S, T]

	sink    atomic.Pointer[sinkRef]
	started atomic.Bool

	mu    sync.Mutex
	names map[string]struct{}
	buf   []string
}

type sinkRef struct {
	sink Sink[string]
	obs  observer[string] // nil when the sink is not a Loop
}

// ChangeFunc reports which paths changed between old and new (diff.Path
// strings) and splits them by whether manager owns them after the change.
// WithStore's source uses the store's field-level judge,
// (*store.Store).FieldChanges; a source built from a cache alone (FromCache
// without WithChanges) falls back to SectionChanges, which works at the
// level of object sections.
type ChangeFunc[S, T any] func(old, new *store.Object[S, T], manager string) (owned, foreign []string)

// CacheSourceOption configures a CacheSource.
type CacheSourceOption[S, T any] func(*CacheSource[S, T])

// WithChanges replaces the source's ChangeFunc: the default is the store's
// FieldChanges under WithStore, SectionChanges otherwise (a cache alone does
// not expose the store FieldChanges needs). Pass a ChangeFunc that calls
// st.FieldChanges (and shows its diff.Path values with String) to
// FromCache, FromOwned or FromCacheMapped to judge their changes field by
// field too. A nil f changes nothing.
func WithChanges[S, T any](f ChangeFunc[S, T]) CacheSourceOption[S, T] {
	return func(s *CacheSource[S, T]) {
		if f != nil {
			s.changes = f
		}
	}
}

// FromCache returns the source for the Loop's own kind: every change to an
// object is a hint for its name (own writes excepted).
func FromCache[S, T any](c *cache.Cache[S, T], opts ...CacheSourceOption[S, T]) *CacheSource[S, T] {
	s := newCacheSource(c, func(obj *store.Object[S, T]) []string { return []string{obj.Meta.Name} }, opts)
	s.primary = true
	s.names = map[string]struct{}{}
	return s
}

// FromOwned returns a source over a child kind: a change to a child is a
// hint for its controller owner of kind ownerKind (the OwnerRef with
// Controller set), before and after the change, so moving a child between
// owners wakes both.
func FromOwned[S, T any](c *cache.Cache[S, T], ownerKind string, opts ...CacheSourceOption[S, T]) *CacheSource[S, T] {
	return newCacheSource(c, func(obj *store.Object[S, T]) []string {
		var out []string
		for _, o := range obj.Meta.Owners {
			if o.Controller && o.Kind == ownerKind {
				out = append(out, o.Name)
			}
		}
		return out
	}, opts)
}

// FromCacheMapped returns a source whose hints are the names fn maps each
// changed object to (before and after the change): a custom mapper, for
// example a dependency index that maps a secret to every object that
// references it.
func FromCacheMapped[S, T any](c *cache.Cache[S, T], fn func(obj *store.Object[S, T]) []string, opts ...CacheSourceOption[S, T]) *CacheSource[S, T] {
	return newCacheSource(c, fn, opts)
}

func newCacheSource[S, T any](c *cache.Cache[S, T], fn func(*store.Object[S, T]) []string, opts []CacheSourceOption[S, T]) *CacheSource[S, T] {
	s := &CacheSource[S, T]{c: c, mapKeys: fn, changes: SectionChanges[S, T]}
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
	return s
}

// Run delivers the cache's changes to sink until ctx ends. It returns an
// error for a nil cache, or ErrSourceRunning when called a second time.
func (s *CacheSource[S, T]) Run(ctx context.Context, sink Sink[string]) error {
	if s.c == nil {
		return errors.New("reconcile: cache source over a nil cache")
	}
	if !s.started.CompareAndSwap(false, true) {
		return ErrSourceRunning
	}
	ref := &sinkRef{sink: sink}
	if obs, ok := sink.(observer[string]); ok {
		ref.obs = obs
	}
	s.sink.Store(ref)
	s.c.AddHandler(s.handle)
	<-ctx.Done()
	s.sink.Store(nil)
	return nil
}

// WaitForSync waits for the cache's first listing.
func (s *CacheSource[S, T]) WaitForSync(ctx context.Context) error {
	if s.c == nil {
		return nil
	}
	return s.c.WaitForSync(ctx)
}

// Revision returns the store revision the cache reflects.
func (s *CacheSource[S, T]) Revision() int64 { return s.c.Revision() }

// WaitFor waits until the cache reflects revision (see cache.Cache.WaitFor).
func (s *CacheSource[S, T]) WaitFor(ctx context.Context, revision int64) error {
	return s.c.WaitFor(ctx, revision)
}

// Keys yields every object name the source has seen and not seen deleted;
// only FromCache sources list keys (the others yield nothing).
func (s *CacheSource[S, T]) Keys() iter.Seq[string] {
	return func(yield func(string) bool) {
		if !s.primary {
			return
		}
		s.mu.Lock()
		buf := s.buf[:0]
		for n := range s.names {
			buf = append(buf, n)
		}
		s.buf = nil // owned by this iteration until it ends
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.buf = buf[:0]
			s.mu.Unlock()
		}()
		for _, n := range buf {
			if !yield(n) {
				return
			}
		}
	}
}

// handle is the cache handler: h(nil, obj) added, h(old, new) modified,
// h(old, nil) deleted.
func (s *CacheSource[S, T]) handle(old, new *store.Object[S, T]) {
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
	// The name set and the hint change together under s.mu, and Keys
	// snapshots under it too: a term that starts while this change is
	// being handled sees the key either in its snapshot or as a hint, and
	// its workers start only after the snapshot is queued, so the key runs
	// once, not twice.
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.primary {
		if typ == store.Deleted {
			delete(s.names, obj.Meta.Name)
		} else {
			s.names[obj.Meta.Name] = struct{}{}
		}
	}

	hint := true
	if typ == store.Modified {
		hint = s.judge(ref, old, new)
	}
	if s.primary && ref.obs != nil {
		if typ == store.Deleted {
			ref.obs.forgetKey(obj.Meta.Name)
		} else {
			c, _ := GetCondition(obj.Conditions, Stalled)
			ref.obs.observeState(obj.Meta.Name, obj.Meta.Generation, readyGeneration(obj.Conditions), c)
		}
	}
	if !hint {
		return
	}
	keys := s.mapKeys(obj)
	if old != nil && new != nil && !s.primary {
		keys = append(keys, s.mapKeys(old)...)
		slices.Sort(keys)
		keys = slices.Compact(keys)
	}
	for _, k := range keys {
		ref.sink.Add(k)
	}
}

// judge feeds the oscillation detector and decides whether a modification
// is a hint.
//
// The ChangeFunc (field-level by default, tens of µs) runs at most once per
// event, and only when its answer matters: a cheap section diff first settles
// events that change nothing a Loop judges or only Stalled, and a secondary
// source (FromOwned, FromCacheMapped) hints another writer's change without
// judging it.
func (s *CacheSource[S, T]) judge(ref *sinkRef, old, new *store.Object[S, T]) bool {
	writer := new.Meta.LastWrite.Manager
	self, loopSelf := "", ""
	if ref.obs != nil {
		self, loopSelf = ref.obs.manager(), ref.obs.loopManager()
	}
	if self == "" {
		return true // no manager to judge against: every change is a hint
	}
	judgeAs := self
	if writer == loopSelf {
		judgeAs = loopSelf
	}
	sections := sectionDiff(old, new)
	if len(sections) == 0 {
		// Bookkeeping only: an own write (not a hint) when ours.
		return writer != judgeAs
	}
	if !slices.ContainsFunc(sections, func(p string) bool { return p != stalledPath }) {
		// Stalled is the Loops' report, never an input: a change to it
		// alone (by any Loop) is not a hint, nor a write that counts.
		return false
	}
	if writer != judgeAs && !s.primary {
		return true // another actor's change: a hint, whatever its paths
	}
	owned, foreign := s.changes(old, new, judgeAs)
	if s.primary && writer != loopSelf && len(owned)+len(foreign) > 0 {
		// judgeAs is self here: the paths are from self's point of view.
		ref.obs.observeWrite(new.Meta.Name, ObservedWrite{Self: writer == self, Owned: owned, Foreign: foreign})
	}
	changed := append(owned, foreign...)
	if len(changed) > 0 && !slices.ContainsFunc(changed, func(p string) bool { return !isStalledPath(p) }) {
		return false
	}
	own := func(p string) bool { return slices.Contains(owned, p) }
	return !isOwnWrite(judgeAs, store.Modified, writer, changed, own)
}

// readyGeneration returns the ObservedGeneration of a Ready=True condition,
// or 0.
func readyGeneration(conds []store.Condition) int64 {
	if c, ok := GetCondition(conds, Ready); ok && c.Status == store.ConditionTrue {
		return max(c.ObservedGeneration, 1)
	}
	return 0
}

// SectionChanges is the default ChangeFunc. It reports changes by section
// of the object, as diff.Path strings:
//
//	.metadata.labels  .metadata.annotations  .metadata.owners  .metadata.finalizers
//	.metadata.deletionRequested  .spec  .status  .conditions[type="T"]
//
// (.spec when the generation moved, one path per changed condition type).
//
// Ownership is attributed to the writer of the change (Meta.LastWrite):
// every changed path is owned by the manager that wrote it. This is exact
// for single writes, which is what the watch delivers; a relist that merges
// writes by several actors into one change is attributed to the last
// writer, so a merged change of another actor can be missed until resync.
// Use WithChanges with a field-level judge built on the object's managed
// fields to remove that limit.
func SectionChanges[S, T any](old, new *store.Object[S, T], manager string) (owned, foreign []string) {
	changed := sectionDiff(old, new)
	if new.Meta.LastWrite.Manager == manager {
		return changed, nil
	}
	return nil, changed
}

func sectionDiff[S, T any](old, new *store.Object[S, T]) []string {
	var out []string
	om, nm := &old.Meta, &new.Meta
	if !mapsEqual(om.Labels, nm.Labels) {
		out = append(out, ".metadata.labels")
	}
	if !mapsEqual(om.Annotations, nm.Annotations) {
		out = append(out, ".metadata.annotations")
	}
	if !slices.Equal(om.Owners, nm.Owners) {
		out = append(out, ".metadata.owners")
	}
	if !slices.Equal(om.Finalizers, nm.Finalizers) {
		out = append(out, ".metadata.finalizers")
	}
	if om.DeletionRequested != nm.DeletionRequested {
		out = append(out, ".metadata.deletionRequested")
	}
	if om.Generation != nm.Generation {
		out = append(out, ".spec")
	}
	if !reflect.DeepEqual(old.Status, new.Status) {
		out = append(out, ".status")
	}
	for _, c := range new.Conditions {
		if o, ok := GetCondition(old.Conditions, c.Type); !ok || !conditionEqual(o, c) {
			out = append(out, conditionPath(c.Type))
		}
	}
	for _, o := range old.Conditions {
		if _, ok := GetCondition(new.Conditions, o.Type); !ok {
			out = append(out, conditionPath(o.Type))
		}
	}
	return out
}

var stalledPath = conditionPath(Stalled)

// isStalledPath reports whether p is the Stalled condition or a field of it
// (SectionChanges reports the former, FieldChanges the latter).
func isStalledPath(p string) bool {
	return strings.HasPrefix(p, stalledPath) && (len(p) == len(stalledPath) || p[len(stalledPath)] == '.')
}

func conditionPath(t string) string { return ".conditions[type=" + strconv.Quote(t) + "]" }

func conditionEqual(a, b store.Condition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message &&
		a.ObservedGeneration == b.ObservedGeneration && a.LastTransitionTime.Equal(b.LastTransitionTime)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// fieldChanges is st.FieldChanges as a ChangeFunc, its paths shown in the
// diff.Path notation.
func fieldChanges[S, T any](st *store.Store[S, T]) ChangeFunc[S, T] {
	return func(old, new *store.Object[S, T], manager string) (owned, foreign []string) {
		o, f := st.FieldChanges(old, new, manager)
		return pathStrings(o), pathStrings(f)
	}
}

func pathStrings(ps []diff.Path) []string {
	if len(ps) == 0 {
		return nil
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// WithStore is the usual way to point a Loop[string] at a kind: its cache
// is the Loop's primary source (FromCache) and its Stalled condition is
// written through StoreStatus. The source judges own writes and oscillation
// field by field with st.FieldChanges (from Meta.Managed), so oscillation
// reports name the flipping fields (.spec.replicas) and another actor's
// change merged into an event of ours still triggers; a WithChanges in opts
// overrides it.
func WithStore[S, T any](c *cache.Cache[S, T], st *store.Store[S, T], opts ...CacheSourceOption[S, T]) Option {
	return optionFunc(func(cfg *config) error {
		if c == nil || st == nil {
			return invalid("WithStore needs a cache and a store")
		}
		opts = append([]CacheSourceOption[S, T]{WithChanges(fieldChanges(st))}, opts...)
		cfg.sources = append(cfg.sources, Source[string](FromCache(c, opts...)))
		cfg.statusWriter = StoreStatus(c, st)
		return nil
	})
}
