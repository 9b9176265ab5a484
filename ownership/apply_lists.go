package ownership

import "slices"

// mergeSet merges a list of scalars by value: live items stay in place,
// config items not in live are appended in config order, and items the
// manager applied last time but no longer applies are removed unless
// another entry owns them.
func (w *applyWalk) mergeSet(l any, lok bool, c []any, nb, p int32, off int) (any, bool, error) {
	ll, isList := l.([]any)
	if lok && !isList {
		w.changedHere(off)
	}
	if len(c) == 0 {
		w.b.nodes[nb].member = true
	}
	var appended []any
	for _, it := range c {
		if kindOf(it) != kindScalar {
			return nil, false, w.errorf("set item of type %T is not a scalar", it)
		}
		b, _ := appendScalarText(w.keybuf[:0], it)
		w.keybuf = b
		text := string(b)
		w.b.add(nb, elemValue, text, true)
		found := false
		for _, lv := range ll {
			if scalarEqual(lv, it) {
				found = true
				break
			}
		}
		if !found {
			off2 := w.descend(off, elemValue, text)
			w.changedHere(off2)
			w.ascend(off2)
			appended = append(appended, deepCopy(it))
		}
	}
	out, pruned := w.pruneItems(ll, p, off, nb, nil, func() []string { return w.itemTexts(ll, &snode{strat: AsSet()}) }, nil)
	return w.assemble(l, ll, lok && isList, out, pruned, appended)
}

// mergeKeyed merges a list of objects identified by key fields. Items
// merge field by field; live order is kept and new items are appended in
// config order.
func (w *applyWalk) mergeKeyed(l any, lok bool, c []any, sch *snode, nb, p int32, off int) (any, bool, error) {
	ll, isList := l.([]any)
	if lok && !isList {
		w.changedHere(off)
	}
	if len(c) == 0 {
		w.b.nodes[nb].member = true
	}
	keys := sch.strat.keys
	isch := sch.item()
	var out []any // copy of ll once an item changes
	var appended []any
	for _, it := range c {
		cm, ok := it.(map[string]any)
		if !ok {
			return nil, false, w.errorf("keyed list item of type %T is not an object", it)
		}
		text, err := w.keyText(cm, keys)
		if err != nil {
			return nil, false, w.errorf("%v", err)
		}
		in := w.b.add(nb, elemKey, text, true)
		li := findKeyed(ll, cm, keys)
		var lv any
		if li >= 0 {
			lv = ll[li]
		}
		off2 := w.descend(off, elemKey, text)
		v, ch, err := w.value(lv, li >= 0, cm, isch, in, w.last.child(p, elemKey, text), off2)
		w.ascend(off2)
		if err != nil {
			return nil, false, err
		}
		switch {
		case li < 0:
			appended = append(appended, v)
		case ch:
			if out == nil {
				out = slices.Clone(ll)
			}
			out[li] = v
		}
	}
	out, pruned := w.pruneItems(ll, p, off, nb, isch, func() []string { return w.itemTexts(ll, sch) }, out)
	return w.assemble(l, ll, lok && isList, out, pruned, appended)
}

// findKeyed returns the index of the live item whose key fields equal
// cm's, or -1.
func findKeyed(ll []any, cm map[string]any, keys []string) int {
next:
	for i, it := range ll {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		for _, k := range keys {
			v, ok := m[k]
			if !ok || !scalarEqual(v, cm[k]) {
				continue next
			}
		}
		return i
	}
	return -1
}

// pruneItems removes from ll the items the last applied set holds that the
// config no longer has and nobody else owns, and prunes inside items that
// stay. out is the working copy of ll (nil if untouched).
func (w *applyWalk) pruneItems(ll []any, p int32, off int, nb int32, isch *snode, texts func() []string, out []any) ([]any, bool) {
	if p < 0 || len(ll) == 0 {
		return out, false
	}
	last := w.last.nodes
	var lt []string
	removed := false
	for pc := last[p].lo; pc < last[p].hi; pc++ {
		pn := &last[pc]
		if pn.kind != elemKey && pn.kind != elemValue {
			continue
		}
		if w.b.hasChild(nb, pn.kind, pn.name) {
			continue
		}
		if lt == nil {
			lt = texts()
		}
		li := slices.Index(lt, pn.name)
		if li < 0 {
			continue
		}
		off2 := w.descend(off, pn.kind, pn.name)
		if pn.member && !w.owned(off2) {
			if out == nil {
				out = slices.Clone(ll)
			}
			out[li] = removedItem{}
			removed = true
		} else if pn.lo < pn.hi {
			if nv, ch := w.prune(ll[li], isch, pc, off2); ch {
				if out == nil {
					out = slices.Clone(ll)
				}
				out[li] = nv
			}
		}
		w.ascend(off2)
	}
	return out, removed
}

// hasChild reports whether builder node parent has child (kind, name).
func (b *builder) hasChild(parent int32, kind uint8, name string) bool {
	for c := b.nodes[parent].first; c >= 0; c = b.nodes[c].next {
		if b.nodes[c].kind == kind && b.nodes[c].name == name {
			return true
		}
	}
	return false
}

// assemble builds the merged list from the live list, its working copy,
// removal marks and appended items.
func (w *applyWalk) assemble(l any, ll []any, wasList bool, out []any, removed bool, appended []any) (any, bool, error) {
	if out == nil && len(appended) == 0 && wasList {
		return l, false, nil
	}
	if out == nil {
		out = make([]any, 0, len(ll)+len(appended))
		out = append(out, ll...)
	}
	if removed {
		out = slices.DeleteFunc(out, func(v any) bool { _, ok := v.(removedItem); return ok })
	}
	out = append(out, appended...)
	if out == nil {
		out = []any{}
	}
	return out, true, nil
}
