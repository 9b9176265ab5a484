package ownership

import "slices"

// emptyMap reports whether v is a map without keys: one that pruning
// emptied is removed with them unless someone owns it.
func emptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
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
