package cache

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/store"
)

// IndexOwnerUID names the index every Cache has: it maps the UID of each
// owner in Meta.Owners to the objects it owns, so ByIndex(IndexOwnerUID, uid)
// lists an object's dependents.
const IndexOwnerUID = "ownerUID"

// IndexFunc computes the values under which an index files an object. It
// must depend only on the object, must not modify it, and must not call the
// Cache (it runs while the Cache is locked). Duplicate values count once. A
// call that panics is reported (see Cache.Panics) and files its object
// under no value.
type IndexFunc[S, T any] func(obj *store.Object[S, T]) []string

// LabelIndexName is the name of the index AddLabelIndex(key) creates.
func LabelIndexName(key string) string { return "label:" + key }

// AddIndex adds an index called name over fn and files every cached object
// in it; later changes keep it current. It may be called before or after
// Run. A name already in use, an empty name or a nil fn gives an error
// wrapping ErrInvalid.
func (c *Cache[S, T]) AddIndex(name string, fn IndexFunc[S, T]) error {
	if name == "" || fn == nil {
		return fmt.Errorf("%w: an index needs a name and a function", store.ErrInvalid)
	}
	c.mu.Lock()
	if _, ok := c.indexes[name]; ok {
		c.mu.Unlock()
		return fmt.Errorf("%w: the cache already has an index %q", store.ErrInvalid, name)
	}
	ix := newIndex(fn)
	var panics []indexPanic
	for obj, o := range c.items {
		if p := ix.update(obj, nil, o); p != nil {
			panics = append(panics, indexPanic{index: name, object: obj, p: p})
		}
	}
	ix.name = name
	c.indexes[name] = ix
	c.ixList = append(c.ixList, ix)
	c.mu.Unlock()
	c.reportIndexPanics(panics)
	return nil
}

// AddLabelIndex adds the index LabelIndexName(key), which files each object
// under the value of its label key (objects without that label are not
// filed), and makes ByLabel for that key a lookup instead of a scan.
func (c *Cache[S, T]) AddLabelIndex(key string) error {
	return c.AddIndex(LabelIndexName(key), func(obj *store.Object[S, T]) []string {
		if v, ok := obj.Meta.Labels[key]; ok {
			return []string{v}
		}
		return nil
	})
}

// ByIndex returns the cached objects that index name files under value, in
// name order; nil when there are none or there is no such index. The objects
// are shared and must not be modified.
func (c *Cache[S, T]) ByIndex(name, value string) []*store.Object[S, T] {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ix, ok := c.indexes[name]
	if !ok {
		return nil
	}
	return c.collectLocked(ix.m[value])
}

// ByLabel returns the cached objects whose label key has value, in name
// order. It uses the label index for key if AddLabelIndex added one, and
// scans every object otherwise.
func (c *Cache[S, T]) ByLabel(key, value string) []*store.Object[S, T] {
	c.mu.RLock()
	ix, ok := c.indexes[LabelIndexName(key)]
	if ok {
		defer c.mu.RUnlock()
		return c.collectLocked(ix.m[value])
	}
	var out []*store.Object[S, T]
	for _, obj := range c.items {
		if v, ok := obj.Meta.Labels[key]; ok && v == value {
			out = append(out, obj)
		}
	}
	c.mu.RUnlock()
	sortByName(out)
	return out
}

func (c *Cache[S, T]) collectLocked(set nameSet) []*store.Object[S, T] {
	if set.len() == 0 {
		return nil
	}
	out := make([]*store.Object[S, T], 0, set.len())
	set.each(func(name string) { out = append(out, c.items[name]) })
	sortByName(out)
	return out
}

// reindexLocked moves name from old's index values to new's in every
// index; old or new is nil for an addition or a deletion. It appends the
// panics of index functions to panics, for reportIndexPanics once c.mu is
// released.
//
// It walks the indexes' list (c.ixList), not their map, and skips the
// owner index (IndexOwnerUID) for a modification that keeps Meta.Owners,
// whose values it cannot move: a change of spec or status, nearly every
// event (BenchmarkFollowSpecAndStatus, callgrind: 102.9k to 101.8k
// instructions per op of two events).
func (c *Cache[S, T]) reindexLocked(name string, old, new *store.Object[S, T], panics []indexPanic) []indexPanic {
	for _, ix := range c.ixList {
		if ix.owners && old != nil && new != nil && slices.Equal(old.Meta.Owners, new.Meta.Owners) {
			continue
		}
		if p := ix.update(name, old, new); p != nil {
			panics = append(panics, indexPanic{index: ix.name, object: name, p: p})
		}
	}
	return panics
}

// indexPanic is a panic of an index function, reported after the Cache's
// lock is released.
type indexPanic struct {
	index, object string
	p             *guard.Panic
}

func (c *Cache[S, T]) reportIndexPanics(panics []indexPanic) {
	for _, ip := range panics {
		c.reportPanic("index function", ip.p, true, slog.String("index", ip.index), slog.String("object", ip.object))
	}
}

func ownerUIDs[S, T any](obj *store.Object[S, T]) []string {
	if len(obj.Meta.Owners) == 0 {
		return nil
	}
	out := make([]string, len(obj.Meta.Owners))
	for i, o := range obj.Meta.Owners {
		out[i] = o.UID
	}
	return out
}

// index files object names under the values fn gives.
type index[S, T any] struct {
	name string
	fn   IndexFunc[S, T]
	m    map[string]nameSet
	// owners: fn is ownerUIDs (IndexOwnerUID), whose values follow
	// Meta.Owners alone.
	owners bool
}

func newIndex[S, T any](fn IndexFunc[S, T]) *index[S, T] {
	return &index[S, T]{fn: fn, m: make(map[string]nameSet)}
}

// update moves name from the values fn gives for old to those it gives
// for new. When fn panics on old, name is taken out of every value (where
// fn filed it is unknown); when it panics on new, name is filed under none.
// It returns the first panic.
func (ix *index[S, T]) update(name string, old, new *store.Object[S, T]) (p *guard.Panic) {
	var before, after []string
	if old != nil {
		if before, p = ix.values(old); p != nil {
			ix.removeEverywhere(name)
		}
	}
	if new != nil {
		var pn *guard.Panic
		if after, pn = ix.values(new); p == nil {
			p = pn
		}
	}
	if slices.Equal(before, after) {
		return p
	}
	for _, v := range before {
		if !slices.Contains(after, v) {
			s := ix.m[v]
			if s.remove(name); s.len() == 0 {
				delete(ix.m, v)
			} else {
				ix.m[v] = s
			}
		}
	}
	for _, v := range after {
		if !slices.Contains(before, v) {
			s := ix.m[v]
			s.add(name)
			ix.m[v] = s
		}
	}
	return p
}

// values calls fn under recovery.
func (ix *index[S, T]) values(obj *store.Object[S, T]) (vals []string, p *guard.Panic) {
	defer guard.Catch(&p)
	return ix.fn(obj), nil
}

// removeEverywhere takes name out of every value: a scan of the index, for
// the rare fn that panicked on the object name was filed as.
func (ix *index[S, T]) removeEverywhere(name string) {
	for v, s := range ix.m {
		if s.remove(name); s.len() == 0 {
			delete(ix.m, v)
		} else {
			ix.m[v] = s
		}
	}
}

// smallSet is the size up to which a nameSet is a slice. Most index values
// (an owner's UID, a rare label) file a handful of objects, and a short
// slice costs a fraction of a map.
const smallSet = 16

// nameSet is a set of object names: a slice while small, a map once large.
type nameSet struct {
	list []string
	set  map[string]struct{}
}

func (s *nameSet) len() int {
	if s.set != nil {
		return len(s.set)
	}
	return len(s.list)
}

func (s *nameSet) add(name string) {
	switch {
	case s.set != nil:
		s.set[name] = struct{}{}
	case slices.Contains(s.list, name):
	case len(s.list) < smallSet:
		s.list = append(s.list, name)
	default:
		s.set = make(map[string]struct{}, 2*smallSet)
		for _, n := range s.list {
			s.set[n] = struct{}{}
		}
		s.set[name] = struct{}{}
		s.list = nil
	}
}

func (s *nameSet) remove(name string) {
	if s.set != nil {
		delete(s.set, name)
		return
	}
	if i := slices.Index(s.list, name); i >= 0 {
		last := len(s.list) - 1
		s.list[i] = s.list[last]
		s.list[last] = ""
		s.list = s.list[:last]
	}
}

func (s *nameSet) each(f func(string)) {
	if s.set != nil {
		for n := range s.set {
			f(n)
		}
		return
	}
	for _, n := range s.list {
		f(n)
	}
}
