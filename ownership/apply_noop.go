package ownership

import "slices"

// A re-apply of an unchanged config is the common case for a controller
// that applies its desired state on every pass. noopWalk recognizes it in
// one read-only walk of config against live and the manager's last applied
// set, without building anything: it succeeds only when the set Apply would
// build is node for node the last one and every applied value already
// equals live's. Anything else (including every input Apply would reject)
// makes it give up, and Apply takes its ordinary path.
//
// Fast path, kept by BenchmarkApplyNoop (the first manager re-applies its
// Pod config: ≤ 10 µs on a quiet machine and exactly 1 alloc, the Managed
// copy); FuzzOwnership cross-checks it against the full walk. Its
// functions take plain named parameters: a position struct like the full
// walk's costs it 4% more instructions.
//
// The same walk recognizes the next most common case, a controller
// re-applying its fields with some new values (a status field it sets on
// every pass): with room for changes, it also accepts a scalar leaf, not
// inside a list, whose live value is another scalar, and lists those
// leaves; applyChanges then finishes the apply when no other entry has a
// node at any of their paths. Fast path, kept by BenchmarkApplyOwnFieldChanged
// (a controller re-applies the one status field it owns with a new value:
// ≤ 3 allocs); FuzzOwnership cross-checks it against the full walk too.

// noopWalk walks the last applied set. Element names are built in
// buffers local to each list's frame, so that they stay on the stack.
type noopWalk struct {
	last    *Set
	changes leafChanges // the changed leaves found
	room    bool        // changes are accepted, up to maxChanges
	inList  bool        // the walk is inside a list: no change is accepted
	depth   int         // the maps and lists the walk is in (see MaxDepth)
}

// maxChanges bounds the changed leaves a re-apply's walk accepts.
const maxChanges = 4

// leafChanges are the scalar leaves a re-apply changes. They are held by
// value: the walk stays on its caller's stack.
type leafChanges struct {
	n    int
	leaf [maxChanges]leafChange
}

// leafChange is one: its node in the last applied set and its config
// value.
type leafChange struct {
	node int32
	v    any
}

// isNoop reports whether applying config over live, where the manager's
// last applied set is last, changes nothing.
func isNoop(live, config map[string]any, sch *snode, last *Set) bool {
	changes, ok := reapplied(live, config, sch, last, false)
	return ok && changes.n == 0
}

// reapplied reports whether applying config over live, where the
// manager's last applied set is last, builds that set again node for node
// and changes nothing, or, with room, at most maxChanges values of live,
// each a scalar leaf outside any list whose live value is a scalar. It
// returns those leaves.
func reapplied(live, config map[string]any, sch *snode, last *Set, room bool) (leafChanges, bool) {
	if live == nil || last.Empty() || last.nodes[0].member || len(config) == 0 {
		return leafChanges{}, false
	}
	w := noopWalk{last: last, room: room}
	if !w.mapOK(live, config, sch, 0, false) {
		return leafChanges{}, false
	}
	return w.changes, true
}

// value checks config value c against live's value (present when inLive)
// at node last of the last set, whose schema is sch; member is the flag the
// node must have (set for list items).
func (w *noopWalk) value(live any, inLive bool, c any, sch *snode, last int32, member bool) bool {
	switch cv := c.(type) {
	case map[string]any:
		if sch.strategy() == stratAtomic {
			return w.leaf(live, inLive, c, last)
		}
		lm, _ := live.(map[string]any)
		return inLive && lm != nil && w.mapOK(lm, cv, sch, last, member)
	case []any:
		switch sch.strategy() {
		case stratSet:
			return w.setOK(live, inLive, cv, last, member)
		case stratKeyed:
			return w.keyedOK(live, inLive, cv, sch, last, member)
		}
		return w.leaf(live, inLive, c, last)
	}
	return kindOf(c) == kindScalar && (w.leaf(live, inLive, c, last) || w.room && w.change(live, inLive, c, last))
}

// leaf: a member without children whose live value is equal.
func (w *noopWalk) leaf(live any, inLive bool, c any, last int32) bool {
	n := &w.last.nodes[last]
	return n.member && n.lo == n.hi && inLive && deepEqual(live, c, MaxDepth-w.depth)
}

// change records that the leaf at node last changes from live to scalar c,
// when it is a member without children, its live value is a scalar, it is
// not inside a list and the walk has room.
func (w *noopWalk) change(live any, inLive bool, c any, last int32) bool {
	n := &w.last.nodes[last]
	if !n.member || n.lo != n.hi || !inLive || w.inList || w.changes.n == maxChanges || kindOf(live) != kindScalar {
		return false
	}
	w.changes.leaf[w.changes.n] = leafChange{node: last, v: c}
	w.changes.n++
	return true
}

// mapOK: the node's children are exactly cm's non-null fields, each
// unchanged in live's map lm. Past MaxDepth it gives up (for the full
// walk's error).
func (w *noopWalk) mapOK(lm, cm map[string]any, sch *snode, last int32, member bool) bool {
	if w.depth >= MaxDepth {
		return false
	}
	n := w.last.nodes[last]
	cnt := len(cm)
	if int(n.hi-n.lo) != cnt {
		// Null fields are not applied: count the others.
		cnt = 0
		for _, v := range cm {
			if v != nil {
				cnt++
			}
		}
	}
	if cnt == 0 {
		return n.member && n.lo == n.hi
	}
	if n.member != member || int(n.hi-n.lo) != cnt {
		return false
	}
	// Distinct child names, each a non-null field of cm, and as many as
	// cm has: the children are exactly cm's fields. (A false return ends
	// the walk: depth need not be restored.)
	w.depth++
	for c := n.lo; c < n.hi; c++ {
		cn := &w.last.nodes[c]
		cv := cm[cn.name]
		if cn.kind != elemField || cv == nil {
			return false
		}
		lv, lok := lm[cn.name]
		if !w.value(lv, lok, cv, sch.field(cn.name), c, false) {
			return false
		}
	}
	w.depth--
	return true
}

// listNode checks a list node's own flags and its number of children
// (n); it returns live's list.
func (w *noopWalk) listNode(live any, inLive bool, n int, last int32, member bool) ([]any, bool) {
	ll, isList := live.([]any)
	nd := &w.last.nodes[last]
	// An empty config list claims nothing (see claimed): the full walk
	// decides.
	if !inLive || !isList || n == 0 || n > 64 || int(nd.hi-nd.lo) != n || nd.member != member || w.depth >= MaxDepth {
		return nil, false
	}
	return ll, true
}

// setOK: the node's children are exactly c's items, all already in live.
func (w *noopWalk) setOK(live any, inLive bool, c []any, p int32, member bool) bool {
	ll, ok := w.listNode(live, inLive, len(c), p, member)
	if !ok {
		return false
	}
	var seen uint64
	var buf [64]byte
	for _, it := range c {
		if kindOf(it) != kindScalar {
			return false
		}
		name, _ := appendScalarText(buf[:0], it)
		i := w.last.childBytes(p, elemValue, name)
		if i < 0 {
			return false
		}
		bit := uint64(1) << uint(i-w.last.nodes[p].lo)
		cn := &w.last.nodes[i]
		if seen&bit != 0 || !cn.member || cn.lo != cn.hi {
			return false
		}
		seen |= bit
		found := false
		for _, lv := range ll {
			if scalarEqual(lv, it) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// keyedOK: the node's children are exactly c's items, each merging into
// its live item without change.
func (w *noopWalk) keyedOK(live any, inLive bool, c []any, sch *snode, p int32, member bool) bool {
	ll, ok := w.listNode(live, inLive, len(c), p, member)
	if !ok {
		return false
	}
	// An item's key fields are its identity: a change inside an item is
	// the full walk's. (A false return ends the walk: no need to restore.)
	in := w.inList
	w.inList = true
	// An item's walk that fails leaves depth where it failed, and a
	// failed match may be followed by another: each starts at depth.
	depth := w.depth + 1
	keys := sch.strat.keys
	isch := sch.item()
	var seen uint64
	var buf [64]byte
	inOrder := true
	for ci, it := range c {
		cm, ok := it.(map[string]any)
		if !ok {
			return false
		}
		name, err := appendKeyText(buf[:0], cm, keys)
		if err != nil {
			return false
		}
		i := w.last.childBytes(p, elemKey, name)
		if i < 0 {
			return false
		}
		bit := uint64(1) << uint(i-w.last.nodes[p].lo)
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		// Config lists usually keep live's order. While every earlier item
		// was found at its own position, those live items hold the earlier
		// (distinct) keys, so a match at position ci is the first match,
		// the one findKeyed returns. The item's own check compares its key
		// fields too, so passing it proves the match.
		if inOrder && ci < len(ll) {
			w.depth = depth
			if w.value(ll[ci], true, cm, isch, i, true) {
				continue
			}
			if sameKeys(ll[ci], cm, keys) {
				return false // the right item, and it differs
			}
		}
		inOrder = false
		li := findKeyed(ll, cm, keys)
		w.depth = depth
		if li < 0 || !w.value(ll[li], true, cm, isch, i, true) {
			return false
		}
	}
	w.inList, w.depth = in, depth-1
	return true
}

// maxChangeDepth bounds the depth of a changed leaf applyChanges handles.
const maxChangeDepth = 16

// applyChanges returns what the full walk returns for a re-apply by the
// owner of managed[applyIdx] that reapplied accepted with changes: live
// with those leaves set to their config values, and the record as it was
// (the applier builds its last set again, and no entry loses anything).
// It reports false, for the full walk to decide, when another entry has a
// node at the path of a changed leaf (a conflict, or a field it loses) or
// a leaf lies deeper than maxChangeDepth.
func applyChanges(live map[string]any, managed Managed, applyIdx int, ch *leafChanges) (Result, bool) {
	last := managed[applyIdx].Set
	changes := ch.leaf[:ch.n]
	var paths [maxChanges][maxChangeDepth]int32
	var depths [maxChanges]int
	for i, ch := range changes {
		n := last.pathTo(ch.node, paths[i][:])
		if n < 0 {
			return Result{}, false
		}
		for j, e := range managed {
			if j != applyIdx && e.Set.holdsPath(last, paths[i][:n]) {
				return Result{}, false
			}
		}
		depths[i] = n
	}
	root := cloneMap(live)
	// The maps copied so far, by their node in last: changes share them.
	var copied [maxChangeDepth]struct {
		node int32
		m    map[string]any
	}
	nc := 0
	for i, ch := range changes {
		path := paths[i][:depths[i]]
		m := root
	parents:
		for _, p := range path[:len(path)-1] {
			for _, c := range copied[:nc] {
				if c.node == p {
					m = c.m
					continue parents
				}
			}
			name := last.nodes[p].name
			child := cloneMap(m[name].(map[string]any)) // reapplied found a map
			m[name] = child
			m = child
			if nc < len(copied) {
				copied[nc].node, copied[nc].m = p, child
				nc++
			}
		}
		m[last.nodes[ch.node].name] = deepCopy(ch.v)
	}
	return Result{Object: root, Managed: slices.Clone(managed), ObjectChanged: true, Changed: true}, true
}

// pathTo writes into path the nodes from the root's child down to node x
// (its ancestors first, x last) and returns their number, or -1 when
// path is too short. A node's parent is the node whose block of children
// holds it.
func (s *Set) pathTo(x int32, path []int32) int {
	n := 0
	for x != 0 {
		if n == len(path) {
			return -1
		}
		path[n] = x
		n++
		x = s.parent(x)
		if x < 0 {
			return -1
		}
	}
	slices.Reverse(path[:n])
	return n
}

// parent returns the parent of node x, or -1 if none.
func (s *Set) parent(x int32) int32 {
	for p := range s.nodes {
		if n := &s.nodes[p]; n.lo <= x && x < n.hi {
			return int32(p)
		}
	}
	return -1
}

// holdsPath reports whether s has a node at the path that nodes of set
// last spell, from the root down.
func (s *Set) holdsPath(last *Set, nodes []int32) bool {
	at := s.root()
	for _, p := range nodes {
		if at = s.child(at, last.nodes[p].kind, last.nodes[p].name); at < 0 {
			return false
		}
	}
	return true
}
