package ownership

import (
	"slices"
	"strings"
)

// intern returns the element name in buf as a string, reusing the string
// of the last applied set or another entry when one holds the element, so
// that steady-state applies allocate no names.
func (w *applyWalk) intern(kind uint8, buf []byte, p int32, off int) string {
	if i := w.last.childBytes(p, kind, buf); i >= 0 {
		return w.last.nodes[i].name
	}
	for j, s := range w.others {
		if i := s.childBytes(w.ost[off+j], kind, buf); i >= 0 {
			return s.nodes[i].name
		}
	}
	return string(buf)
}

// sortItems sorts the item stack from mark by name and reports the first
// duplicate name, if any.
func (w *applyWalk) sortItems(mark int) (string, bool) {
	items := w.items[mark:]
	slices.SortFunc(items, func(a, b itemRef) int { return strings.Compare(a.name, b.name) })
	for i := 1; i < len(items); i++ {
		if items[i].name == items[i-1].name {
			return items[i].name, true
		}
	}
	return "", false
}

// reserve appends a block of n children of nb to the new set.
func (w *applyWalk) reserve(nb int32, n int) int32 {
	lo := int32(len(w.nodes))
	if n == 0 {
		return lo // a leaf keeps the empty block at 0
	}
	w.nodes = append(w.nodes, make([]node, n)...)
	w.nodes[nb].lo, w.nodes[nb].hi = lo, lo+int32(n)
	return lo
}

type appendedItem struct {
	idx int
	v   any
}

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
		w.nodes[nb].member = true
	}
	mark := len(w.items)
	defer func() { w.items = w.items[:mark] }()
	for i, it := range c {
		if kindOf(it) != kindScalar {
			return nil, false, w.errorf("set item of type %T is not a scalar", it)
		}
		w.keybuf, _ = appendScalarText(w.keybuf[:0], it)
		w.items = append(w.items, itemRef{name: w.intern(elemValue, w.keybuf, p, off), idx: i})
	}
	if dup, ok := w.sortItems(mark); ok {
		return nil, false, w.errorf("duplicate set item %s", dup)
	}
	lo := w.reserve(nb, len(c))
	var appended []appendedItem
	for j := range c {
		ref := w.items[mark+j]
		w.nodes[lo+int32(j)] = node{kind: elemValue, name: ref.name, member: true}
		it := c[ref.idx]
		if slices.ContainsFunc(ll, func(lv any) bool { return scalarEqual(lv, it) }) {
			continue
		}
		off2 := w.descend(off, elemValue, ref.name)
		w.changedHere(off2)
		w.ascend(off2)
		appended = append(appended, appendedItem{ref.idx, deepCopy(it)})
	}
	out, pruned := w.pruneItems(ll, p, off, nb, nil, nil, func() []string { return w.itemTexts(ll, &snode{strat: AsSet()}) }, nil)
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
		w.nodes[nb].member = true
	}
	keys := sch.strat.keys
	isch := sch.item()
	mark := len(w.items)
	defer func() { w.items = w.items[:mark] }()
	for i, it := range c {
		cm, ok := it.(map[string]any)
		if !ok {
			return nil, false, w.errorf("keyed list item of type %T is not an object", it)
		}
		if err := w.keyBytes(cm, keys); err != nil {
			return nil, false, w.errorf("%v", err)
		}
		w.items = append(w.items, itemRef{name: w.intern(elemKey, w.keybuf, p, off), idx: i})
	}
	if dup, ok := w.sortItems(mark); ok {
		return nil, false, w.errorf("duplicate list item [%s]", dup)
	}
	lo := w.reserve(nb, len(c))
	cmark := w.cursors(off)
	defer func() { w.cur = w.cur[:cmark] }()
	// Config lists usually keep live's order. Over the leading run of
	// positions where live's item has the config item's keys, live's
	// earlier items hold the earlier config items' (distinct) keys, so the
	// item at the same position is the first match, as findKeyed finds.
	inOrder := 0
	for inOrder < len(c) && inOrder < len(ll) && sameKeys(ll[inOrder], c[inOrder].(map[string]any), keys) {
		inOrder++
	}
	var out []any // copy of ll once an item changes
	var appended []appendedItem
	for j := range c {
		ref := w.items[mark+j]
		in := lo + int32(j)
		w.nodes[in] = node{kind: elemKey, name: ref.name, member: true}
		cm := c[ref.idx].(map[string]any)
		li := ref.idx
		if li >= inOrder {
			li = findKeyed(ll, cm, keys)
		}
		var lv any
		if li >= 0 {
			lv = ll[li]
		}
		off2 := w.descendSorted(off, cmark, elemKey, ref.name)
		v, ch, err := w.value(lv, li >= 0, cm, isch, in, w.last.child(p, elemKey, ref.name), off2)
		w.ascend(off2)
		if err != nil {
			return nil, false, err
		}
		switch {
		case li < 0:
			appended = append(appended, appendedItem{ref.idx, v})
		case ch:
			if out == nil {
				out = slices.Clone(ll)
			}
			out[li] = v
		}
	}
	out, pruned := w.pruneItems(ll, p, off, nb, isch, keys, func() []string { return w.itemTexts(ll, sch) }, out)
	return w.assemble(l, ll, lok && isList, out, pruned, appended)
}

// keyBytes writes a keyed item's element name into w.keybuf.
func (w *applyWalk) keyBytes(m map[string]any, keys []string) error {
	b, err := appendKeyText(w.keybuf[:0], m, keys)
	w.keybuf = b
	return err
}

// appendKeyText appends a keyed item's element name: its key fields, as
// name=value pairs separated by commas.
func appendKeyText(b []byte, m map[string]any, keys []string) ([]byte, error) {
	for i, k := range keys {
		v, ok := m[k]
		if !ok || v == nil {
			return b, &keyError{k, "missing"}
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = appendName(b, k)
		b = append(b, '=')
		var err error
		if b, err = appendScalarText(b, v); err != nil {
			return b, &keyError{k, "not a scalar"}
		}
	}
	return b, nil
}

type keyError struct{ key, why string }

func (e *keyError) Error() string { return "list item key field " + e.key + " is " + e.why }

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
func (w *applyWalk) pruneItems(ll []any, p int32, off int, nb int32, isch *snode, keys []string, texts func() []string, out []any) ([]any, bool) {
	if p < 0 || len(ll) == 0 {
		return out, false
	}
	last := w.last.nodes
	mine := Set{nodes: w.nodes}
	var lt []string
	removed := false
	for pc := last[p].lo; pc < last[p].hi; pc++ {
		pn := &last[pc]
		if pn.kind != elemKey && pn.kind != elemValue {
			continue
		}
		if mine.child(nb, pn.kind, pn.name) >= 0 {
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
			if nv, ch := w.prune(ll[li], isch, pc, off2, keys); ch {
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

// assemble builds the merged list from the live list, its working copy,
// removal marks and appended items (put back in config order).
func (w *applyWalk) assemble(l any, ll []any, wasList bool, out []any, removed bool, appended []appendedItem) (any, bool, error) {
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
	slices.SortFunc(appended, func(a, b appendedItem) int { return a.idx - b.idx })
	for _, a := range appended {
		out = append(out, a.v)
	}
	if out == nil {
		out = []any{}
	}
	return out, true, nil
}
