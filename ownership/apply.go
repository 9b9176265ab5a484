package ownership

import (
	"fmt"
	"slices"
	"strings"

	"github.com/steady-go/steady/diff"
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
	var w applyWalk
	applyIdx := managed.Find(manager, OpApply)
	size := 128
	if applyIdx >= 0 {
		w.last = managed[applyIdx].Set
		size = len(w.last.nodes) + 16
	}
	w.nodes = make([]node, 1, size)
	nOthers := len(managed)
	if applyIdx >= 0 {
		nOthers--
	}
	// One allocation for the per-entry slices and one for scratch stacks.
	ints := make([]int, nOthers)
	sets := make([]*Set, nOthers, nOthers)
	w.others, w.entries = sets[:0], ints[:0]
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
			return 0
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
	items     []itemRef  // scratch stack of sorted list items
	managed   Managed
	manager   string
}

// applyScratch holds the walk's stacks in one allocation; they grow past
// it only for unusually wide or deep objects.
type applyScratch struct {
	keys   [64]keyValue
	items  [32]itemRef
	path   [16]pelem
	keybuf [64]byte
}

// keyValue is a config map entry.
type keyValue struct {
	k string
	v any
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

// descend pushes the others' frame for child (kind, name) of frame off.
func (w *applyWalk) descend(off int, kind uint8, name string) int {
	n := len(w.others)
	next := len(w.ost)
	for i := 0; i < n; i++ {
		w.ost = append(w.ost, w.others[i].child(w.ost[off+i], kind, name))
	}
	w.path = append(w.path, pelem{kind, name})
	return next
}

func (w *applyWalk) ascend(off int) {
	w.ost = w.ost[:off]
	w.path = w.path[:len(w.path)-1]
}

// owned reports whether any other entry owns frame off or below.
func (w *applyWalk) owned(off int) bool {
	for i := range w.others {
		if w.ost[off+i] >= 0 {
			return true
		}
	}
	return false
}

// changedHere records that the value at the current path changes: every
// other entry owning it or anything below conflicts (or, for the
// applier's own Update entry, silently loses it).
func (w *applyWalk) changedHere(off int) {
	for i, s := range w.others {
		o := w.ost[off+i]
		if o < 0 {
			continue
		}
		e := w.managed[w.entries[i]]
		w.strips = append(w.strips, strip{entry: w.entries[i], path: slices.Clone(w.path)})
		if e.Manager == w.manager {
			continue
		}
		base := w.diffPath()
		s.eachMember(o, base, func(p diff.Path) {
			w.conflicts = append(w.conflicts, Conflict{Manager: e.Manager, Operation: e.Operation, Path: p})
		})
	}
}

func (w *applyWalk) diffPath() diff.Path {
	p := make(diff.Path, len(w.path))
	for i, e := range w.path {
		p[i] = toElement(e.kind, e.name)
	}
	return p
}

func (w *applyWalk) errorf(format string, args ...any) error {
	return errorf(w.diffPath(), format, args...)
}

// eachMember calls f with every member path at or below node i, where i
// is at path base.
func (s *Set) eachMember(i int32, base diff.Path, f func(diff.Path)) {
	n := s.nodes[i]
	if n.member {
		f(base)
	}
	for c := n.lo; c < n.hi; c++ {
		s.eachMember(c, base.Append(toElement(s.nodes[c].kind, s.nodes[c].name)), f)
	}
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
	for k, cv := range cm {
		if cv != nil {
			w.keys = append(w.keys, keyValue{k, cv})
		}
	}
	cnt := len(w.keys) - mark
	if cnt == 0 {
		w.nodes[nb].member = true
	} else {
		if cnt > 1 {
			slices.SortFunc(w.keys[mark:], func(a, b keyValue) int { return strings.Compare(a.k, b.k) })
		}
		lo := int32(len(w.nodes))
		w.nodes = append(w.nodes, make([]node, cnt)...)
		w.nodes[nb].lo, w.nodes[nb].hi = lo, lo+int32(cnt)
		// The last applied set's children are sorted too: walk them with a
		// cursor instead of searching.
		var pc, phi int32
		if p >= 0 {
			pc, phi = w.last.nodes[p].lo, w.last.nodes[p].hi
		}
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
			off2 := w.descend(off, elemField, k)
			lv, lok := lm[k]
			v, ch, err := w.value(lv, lok, kv.v, sch.field(k), cn, pk, off2)
			w.ascend(off2)
			if err != nil {
				w.keys = w.keys[:mark]
				return nil, false, err
			}
			if ch {
				if out == nil {
					out = cloneMap(lm, cnt)
				}
				out[k] = v
			}
		}
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

// emptyMap reports whether v is a map without keys: one that pruning
// emptied is removed with them unless someone owns it.
func emptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

func cloneMap(m map[string]any, extra int) map[string]any {
	out := make(map[string]any, len(m)+extra)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// prune removes from live value l what the last applied set (node p)
// holds below it and nobody owns any more. Config has nothing here.
// keep names fields never to remove: the key fields of a list item that
// stays.
func (w *applyWalk) prune(l any, sch *snode, p int32, off int, keep []string) (any, bool) {
	last := w.last.nodes
	switch lv := l.(type) {
	case map[string]any:
		var out map[string]any
		for pc := last[p].lo; pc < last[p].hi; pc++ {
			pn := &last[pc]
			if pn.kind != elemField || slices.Contains(keep, pn.name) {
				continue
			}
			v, ok := lv[pn.name]
			if !ok {
				continue
			}
			off2 := w.descend(off, elemField, pn.name)
			if pn.member && !w.owned(off2) {
				if out == nil {
					out = cloneMap(lv, 0)
				}
				delete(out, pn.name)
			} else if pn.lo < pn.hi {
				if nv, ch := w.prune(v, sch.field(pn.name), pc, off2, nil); ch {
					if out == nil {
						out = cloneMap(lv, 0)
					}
					if emptyMap(nv) && !w.owned(off2) {
						delete(out, pn.name)
					} else {
						out[pn.name] = nv
					}
				}
			}
			w.ascend(off2)
		}
		if out == nil {
			return l, false
		}
		return out, true
	case []any:
		st := sch.strategy()
		if st != stratSet && st != stratKeyed {
			return l, false
		}
		texts := w.itemTexts(lv, sch)
		var out []any
		removed := 0
		for pc := last[p].lo; pc < last[p].hi; pc++ {
			pn := &last[pc]
			li := slices.Index(texts, pn.name)
			if li < 0 || (st == stratSet) != (pn.kind == elemValue) {
				continue
			}
			off2 := w.descend(off, pn.kind, pn.name)
			if pn.member && !w.owned(off2) {
				if out == nil {
					out = slices.Clone(lv)
				}
				out[li] = removedItem{}
				removed++
			} else if pn.lo < pn.hi {
				if nv, ch := w.prune(lv[li], sch.item(), pc, off2, sch.strat.keys); ch {
					if out == nil {
						out = slices.Clone(lv)
					}
					out[li] = nv
				}
			}
			w.ascend(off2)
		}
		if out == nil {
			return l, false
		}
		if removed > 0 {
			out = slices.DeleteFunc(out, func(v any) bool { _, ok := v.(removedItem); return ok })
		}
		return out, true
	}
	return l, false
}

// removedItem marks a list slot to delete.
type removedItem struct{}

// itemTexts returns the element names of live list items ("" for items
// without a valid identity).
func (w *applyWalk) itemTexts(l []any, sch *snode) []string {
	texts := make([]string, len(l))
	for i, it := range l {
		var err error
		if sch.strategy() == stratSet {
			var b []byte
			if kindOf(it) == kindScalar || it == nil {
				b, err = appendScalarText(w.keybuf[:0], it)
				if err == nil {
					texts[i] = string(b)
				}
			}
			continue
		}
		if m, ok := it.(map[string]any); ok {
			texts[i], err = w.keyText(m, sch.strat.keys)
			if err != nil {
				texts[i] = ""
			}
		}
	}
	return texts
}

// keyText builds a keyed item's element name from its key fields.
func (w *applyWalk) keyText(m map[string]any, keys []string) (string, error) {
	if err := w.keyBytes(m, keys); err != nil {
		return "", err
	}
	return string(w.keybuf), nil
}

// pathOf rebuilds the path of builder node i.
func (b *builder) pathOf(i int32) diff.Path {
	var p diff.Path
	for ; i > 0; i = b.nodes[i].parent {
		p = append(p, toElement(b.nodes[i].kind, b.nodes[i].name))
	}
	slices.Reverse(p)
	return p
}

// newManaged assembles the ownership record after a successful apply.
func (w *applyWalk) newManaged(applyIdx int, set *Set) Managed {
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
			s = s.Without(st)
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
