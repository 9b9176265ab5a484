package ownership

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Apply merges config into live on behalf of manager, with the semantics of
// Kubernetes server-side apply, and returns the new object and ownership.
//
// live is the stored object (nil when it does not exist yet); config holds
// the fields the manager wants, as a tree or a typed value (see ToTree).
// managed is live's ownership record. Apply:
//
//   - sets manager's Apply entry to exactly the fields present in config;
//   - writes config's values; values equal to live's (numbers by value)
//     change nothing and are then owned by every manager applying them;
//   - removes the fields manager applied last time but not now, unless
//     another entry still owns them (a removed list item or map key goes
//     with its subtree);
//   - fails with *ConflictError, listing (manager, path) pairs, when it
//     would change a field another manager owns (including a type change
//     below which another manager owns fields), and writes nothing. With
//     Force it takes exactly those fields from their owners instead. The
//     manager's own Update entry never conflicts; it loses the fields the
//     apply changes.
//
// Apply never modifies live, config or managed. Result.Object shares
// unchanged subtrees with live and copies what it takes from config. When
// nothing changes, Result.Object is live itself and Result.Changed is false.
// Bad input (an empty manager, a value that is not a tree node, a keyed
// list item without its keys, duplicate items in a keyed list or set)
// returns an error.
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
	if applyIdx >= 0 && allNonEmpty(managed) && isNoop(liveTree, configTree, cfg.schema.top(), managed[applyIdx].Set) {
		// What the full walk would return: live itself and an equal record.
		return Result{Object: liveTree, Managed: slices.Clone(managed)}, nil
	}
	return applyMerge(liveTree, configTree, manager, managed, cfg, applyIdx)
}

// applyMerge is Apply's full walk, for any change.
func applyMerge(liveTree, configTree map[string]any, manager string, managed Managed, cfg options, applyIdx int) (Result, error) {
	var w applyWalk
	// Size the new set like the largest existing one: appliers of one
	// object tend to own similar amounts.
	size := 64
	for _, e := range managed {
		if e.Set != nil && len(e.Set.nodes)+16 > size {
			size = len(e.Set.nodes) + 16
		}
	}
	if applyIdx >= 0 {
		w.last = managed[applyIdx].Set
		size = len(w.last.nodes) + 16
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
	w.ost = make([]int32, nOthers, 16*(nOthers+1))
	for i, s := range w.others {
		w.ost[i] = s.root()
	}
	scratch := new(applyScratch)
	w.keys, w.items, w.path, w.keybuf = scratch.keys[:0], scratch.items[:0], scratch.path[:0], scratch.keybuf[:0]
	w.cur = scratch.cur[:0]
	w.managed = managed
	w.manager = manager
	out, changed, err := w.mergeMap(liveTree, configTree, cfg.schema.top(), 0, w.last.root(), 0)
	if err != nil {
		return Result{}, err
	}
	w.nodes[0].member = false
	set := &Set{}
	if len(w.nodes) > 1 {
		set.nodes = w.nodes
	}
	if len(w.conflicts) > 0 && !cfg.force {
		slices.SortFunc(w.conflicts, func(a, b Conflict) int {
			if c := a.Path.Compare(b.Path); c != 0 {
				return c
			}
			if a.Manager < b.Manager {
				return -1
			}
			if a.Manager > b.Manager {
				return 1
			}
			if a.Operation < b.Operation {
				return -1
			}
			if a.Operation > b.Operation {
				return 1
			}
			return 0
		})
		// A type change reports the fields below it, which the walk below
		// may report again.
		w.conflicts = slices.CompactFunc(w.conflicts, func(a, b Conflict) bool {
			return a.Manager == b.Manager && a.Operation == b.Operation && a.Path.Equal(b.Path)
		})
		return Result{}, &ConflictError{Conflicts: w.conflicts}
	}
	var om map[string]any
	if changed {
		om = out.(map[string]any)
	} else {
		om = liveTree
	}
	if om == nil {
		om = map[string]any{}
		changed = true
	}
	newManaged := w.newManaged(applyIdx, set)
	return Result{
		Object:        om,
		Managed:       newManaged,
		ObjectChanged: changed,
		Changed:       changed || !newManaged.Equal(managed),
	}, nil
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

// applyWalk merges config into live while building the applier's new set
// (b), pruning what it applied last time (last), and checking every change
// against the other entries (others, walked in parallel: ost holds one
// frame of node indexes per depth).
type applyWalk struct {
	nodes     []node // the new set, built in its final layout
	last      *Set
	others    []*Set
	entries   []int // index in managed of others[i]
	ost       []int32
	path      []pelem
	conflicts []Conflict
	strips    []strip
	keybuf    []byte
	keys      []keyValue // scratch stack of sorted map entries
	cur       []int32    // scratch stack of cursors (see cursors)
	items     []itemRef  // scratch stack of sorted list items
	managed   Managed
	manager   string
}

// applyScratch holds the walk's stacks in one allocation; they grow past
// it only for unusually wide or deep objects.
type applyScratch struct {
	keys   [32]keyValue
	items  [16]itemRef
	cur    [16]int32
	path   [16]pelem
	keybuf [64]byte
}

// keyValue is a config map entry.
type keyValue struct {
	k string
	v any
}

// sortKeyValues sorts map entries by key: by insertion for the few
// entries of a typical map, which beats a generic sort's indirect calls.
func sortKeyValues(kv []keyValue) {
	if len(kv) > 12 {
		slices.SortFunc(kv, func(a, b keyValue) int { return strings.Compare(a.k, b.k) })
		return
	}
	for i := 1; i < len(kv); i++ {
		for j := i; j > 0 && kv[j].k < kv[j-1].k; j-- {
			kv[j], kv[j-1] = kv[j-1], kv[j]
		}
	}
}

// itemRef is a list item by identity and config position.
type itemRef struct {
	name string
	idx  int
}

type pelem struct {
	kind uint8
	name string
}

// strip is a subtree taken from an entry (by force, or from the applier's
// own Update entry).
type strip struct {
	entry int
	path  []pelem
}

// value merges config value c (not null) into live value l at the current
// path. nb is the builder node of this path in the new set, p the node in
// the last applied set. It returns the merged value and whether it differs
// from l.
func (w *applyWalk) value(l any, lok bool, c any, sch *snode, nb, p int32, off int) (any, bool, error) {
	switch cv := c.(type) {
	case map[string]any:
		if sch.strategy() == stratAtomic {
			return w.leaf(l, lok, c, nb, off)
		}
		lm, isMap := l.(map[string]any)
		if lok && !isMap {
			w.changedHere(off)
		}
		return w.mergeMap(lm, cv, sch, nb, p, off)
	case []any:
		switch sch.strategy() {
		case stratSet:
			return w.mergeSet(l, lok, cv, nb, p, off)
		case stratKeyed:
			return w.mergeKeyed(l, lok, cv, sch, nb, p, off)
		}
		return w.leaf(l, lok, c, nb, off)
	}
	if kindOf(c) != kindScalar {
		return nil, false, w.errorf("unsupported value of type %T", c)
	}
	return w.leaf(l, lok, c, nb, off)
}

// leaf handles a value owned whole: a scalar, an atomic list or map.
func (w *applyWalk) leaf(l any, lok bool, c any, nb int32, off int) (any, bool, error) {
	w.nodes[nb].member = true
	if lok && deepEqual(l, c) {
		return l, false, nil
	}
	if err := validTree(c); err != nil {
		return nil, false, w.errorf("%v", err)
	}
	w.changedHere(off)
	return deepCopy(c), true, nil
}

// validTree checks that v holds only tree node types.
func validTree(v any) error {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if err := validTree(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := validTree(e); err != nil {
				return err
			}
		}
	default:
		if kindOf(v) == kindInvalid {
			return fmt.Errorf("unsupported value of type %T", v)
		}
	}
	return nil
}

// mergeMap merges a granular map. lm is nil when live has no map here.
// The new set's children of nb are reserved as one sorted block.
func (w *applyWalk) mergeMap(lm, cm map[string]any, sch *snode, nb, p int32, off int) (any, bool, error) {
	var out map[string]any
	mark := len(w.keys)
	if !w.keysAsIn(cm, w.last, p) && !w.keysAsOthers(cm, off) {
		for k, cv := range cm {
			if cv != nil {
				w.keys = append(w.keys, keyValue{k, cv})
			}
		}
		sortKeyValues(w.keys[mark:])
	}
	cnt := len(w.keys) - mark
	if cnt == 0 {
		w.nodes[nb].member = true
	} else {
		lo := int32(len(w.nodes))
		w.nodes = append(w.nodes, make([]node, cnt)...)
		w.nodes[nb].lo, w.nodes[nb].hi = lo, lo+int32(cnt)
		// The last applied set's children are sorted too: walk them with a
		// cursor instead of searching.
		var pc, phi int32
		if p >= 0 {
			pc, phi = w.last.nodes[p].lo, w.last.nodes[p].hi
		}
		cmark := w.cursors(off)
		for j := 0; j < cnt; j++ {
			kv := w.keys[mark+j]
			k := kv.k
			cn := lo + int32(j)
			w.nodes[cn].kind, w.nodes[cn].name = elemField, k
			pk := int32(-1)
			for pc < phi && cmpElem(w.last.nodes[pc].kind, w.last.nodes[pc].name, elemField, k) < 0 {
				pc++
			}
			if pc < phi && w.last.nodes[pc].kind == elemField && w.last.nodes[pc].name == k {
				pk = pc
			}
			off2 := w.descendSorted(off, cmark, elemField, k)
			lv, lok := lm[k]
			v, ch, err := w.value(lv, lok, kv.v, sch.field(k), cn, pk, off2)
			w.ascend(off2)
			if err != nil {
				w.keys, w.cur = w.keys[:mark], w.cur[:cmark]
				return nil, false, err
			}
			if ch {
				if out == nil {
					out = cloneMap(lm, cnt)
				}
				out[k] = v
			}
		}
		w.cur = w.cur[:cmark]
	}
	w.keys = w.keys[:mark]
	if p >= 0 && lm != nil {
		last := w.last.nodes
		for pc := last[p].lo; pc < last[p].hi; pc++ {
			pn := &last[pc]
			if pn.kind != elemField {
				continue
			}
			if cv := cm[pn.name]; cv != nil {
				continue
			}
			lv, lok := lm[pn.name]
			if !lok {
				continue
			}
			off2 := w.descend(off, elemField, pn.name)
			if pn.member && !w.owned(off2) {
				if out == nil {
					out = cloneMap(lm, cnt)
				}
				delete(out, pn.name)
			} else if pn.lo < pn.hi {
				if v, ch := w.prune(lv, sch.field(pn.name), pc, off2, nil); ch {
					if out == nil {
						out = cloneMap(lm, cnt)
					}
					if emptyMap(v) && !w.owned(off2) {
						delete(out, pn.name)
					} else {
						out[pn.name] = v
					}
				}
			}
			w.ascend(off2)
		}
	}
	if out == nil {
		if lm == nil {
			return map[string]any{}, true, nil
		}
		return lm, false, nil
	}
	return out, true, nil
}

func cloneMap(m map[string]any, extra int) map[string]any {
	if m == nil {
		return make(map[string]any, extra)
	}
	// maps.Clone copies the table whole, far faster than reinserting.
	return maps.Clone(m)
}

// keysAsIn pushes cm's entries in sorted order when they are exactly the
// fields set s holds at node i: a re-apply finds them in the manager's last
// set, a manager applying fields another one applied finds them there. It
// then needs neither a map iteration nor a sort.
func (w *applyWalk) keysAsIn(cm map[string]any, s *Set, i int32) bool {
	if i < 0 {
		return false
	}
	lo, hi := s.nodes[i].lo, s.nodes[i].hi
	if int(hi-lo) != len(cm) || lo == hi {
		return false
	}
	mark := len(w.keys)
	for c := lo; c < hi; c++ {
		n := &s.nodes[c]
		v := cm[n.name]
		if n.kind != elemField || v == nil {
			w.keys = w.keys[:mark]
			return false
		}
		w.keys = append(w.keys, keyValue{n.name, v})
	}
	return true
}

// keysAsOthers is keysAsIn over the other entries at frame off.
func (w *applyWalk) keysAsOthers(cm map[string]any, off int) bool {
	for i, s := range w.others {
		if w.keysAsIn(cm, s, w.ost[off+i]) {
			return true
		}
	}
	return false
}
