package ownership

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Apply merges config into live on behalf of manager, with the semantics of
// Kubernetes server-side apply, and returns the new object and ownership.
//
// live is the stored object (nil when it does not exist yet); config holds
// the fields the manager wants, as a tree or a typed value (see ToTree).
// managed is live's ownership record. Apply:
//
//   - sets manager's Apply entry to exactly the fields present in config
//     (not null; an empty set or keyed list claims nothing and is written
//     only where live has none, and a map whose fields claim nothing is
//     claimed as an empty map is);
//   - writes config's values; values equal to live's (numbers by value)
//     change nothing and are then owned by every manager applying them;
//   - removes the fields manager applied last time but not now, unless
//     another entry still owns them. A removed list item goes with its
//     subtree, including fields other entries own inside it, unless
//     another entry owns the item itself; a map or list that this
//     empties goes too, unless another entry owns it;
//   - fails with *ConflictError, listing (manager, path) pairs, when it
//     would change a field another manager owns, and writes nothing. A
//     type change of a map conflicts, at the map, with the Apply entries
//     owning fields inside it and an Update entry that created it; an
//     Update entry's fields inside a map it did not create go with the
//     map (as in structured-merge-diff). With
//     Force it takes exactly those fields from their owners instead (an
//     owner left with nothing inside a map the object keeps owns that
//     map). The
//     manager's own Update entry never conflicts; it loses the fields the
//     apply changes.
//
// Apply never modifies live, config or managed. Result.Object shares
// unchanged subtrees with live and copies what it takes from config. When
// nothing changes, Result.Object is live itself and Result.Changed is false.
// Bad input (an empty manager, a value that is not a tree node, a keyed
// list item without its keys, duplicate items in a keyed list or set)
// returns an error and a zero Result. So does a config, or a part of live
// the apply compares with it, nested deeper than MaxDepth maps and lists,
// as one that holds itself is: that error wraps ErrTooDeep and names the
// path where the walk stopped.
func Apply(live, config any, manager string, managed Managed, opts ...Option) (Result, error) {
	cfg := collect(opts)
	if manager == "" {
		return Result{}, fmt.Errorf("ownership: Apply needs a manager name")
	}
	liveTree, err := asTree(live)
	if err != nil {
		return Result{}, err
	}
	configTree, err := asTree(config)
	if err != nil {
		return Result{}, err
	}
	if cfg.schema == nil {
		if cfg.schema, err = typedSchema(config); err != nil {
			return Result{}, err
		}
	}
	applyIdx := managed.Find(manager, OpApply)
	if applyIdx >= 0 && allNonEmpty(managed) {
		if changes, ok := reapplied(liveTree, configTree, cfg.schema.top(), managed[applyIdx].Set, true); ok {
			if changes.n == 0 {
				// What the full walk would return: live itself and an equal record.
				return Result{Object: liveTree, Managed: slices.Clone(managed)}, nil
			}
			if r, ok := applyChanges(liveTree, managed, applyIdx, &changes); ok {
				return r, nil
			}
		}
	}
	return applyMerge(liveTree, configTree, manager, managed, cfg, applyIdx)
}

// applyMerge is Apply's full walk (apply_walk.go), for any change:
// manager's Apply entry is managed[applyIdx], or none when applyIdx < 0.
func applyMerge(liveTree, configTree map[string]any, manager string, managed Managed, cfg options, applyIdx int) (Result, error) {
	var w applyWalk
	w.init(managed, manager, applyIdx)
	defer w.release()
	root := at{live: liveTree, inLive: liveTree != nil, sch: cfg.schema.top(), built: 0, last: w.last.root(), frame: 0}
	out, changed, err := w.mergeMap(root, configTree)
	if err != nil {
		return Result{}, err
	}
	if len(w.conflicts) > 0 && !cfg.force {
		return Result{}, &ConflictError{Conflicts: sortConflicts(w.conflicts)}
	}
	om := liveTree
	if changed {
		om = out.(map[string]any)
	}
	if om == nil {
		om = map[string]any{}
		changed = true
	}
	newManaged := w.newManaged(applyIdx, w.set(), om, cfg.schema.top())
	return Result{
		Object:        om,
		Managed:       newManaged,
		ObjectChanged: changed,
		Changed:       changed || !newManaged.Equal(managed),
	}, nil
}

// init sets up the walk for manager, whose Apply entry is
// managed[applyIdx] (none when applyIdx < 0). It works in place: the walk
// stays on its caller's stack.
func (w *applyWalk) init(managed Managed, manager string, applyIdx int) {
	w.managed, w.manager = managed, manager
	// Size the new set like the largest existing one: appliers of one
	// object tend to own similar amounts. The first applier of an object
	// starts small (the set is kept, with its capacity, in the record), and
	// the set grows as the walk needs.
	size := 16
	for _, e := range managed {
		if e.Set != nil && len(e.Set.nodes)+16 > size {
			size = len(e.Set.nodes) + 16
		}
	}
	if applyIdx >= 0 {
		// A nil Set (a record built by hand) owns nothing, as it does in
		// every other entry.
		w.last = managed[applyIdx].Set
		if w.last != nil {
			size = len(w.last.nodes) + 16
		}
	}
	w.nodes = make([]node, 1, size)
	nOthers := len(managed)
	if applyIdx >= 0 {
		nOthers--
	}
	w.others, w.entries = make([]*Set, 0, nOthers), make([]int, 0, nOthers)
	for i, e := range managed {
		if i != applyIdx {
			w.others = append(w.others, e.Set)
			w.entries = append(w.entries, i)
		}
	}
	// The root frame: every other entry at its root.
	w.ost = make([]int32, nOthers, 16*(nOthers+1))
	for i, s := range w.others {
		w.ost[i] = s.root()
	}
	// Fast path (BenchmarkApplySecondManager: ≤ 30 µs, ≤ 60 allocs): the
	// walk's stacks come from one allocation, reused from applyScratches
	// (BenchmarkApplyFirstStatusField: 1.9 KB of its 5.2 KB before).
	w.scratch = applyScratches.Get().(*applyScratch)
	w.keys, w.items, w.path, w.keybuf = w.scratch.keys[:0], w.scratch.items[:0], w.scratch.path[:0], w.scratch.keybuf[:0]
	w.cur = w.scratch.cur[:0]
}

// applyScratches keeps the walks' stacks for reuse.
var applyScratches = sync.Pool{New: func() any { return new(applyScratch) }}

// release returns the walk's stacks to applyScratches, emptied: the names
// and values they held would keep the trees they came from alive.
func (w *applyWalk) release() {
	*w.scratch = applyScratch{}
	applyScratches.Put(w.scratch)
	w.scratch, w.keys, w.items, w.path, w.keybuf, w.cur = nil, nil, nil, nil, nil, nil
}

// set returns the applier's new set: the nodes built, without the root's
// membership and the nodes that claim nothing.
func (w *applyWalk) set() *Set {
	w.nodes[0].member = false // the root is never owned
	if w.dead {
		w.nodes = compact(w.nodes)
	}
	if len(w.nodes) == 1 {
		return &Set{}
	}
	return &Set{nodes: w.nodes}
}

// compact lays nodes out again without the nodes that are not members and
// have no member below (maps that claimed nothing).
func compact(nodes []node) []node {
	alive := make([]bool, len(nodes))
	var mark func(i int32) bool
	mark = func(i int32) bool {
		n := nodes[i]
		alive[i] = n.member
		for c := n.lo; c < n.hi; c++ {
			if mark(c) {
				alive[i] = true
			}
		}
		return alive[i]
	}
	if !mark(0) {
		return nodes[:1]
	}
	out := make([]node, 1, len(nodes))
	out[0] = nodes[0]
	var expand func(k, src int32)
	expand = func(k, src int32) {
		lo := int32(len(out))
		n := nodes[src]
		for c := n.lo; c < n.hi; c++ {
			if alive[c] {
				out = append(out, nodes[c])
				out[len(out)-1].hi = c // the source, until expanded
			}
		}
		hi := int32(len(out))
		if lo == hi {
			lo, hi = 0, 0 // leaves keep the empty block at 0
		}
		out[k].lo, out[k].hi = lo, hi
		for c := lo; c < hi; c++ {
			expand(c, out[c].hi)
		}
	}
	expand(0, 0)
	return out
}

// sortConflicts sorts conflicts by path, manager and operation, and drops
// repeats: a type change reports the fields below it, which the walk may
// report again.
func sortConflicts(cs []Conflict) []Conflict {
	slices.SortFunc(cs, func(a, b Conflict) int {
		if c := a.Path.Compare(b.Path); c != 0 {
			return c
		}
		if c := strings.Compare(a.Manager, b.Manager); c != 0 {
			return c
		}
		return strings.Compare(string(a.Operation), string(b.Operation))
	})
	return slices.CompactFunc(cs, func(a, b Conflict) bool {
		return a.Manager == b.Manager && a.Operation == b.Operation && a.Path.Equal(b.Path)
	})
}

// newManaged assembles the ownership record after a successful apply:
// manager's Apply entry becomes set, every other entry loses what the walk
// took from it (keeping the maps it emptied for them, see keepEmptied),
// and empty entries go. obj is the new object, sch its schema.
func (w *applyWalk) newManaged(applyIdx int, set *Set, obj map[string]any, sch *snode) Managed {
	out := make(Managed, 0, len(w.managed)+1)
	for i, e := range w.managed {
		if i == applyIdx {
			if !set.Empty() {
				out = append(out, Entry{Manager: w.manager, Operation: OpApply, Set: set})
			}
			continue
		}
		s := e.Set
		if st := w.stripsOf(i); st != nil {
			if e.Operation == OpApply {
				s = keepEmptied(s, s.Without(st), obj, sch)
			} else {
				s = s.Without(st)
			}
		}
		if !s.Empty() {
			out = append(out, e)
			out[len(out)-1].Set = s
		}
	}
	if applyIdx < 0 && !set.Empty() {
		out = append(out, Entry{Manager: w.manager, Operation: OpApply, Set: set})
	}
	return out
}

// stripsOf returns the set of paths taken from entry i, or nil.
func (w *applyWalk) stripsOf(i int) *Set {
	var b builder
	for _, st := range w.strips {
		if st.entry != i {
			continue
		}
		if b.nodes == nil {
			b.reset()
		}
		at := int32(0)
		for _, e := range st.path {
			at = b.find(at, e.kind, e.name)
		}
		b.nodes[at].member = true
	}
	if b.nodes == nil {
		return nil
	}
	s, _ := b.freeze()
	return s
}

// allNonEmpty reports whether every entry owns something: Apply drops
// empty entries, which is a change.
func allNonEmpty(m Managed) bool {
	for _, e := range m {
		if e.Set.Empty() {
			return false
		}
	}
	return true
}

// asTree accepts a tree root, nil, or a typed value to convert.
func asTree(v any) (map[string]any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return x, nil
	}
	return ToTree(v)
}

// typedSchema derives the schema of a typed config; trees have none.
func typedSchema(v any) (*Schema, error) {
	switch v.(type) {
	case nil, map[string]any:
		return nil, nil
	}
	return SchemaFor(v)
}
