package ownership

// A controller's first apply to an object, before it owns anything there,
// is the common case of a controller with more objects than events: the
// status write of nearly every event. applyFirst recognizes the usual
// shape of it, a small config of granular maps and scalar leaves whose
// changed paths no other entry holds a node at, and builds the result the
// full walk would, node for node, without the walk's stacks, frames and
// record rebuild: with nothing last applied there is nothing to prune, and
// with no other entry at a changed path there is nothing to take from
// anyone and no conflict. Anything else (a list, an atomic map, a null
// that leaves a map claiming nothing, a larger config, a change where
// another entry holds a node) makes it give up, and Apply takes the full
// walk.
//
// Fast path, kept by BenchmarkApplyFirstStatusField here and
// store's BenchmarkApplyStatusFirst (a controller's first status apply to
// an object another manager created); FuzzOwnership and
// TestApplyFirstMatchesTheWalk cross-check it against the full walk.

// Bounds of the configs applyFirst takes: fields per map, leaves in all,
// map depth, and entries in the record.
const (
	maxFirstFields  = 16
	maxFirstLeaves  = 16
	maxFirstDepth   = 8
	maxFirstEntries = 8
)

// firstWalk builds the applier's set in nodes, laid out as the full walk
// lays it out (see Set).
type firstWalk struct {
	nodes   []node
	managed Managed
}

// firstFrame is, for each entry of the record, its node at the current
// path, or -1.
type firstFrame [maxFirstEntries]int32

// applyFirst returns what the full walk returns for manager's apply of
// config over live when manager has no Apply entry in managed (see
// above), or false for the full walk to decide.
func applyFirst(live, config map[string]any, manager string, managed Managed, sch *snode) (Result, bool) {
	leaves := 0
	if live == nil || len(managed) > maxFirstEntries || !smallConfig(config, sch, 0, &leaves) {
		return Result{}, false
	}
	w := firstWalk{nodes: make([]node, 1, 1+leaves+2), managed: managed}
	var root firstFrame
	for i, e := range managed {
		root[i] = e.Set.root()
	}
	out, changed, ok := w.mergeMap(0, live, config, sch, root)
	if !ok {
		return Result{}, false
	}
	obj := live
	if changed {
		obj = out
	}
	rec := make(Managed, 0, len(managed)+1)
	for _, e := range managed {
		if !e.Set.Empty() { // as the full walk drops empty entries
			rec = append(rec, e)
		}
	}
	rec = append(rec, Entry{Manager: manager, Operation: OpApply, Set: &Set{nodes: w.nodes}})
	return Result{Object: obj, Managed: rec, ObjectChanged: changed, Changed: true}, true
}

// mergeMap merges config map cm into live's map lm (nil when live has no
// map here) at node built of the new set, whose schema is sch and whose
// nodes in the record's entries are at. smallConfig has checked cm's
// shape. It reports false where the full walk must decide.
func (w *firstWalk) mergeMap(built int32, lm, cm map[string]any, sch *snode, at firstFrame) (map[string]any, bool, bool) {
	var arr [maxFirstFields]keyValue
	keys := arr[:0]
	for k, v := range cm {
		if v != nil {
			keys = append(keys, keyValue{k, v})
		}
	}
	sortKeyValues(keys)
	lo := int32(len(w.nodes))
	for _, kv := range keys {
		w.nodes = append(w.nodes, node{kind: elemField, name: kv.k})
	}
	w.nodes[built].lo, w.nodes[built].hi = lo, int32(len(w.nodes))
	var out map[string]any // a copy of lm, made at the first change
	if lm == nil {
		out = make(map[string]any, len(keys))
	}
	for j, kv := range keys {
		var child firstFrame
		for i, e := range w.managed {
			child[i] = e.Set.child(at[i], elemField, kv.k)
		}
		lv, inLive := lm[kv.k]
		v, changed, ok := w.value(lo+int32(j), lv, inLive, kv.v, sch.field(kv.k), child)
		if !ok {
			return nil, false, false
		}
		if changed {
			if out == nil {
				out = cloneMap(lm)
			}
			out[kv.k] = v
		}
	}
	if out != nil {
		return out, true, true
	}
	return lm, false, true
}

// value merges config value c (not null) into live's value lv (present
// when inLive) at node built, as mergeMap does.
func (w *firstWalk) value(built int32, lv any, inLive bool, c any, sch *snode, at firstFrame) (any, bool, bool) {
	if cm, isMap := c.(map[string]any); isMap {
		lm, liveMap := lv.(map[string]any)
		if inLive && !liveMap && w.held(&at) {
			return nil, false, false // a type change another entry sees
		}
		return w.mergeMap(built, lm, cm, sch, at)
	}
	w.nodes[built].member = true
	if inLive && deepEqual(lv, c) {
		return lv, false, true
	}
	if w.held(&at) {
		return nil, false, false // a conflict, or a field an entry loses
	}
	return deepCopy(c), true, true
}

// held reports whether an entry of the record has a node at the path.
func (w *firstWalk) held(at *firstFrame) bool {
	for i := range w.managed {
		if at[i] >= 0 {
			return true
		}
	}
	return false
}

// smallConfig reports, before anything is built, whether config map cm
// (of schema sch, at depth) has the shape applyFirst takes: granular maps
// of at most maxFirstFields fields, each claiming something, and in all
// at most maxFirstLeaves scalar leaves (counted in leaves).
func smallConfig(cm map[string]any, sch *snode, depth int, leaves *int) bool {
	if depth == maxFirstDepth || len(cm) > maxFirstFields {
		return false
	}
	n := 0
	for k, v := range cm {
		switch x := v.(type) {
		case nil:
			continue
		case map[string]any:
			if fs := sch.field(k); fs.strategy() == stratAtomic || !smallConfig(x, fs, depth+1, leaves) {
				return false
			}
		default:
			if *leaves++; *leaves > maxFirstLeaves || kindOf(v) != kindScalar {
				return false
			}
		}
		n++
	}
	return n > 0 // an empty map is claimed: the full walk's
}
