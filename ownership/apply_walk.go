package ownership

import (
	"maps"
	"slices"
	"strings"

	"github.com/steady-go/steady/diff"
)

// The apply walk: Apply's full merge, for any change. It reads top to
// bottom: the walk's state and its position (at), then value, which
// dispatches on the config value to leaf, mergeMap or mergeList; then
// prune, for what the manager applied last time and no longer does; then
// the frames that follow the other entries along the path and record
// conflicts.
//
// Fast paths are marked "Fast path" with the benchmark bar that keeps
// them. BenchmarkApplySecondManager (a second manager applies a Pod-sized
// config) must stay ≤ 30 µs on a quiet machine and ≤ 60 allocs (40
// today); a fast path that no longer buys its share of that can go.

// applyWalk merges config into live while building the applier's new set
// in nodes, pruning what it applied last time (last), and checking every
// change against the other entries (others, followed in parallel: see at).
type applyWalk struct {
	nodes     []node  // the new set, built in its final layout
	last      *Set    // the applier's last applied set (maybe empty)
	others    []*Set  // every other entry's set
	entries   []int   // the index in managed of others[i]
	ost       []int32 // frames of the others' nodes; see at.frame
	path      []pelem // the current path
	conflicts []Conflict
	strips    []strip    // what the apply takes from other entries
	keybuf    []byte     // scratch for one element name
	keys      []keyValue // scratch stack of sorted map entries
	cur       []int32    // scratch stack of cursors (see cursors)
	items     []itemRef  // scratch stack of sorted list items
	dead      bool       // nodes has nodes that claim nothing; see compact
	managed   Managed
	manager   string
	scratch   *applyScratch // where keys, items, cur, path and keybuf start
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

// at is the walk's position: one path, as each input sees it.
type at struct {
	live   any    // live's value at the path
	inLive bool   // live has the path (its value may be null)
	sch    *snode // the schema of the path
	built  int32  // the path's node in the new set; -1 where config has nothing
	last   int32  // the path's node in the last applied set; -1 if none
	// frame is the offset in w.ost of the path's frame: one node index per
	// other entry (others[i]'s node is w.ost[frame+i], -1 if none).
	frame int
}

// strip is a subtree taken from an entry (by force, or from the applier's
// own Update entry).
type strip struct {
	entry int
	path  []pelem
}

// value merges config value c (not null) into live at position here. It
// returns the merged value and whether it differs from live's.
func (w *applyWalk) value(here at, c any) (any, bool, error) {
	switch cv := c.(type) {
	case map[string]any:
		if here.sch.strategy() == stratAtomic {
			return w.leaf(here, c)
		}
		return w.mergeMap(here, cv)
	case []any:
		switch here.sch.strategy() {
		case stratSet, stratKeyed:
			return w.mergeList(here, cv)
		}
		return w.leaf(here, c)
	}
	if kindOf(c) != kindScalar {
		return nil, false, w.errorf("unsupported value of type %T", c)
	}
	return w.leaf(here, c)
}

// leaf applies a value owned whole: a scalar, an atomic list or map.
func (w *applyWalk) leaf(here at, c any) (any, bool, error) {
	w.nodes[here.built].member = true
	budget := MaxDepth - len(w.path) // c's maps and lists, c included
	if here.inLive && deepEqual(here.live, c, budget) {
		return here.live, false, nil
	}
	if err := validTree(c, budget); err != nil {
		return nil, false, treeError(w.diffPath(), err)
	}
	_, liveMap := here.live.(map[string]any)
	w.changedHere(here.frame, liveMap)
	return deepCopy(c), true, nil
}

// mergeMap merges a granular map: each non-null field of cm in key order,
// then the fields applied last time and no longer. The new set's children
// of here.built are reserved as one sorted block. A map nested past
// MaxDepth is an error.
func (w *applyWalk) mergeMap(here at, cm map[string]any) (any, bool, error) {
	if len(w.path) >= MaxDepth {
		return nil, false, tooDeep(w.diffPath())
	}
	lm, mark, lo := w.openMap(&here, cm)
	cnt := len(w.keys) - mark
	// Fast path (BenchmarkApplySecondManager: ≤ 30 µs, ≤ 60 allocs): the last
	// set's and the others' children are sorted like the keys, so cursors find
	// them instead of searches. The loop stays in one function: a call per
	// field costs the benchmark 3.5% of its instructions.
	var pc, phi int32
	if here.last >= 0 {
		pc, phi = w.last.nodes[here.last].lo, w.last.nodes[here.last].hi
	}
	cmark := w.cursors(here.frame)
	var out map[string]any // a copy of lm, made at the first change
	if lm == nil {
		out = make(map[string]any, cnt) // every field is a change
	}
	for j := range cnt {
		kv := w.keys[mark+j]
		for pc < phi && cmpElem(w.last.nodes[pc].kind, w.last.nodes[pc].name, elemField, kv.k) < 0 {
			pc++
		}
		lastNode := int32(-1)
		if pc < phi && w.last.nodes[pc].kind == elemField && w.last.nodes[pc].name == kv.k {
			lastNode = pc
		}
		built := lo + int32(j)
		w.nodes[built].kind, w.nodes[built].name = elemField, kv.k
		lv, lok := lm[kv.k]
		child := at{live: lv, inLive: lok, sch: here.sch.field(kv.k), built: built, last: lastNode,
			frame: w.descendSorted(here.frame, cmark, elemField, kv.k)}
		v, changed, err := w.value(child, kv.v)
		w.ascend(child.frame)
		if err != nil {
			w.keys, w.cur = w.keys[:mark], w.cur[:cmark]
			return nil, false, err
		}
		if changed {
			if out == nil {
				out = cloneMap(lm)
			}
			out[kv.k] = v
		}
	}
	w.keys, w.cur = w.keys[:mark], w.cur[:cmark]
	if w.dead && cnt > 0 && claimsNothing(w.nodes[lo:lo+int32(cnt)]) {
		// Fields that claim nothing (empty sets and keyed lists) leave the
		// map as an empty one is: owned, as structured-merge-diff owns the
		// map key.
		w.nodes[here.built].member = true
	}
	if here.last >= 0 && lm != nil {
		out = w.pruneFields(here, mapPrune{live: lm, applied: cm, out: out})
	}
	if out != nil {
		return out, true, nil
	}
	return lm, false, nil
}

// claimsNothing reports whether none of a map's new nodes claims
// anything. Only an empty set or keyed list leaves its node so: a map
// field's node is a member or holds one (see mergeMap).
func claimsNothing(children []node) bool {
	for _, n := range children {
		if n.member || n.lo < n.hi {
			return false
		}
	}
	return true
}

// openMap starts mergeMap: it pushes cm's non-null fields onto w.keys
// from mark, in key order, and reserves their nodes in the new set from
// lo. lm is live's map (nil when live has none). here is a pointer only
// to spare the copy.
func (w *applyWalk) openMap(here *at, cm map[string]any) (lm map[string]any, mark int, lo int32) {
	lm, isMap := here.live.(map[string]any)
	if here.inLive && !isMap {
		w.changedHere(here.frame, false)
	}
	mark = len(w.keys)
	// Fast path (BenchmarkApplySecondManager: ≤ 30 µs, ≤ 60 allocs): a
	// re-apply finds cm's fields in the manager's last set, a manager applying
	// fields another one applied finds them in its set; either needs neither a
	// map iteration nor a sort.
	if !w.keysAsIn(cm, w.last, here.last) && !w.keysAsOthers(cm, here.frame) {
		for k, cv := range cm {
			if cv != nil {
				w.keys = append(w.keys, keyValue{k, cv})
			}
		}
		sortKeyValues(w.keys[mark:])
	}
	cnt := len(w.keys) - mark
	if cnt == 0 {
		w.nodes[here.built].member = true // an empty map is owned
	}
	return lm, mark, w.reserve(here.built, cnt)
}

// keysAsIn pushes cm's entries in sorted order when they are exactly the
// fields set s holds at node i.
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

// keysAsOthers is keysAsIn over the other entries at frame.
func (w *applyWalk) keysAsOthers(cm map[string]any, frame int) bool {
	for i, s := range w.others {
		if w.keysAsIn(cm, s, w.ost[frame+i]) {
			return true
		}
	}
	return false
}

// cloneMap copies live map m (not nil) for writing.
func cloneMap(m map[string]any) map[string]any {
	// Fast path (BenchmarkApplySecondManager: ≤ 30 µs, ≤ 60 allocs):
	// maps.Clone copies the table whole, far faster than reinserting.
	return maps.Clone(m)
}

// mergeList merges a set (scalars identified by value) or a keyed list
// (maps identified by their key fields). Live items stay in place and
// merge with their config item; config items not in live are appended in
// config order; items applied last time and no longer are pruned. A list
// nested past MaxDepth is an error.
func (w *applyWalk) mergeList(here at, c []any) (any, bool, error) {
	if len(w.path) >= MaxDepth {
		return nil, false, tooDeep(w.diffPath())
	}
	if len(c) == 0 {
		// An empty list claims nothing (see claimed): it is written where
		// live has nothing, and its node is dropped from the new set (and
		// so is a map above that claims nothing else).
		w.dead = true
		if here.inLive {
			return here.live, false, nil
		}
		return []any{}, true, nil
	}
	ll, isList := here.live.([]any)
	if here.inLive && !isList {
		_, liveMap := here.live.(map[string]any)
		w.changedHere(here.frame, liveMap)
	}
	kind := here.sch.itemKind()
	mark := len(w.items)
	defer func() { w.items = w.items[:mark] }()
	if err := w.identify(here, c); err != nil {
		return nil, false, err
	}
	lo := w.reserve(here.built, len(c))
	cmark := w.cursors(here.frame)
	defer func() { w.cur = w.cur[:cmark] }()
	inOrder := inOrderPrefix(ll, c, here.sch)
	edit := listEdit{live: ll}
	// Fast path (BenchmarkApplySecondManager: ≤ 30 µs, ≤ 60 allocs): a
	// local slice with one append site, so that its first item's backing
	// store stays on the stack (2 of the benchmark's allocs; a second
	// append site loses them).
	var appended []appendedItem
	for j := range c {
		ref := w.items[mark+j]
		built := lo + int32(j)
		w.nodes[built] = node{kind: kind, name: ref.name, member: true}
		frame := w.descendSorted(here.frame, cmark, kind, ref.name)
		var li int
		var v any // the merged item
		var changed bool
		var err error
		if kind == elemValue {
			li, v = w.setItem(ll, c[ref.idx], frame)
		} else {
			li, v, changed, err = w.keyedItem(&here, ll, ref, c[ref.idx].(map[string]any), built, frame, inOrder)
		}
		w.ascend(frame)
		switch {
		case err != nil:
			return nil, false, err
		case li < 0:
			appended = append(appended, appendedItem{ref.idx, v})
		case changed:
			edit.set(li, v)
		}
	}
	w.pruneItems(here, &edit)
	v, changed := edit.result(here, appended)
	return v, changed, nil
}

// inOrderPrefix returns the length of the leading run of positions where
// live keyed list ll's item has the keys of config list c's item (0 for a
// set). Fast path (BenchmarkApplySecondManager: ≤ 30 µs, ≤ 60 allocs):
// config lists usually keep live's order, and over that run live's earlier
// items hold the earlier config items' (distinct) keys, so the item at the
// same position is the first match, as findKeyed finds.
func inOrderPrefix(ll, c []any, sch *snode) int {
	if sch.strategy() != stratKeyed {
		return 0
	}
	n := 0
	for n < len(c) && n < len(ll) && sameKeys(ll[n], c[n].(map[string]any), sch.strat.keys) {
		n++
	}
	return n
}

// setItem returns the index of set item it in live list ll, or -1 and the
// item to add (a set item is its identity: it is in live, or it is added).
func (w *applyWalk) setItem(ll []any, it any, frame int) (int, any) {
	li := slices.IndexFunc(ll, func(lv any) bool { return scalarEqual(lv, it) })
	if li >= 0 {
		return li, nil
	}
	w.changedHere(frame, false)
	return -1, deepCopy(it)
}

// keyedItem merges config item cm (ref, node built in the new set) of a
// keyed list into its live item in ll. It returns the live item's index
// (-1 if none), the merged item and whether it differs from live's.
func (w *applyWalk) keyedItem(here *at, ll []any, ref itemRef, cm map[string]any, built int32, frame, inOrder int) (int, any, bool, error) {
	li := ref.idx
	if li >= inOrder {
		li = findKeyed(ll, cm, here.sch.strat.keys)
	}
	var lv any
	if li >= 0 {
		lv = ll[li]
	}
	child := at{live: lv, inLive: li >= 0, sch: here.sch.item(), built: built,
		last: w.last.child(here.last, elemKey, ref.name), frame: frame}
	v, changed, err := w.value(child, cm)
	return li, v, changed, err
}

// identify pushes c's items onto w.items with their element names, sorted
// by name. An item without an identity or a duplicate is an error.
func (w *applyWalk) identify(here at, c []any) error {
	mark := len(w.items)
	kind := here.sch.itemKind()
	for i, it := range c {
		var err error
		if w.keybuf, err = appendItemName(w.keybuf[:0], it, here.sch); err != nil {
			return w.errorf("%v", err)
		}
		w.items = append(w.items, itemRef{name: w.intern(here, kind), idx: i})
	}
	items := w.items[mark:]
	slices.SortFunc(items, func(a, b itemRef) int { return strings.Compare(a.name, b.name) })
	for i := 1; i < len(items); i++ {
		if items[i].name != items[i-1].name {
			continue
		}
		if kind == elemValue {
			return w.errorf("duplicate set item %s", items[i].name)
		}
		return w.errorf("duplicate list item [%s]", items[i].name)
	}
	return nil
}

// intern returns the element name in w.keybuf as a string. Fast path
// (BenchmarkApplySecondManager: ≤ 30 µs, ≤ 60 allocs): it
// reuses the string of the last applied set or another entry when one
// holds the element, so that steady-state applies allocate no names.
func (w *applyWalk) intern(here at, kind uint8) string {
	if i := w.last.childBytes(here.last, kind, w.keybuf); i >= 0 {
		return w.last.nodes[i].name
	}
	for j, s := range w.others {
		if i := s.childBytes(w.ost[here.frame+j], kind, w.keybuf); i >= 0 {
			return s.nodes[i].name
		}
	}
	return string(w.keybuf)
}

// findKeyed returns the index of the first live item whose key fields
// equal cm's, or -1.
func findKeyed(ll []any, cm map[string]any, keys []string) int {
	for i, it := range ll {
		if sameKeys(it, cm, keys) {
			return i
		}
	}
	return -1
}

// sameKeys reports whether live item it has cm's key values.
func sameKeys(it any, cm map[string]any, keys []string) bool {
	m, ok := it.(map[string]any)
	if !ok {
		return false
	}
	for _, k := range keys {
		v, ok := m[k]
		if !ok || !scalarEqual(v, cm[k]) {
			return false
		}
	}
	return true
}

// listEdit collects what a merge or a prune does to the items of a live
// list.
type listEdit struct {
	live    []any // the live list (nil when live has none)
	out     []any // a copy of live, made at the first change
	removed bool  // some slots of out hold removedItem
}

// appendedItem is a new item and its config position.
type appendedItem struct {
	idx int
	v   any
}

// removedItem marks a list slot to delete.
type removedItem struct{}

// set replaces live item i.
func (e *listEdit) set(i int, v any) {
	if e.out == nil {
		e.out = slices.Clone(e.live)
	}
	e.out[i] = v
}

// result returns the edited list and whether it differs from live's value
// at here: removed slots deleted, appended items added in config order.
func (e *listEdit) result(here at, appended []appendedItem) (any, bool) {
	_, wasList := here.live.([]any)
	if e.out == nil && len(appended) == 0 && here.inLive && wasList {
		return here.live, false
	}
	out := e.out
	if out == nil {
		out = make([]any, 0, len(e.live)+len(appended))
		out = append(out, e.live...)
	}
	if e.removed {
		out = slices.DeleteFunc(out, func(v any) bool { _, ok := v.(removedItem); return ok })
	}
	slices.SortFunc(appended, func(a, b appendedItem) int { return a.idx - b.idx })
	for _, a := range appended {
		out = append(out, a.v)
	}
	if out == nil {
		out = []any{}
	}
	return out, true
}

// prune removes from live's value at here what the last applied set holds
// below it and nobody owns any more; config has nothing here. keep names
// fields never to remove: the key fields of a list item that stays.
func (w *applyWalk) prune(here at, keep []string) (any, bool) {
	switch lv := here.live.(type) {
	case map[string]any:
		if out := w.pruneFields(here, mapPrune{live: lv, keep: keep}); out != nil {
			return out, true
		}
	case []any:
		if st := here.sch.strategy(); st == stratSet || st == stratKeyed {
			edit := listEdit{live: lv}
			w.pruneItems(here, &edit)
			return edit.result(here, nil)
		}
	}
	return here.live, false
}

// mapPrune is the map pruneFields works on.
type mapPrune struct {
	live    map[string]any // live's map at the path
	applied map[string]any // the config's map (nil when config has none)
	keep    []string       // fields never to remove
	out     map[string]any // the working copy of live, if made already
}

// edit returns the working copy of live, made at the first call.
func (f *mapPrune) edit() map[string]any {
	if f.out == nil {
		f.out = cloneMap(f.live)
	}
	return f.out
}

// pruneFields removes the fields of the map at here that the last applied
// set holds, the config no longer applies and nobody else owns, and prunes
// inside the others it holds. It returns the working copy (nil if none).
func (w *applyWalk) pruneFields(here at, f mapPrune) map[string]any {
	if here.last < 0 || f.live == nil {
		return f.out
	}
	last := w.last.nodes
	for pc := last[here.last].lo; pc < last[here.last].hi; pc++ {
		pn := &last[pc]
		if pn.kind != elemField || claimed(f.applied[pn.name], here.sch.field(pn.name)) || slices.Contains(f.keep, pn.name) {
			continue
		}
		if lv, ok := f.live[pn.name]; ok {
			w.pruneField(here, &f, pc, lv)
		}
	}
	return f.out
}

// pruneField is pruneFields for field pc of the last applied set, whose
// live value is lv.
func (w *applyWalk) pruneField(here at, f *mapPrune, pc int32, lv any) {
	pn := &w.last.nodes[pc]
	child := at{live: lv, inLive: true, sch: here.sch.field(pn.name), built: -1, last: pc,
		frame: w.descend(here.frame, elemField, pn.name)}
	defer w.ascend(child.frame)
	if pn.member && !w.owned(child.frame) {
		delete(f.edit(), pn.name)
		return
	}
	if pn.lo == pn.hi {
		return
	}
	v, changed := w.prune(child, nil)
	switch {
	case !changed:
	case (emptyMap(v) || hollow(v, child.sch, MaxDepth-len(w.path))) && !w.ownedAfterDrops(child.frame),
		// An emptied list the config still applies (as []) stays:
		// re-applying the config must change nothing.
		emptyList(v) && f.applied[pn.name] == nil && !w.ownsNode(child.frame):
		delete(f.edit(), pn.name)
	default:
		f.edit()[pn.name] = v
	}
}

// emptyMap and emptyList report whether v is a map or list without
// entries: one that pruning emptied is removed with them unless someone
// owns it, as structured-merge-diff removes it.
func emptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

func emptyList(v any) bool {
	l, ok := v.([]any)
	return ok && len(l) == 0
}

// hollow reports whether v is a granular map that holds only empty sets
// and keyed lists, directly or in maps that hold only those. Such a map
// is as good as empty to pruning: an empty set or keyed list claims
// nothing, and structured-merge-diff's field sets have no path for it,
// so it removes the map once pruning leaves nothing else. v is live's,
// which Apply reads only where config or the last set leads, and may
// hold itself: past budget nested maps (v included) it is not hollow.
func hollow(v any, sch *snode, budget int) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 || sch.strategy() == stratAtomic || budget <= 0 {
		return false
	}
	for k, e := range m {
		fs := sch.field(k)
		if emptyList(e) {
			if st := fs.strategy(); st == stratSet || st == stratKeyed {
				continue
			}
			return false
		}
		if !hollow(e, fs, budget-1) {
			return false
		}
	}
	return true
}

// claimed reports whether applying config value v (of schema sch) claims
// its path. Null claims nothing (see doc.go), nor does an empty set or
// keyed list: as in structured-merge-diff, it is written where live has
// nothing and owned by nobody.
func claimed(v any, sch *snode) bool {
	if v == nil {
		return false
	}
	if emptyList(v) {
		st := sch.strategy()
		return st != stratSet && st != stratKeyed
	}
	return true
}

// pruneItems removes from the live list at here the items the last
// applied set holds, the new set does not (here.built; -1 when config has
// no list) and nobody else owns, and prunes inside the items it holds
// that stay.
func (w *applyWalk) pruneItems(here at, edit *listEdit) {
	if here.last < 0 || len(edit.live) == 0 {
		return
	}
	kind := here.sch.itemKind()
	last := w.last.nodes
	mine := Set{nodes: w.nodes}
	var names []string // live items' element names, made when needed
	for pc := last[here.last].lo; pc < last[here.last].hi; pc++ {
		pn := &last[pc]
		if pn.kind != kind || mine.child(here.built, pn.kind, pn.name) >= 0 {
			continue
		}
		if names == nil {
			names, _ = itemNames(&w.keybuf, edit.live, here.sch)
		}
		li := slices.Index(names, pn.name)
		if li < 0 {
			continue
		}
		child := at{live: edit.live[li], inLive: true, sch: here.sch.item(), built: -1, last: pc,
			frame: w.descend(here.frame, pn.kind, pn.name)}
		if pn.member && !w.ownsNode(child.frame) {
			// Others' fields inside the item go with it.
			w.dropBelow(child.frame)
			edit.set(li, removedItem{})
			edit.removed = true
		} else if pn.lo < pn.hi {
			if v, changed := w.prune(child, here.sch.strat.keys); changed {
				edit.set(li, v)
			}
		}
		w.ascend(child.frame)
	}
}

// reserve appends a block of n children of node built to the new set and
// returns its first index.
func (w *applyWalk) reserve(built int32, n int) int32 {
	lo := int32(len(w.nodes))
	if n == 0 {
		return lo // a leaf keeps the empty block at 0
	}
	w.nodes = append(w.nodes, make([]node, n)...)
	w.nodes[built].lo, w.nodes[built].hi = lo, lo+int32(n)
	return lo
}

// descend pushes the others' frame for child (kind, name) of frame and
// returns it; pop it with ascend.
func (w *applyWalk) descend(frame int, kind uint8, name string) int {
	next := len(w.ost)
	for i, s := range w.others {
		w.ost = append(w.ost, s.child(w.ost[frame+i], kind, name))
	}
	w.path = append(w.path, pelem{kind, name})
	return next
}

// cursors pushes, for a caller visiting the children of frame in sorted
// order, one cursor per other entry into its children, and returns their
// mark for descendSorted; pop them with w.cur = w.cur[:mark].
func (w *applyWalk) cursors(frame int) int {
	mark := len(w.cur)
	for i, s := range w.others {
		c := int32(-1)
		if o := w.ost[frame+i]; o >= 0 {
			c = s.nodes[o].lo
		}
		w.cur = append(w.cur, c)
	}
	return mark
}

// descendSorted is descend for children visited in increasing order. Fast
// path (BenchmarkApplySecondManager: ≤ 30 µs, ≤ 60 allocs): it advances the cursors at mark
// instead of searching.
func (w *applyWalk) descendSorted(frame, mark int, kind uint8, name string) int {
	next := len(w.ost)
	for i, s := range w.others {
		r := int32(-1)
		if o := w.ost[frame+i]; o >= 0 {
			c, hi := w.cur[mark+i], s.nodes[o].hi
			for c < hi && cmpElem(s.nodes[c].kind, s.nodes[c].name, kind, name) < 0 {
				c++
			}
			w.cur[mark+i] = c
			if c < hi && s.nodes[c].kind == kind && s.nodes[c].name == name {
				r = c
			}
		}
		w.ost = append(w.ost, r)
	}
	w.path = append(w.path, pelem{kind, name})
	return next
}

// ascend pops frame (and its path element).
func (w *applyWalk) ascend(frame int) {
	w.ost = w.ost[:frame]
	w.path = w.path[:len(w.path)-1]
}

// owned reports whether any other entry owns the path of frame or below.
func (w *applyWalk) owned(frame int) bool {
	for i := range w.others {
		if w.ost[frame+i] >= 0 {
			return true
		}
	}
	return false
}

// ownedAfterDrops is owned without what the walk took from the other
// entries below the path of frame (dropBelow: the fields inside list
// items it removed). A map that pruning empties goes unless someone owns
// it or something still in it.
func (w *applyWalk) ownedAfterDrops(frame int) bool {
	for i, s := range w.others {
		o := w.ost[frame+i]
		if o < 0 {
			continue
		}
		var dropped [][]pelem // entry i's dropped paths, below here
		for _, st := range w.strips {
			if st.entry == w.entries[i] && len(st.path) > len(w.path) && slices.Equal(st.path[:len(w.path)], w.path) {
				dropped = append(dropped, st.path[len(w.path):])
			}
		}
		if len(dropped) == 0 || s.holdsOutside(o, nil, dropped) {
			return true
		}
	}
	return false
}

// holdsOutside reports whether node i (at rel, relative to the walk's
// path) or a node below it is a member outside the subtrees dropped.
func (s *Set) holdsOutside(i int32, rel []pelem, dropped [][]pelem) bool {
	for _, d := range dropped {
		if len(rel) >= len(d) && slices.Equal(rel[:len(d)], d) {
			return false
		}
	}
	n := s.nodes[i]
	if n.member {
		return true
	}
	for c := n.lo; c < n.hi; c++ {
		if s.holdsOutside(c, append(rel[:len(rel):len(rel)], pelem{s.nodes[c].kind, s.nodes[c].name}), dropped) {
			return true
		}
	}
	return false
}

// ownsNode reports whether another entry owns the path of frame itself,
// not only something below it. Only that keeps a list item the applier
// stops applying (another manager applied it, or an Update created it),
// or a list that pruning emptied.
func (w *applyWalk) ownsNode(frame int) bool {
	for i, s := range w.others {
		if o := w.ost[frame+i]; o >= 0 && s.nodes[o].member {
			return true
		}
	}
	return false
}

// dropBelow takes from every other entry what it owns at or below the
// current path (frame), which is being removed.
func (w *applyWalk) dropBelow(frame int) {
	for i := range w.others {
		if w.ost[frame+i] >= 0 {
			w.strips = append(w.strips, strip{entry: w.entries[i], path: slices.Clone(w.path)})
		}
	}
}

// changedHere records that the value at the current path (frame)
// changes; liveMap says live holds a map there. Every other entry owning
// the path or anything below loses it. As in structured-merge-diff, one
// conflicts at the path itself when it owns the path, or is an Apply
// entry owning fields inside the map (structured-merge-diff's Apply sets
// hold every map key they applied fields in); an Update entry owning only
// fields inside a map it did not create loses them without a conflict.
// Below a list, every owned path conflicts. The applier's own Update
// entry never conflicts.
func (w *applyWalk) changedHere(frame int, liveMap bool) {
	for i, s := range w.others {
		o := w.ost[frame+i]
		if o < 0 {
			continue
		}
		e := w.managed[w.entries[i]]
		w.strips = append(w.strips, strip{entry: w.entries[i], path: slices.Clone(w.path)})
		switch {
		case e.Manager == w.manager:
		case s.nodes[o].member || liveMap && e.Operation == OpApply:
			w.conflicts = append(w.conflicts, Conflict{Manager: e.Manager, Operation: e.Operation, Path: w.diffPath()})
		case !liveMap:
			s.eachMember(o, w.diffPath(), func(p diff.Path) {
				w.conflicts = append(w.conflicts, Conflict{Manager: e.Manager, Operation: e.Operation, Path: p})
			})
		}
	}
}

// eachMember calls f with every member path at or below node i, where i
// is at path base, in the set's order: a parent before its children,
// siblings sorted. Each path f gets is its own. The walk extends one
// buffer in place and copies a path only for f: copying every prefix, as
// it did, cost the square of the set's depth (6 s for a path of MaxDepth
// elements).
func (s *Set) eachMember(i int32, base diff.Path, f func(diff.Path)) {
	buf := slices.Clone(base)
	var walk func(i int32)
	walk = func(i int32) {
		n := s.nodes[i]
		if n.member {
			f(slices.Clip(slices.Clone(buf)))
		}
		for c := n.lo; c < n.hi; c++ {
			buf = append(buf, toElement(s.nodes[c].kind, s.nodes[c].name))
			walk(c)
			buf = buf[:len(buf)-1]
		}
	}
	walk(i)
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
