package diff

import "reflect"

// slice hashes a list the way Diff matches it: by position, as keyed items
// in any order, or as a set of distinct scalars.
func (h *hasher) slice(p *typePlan, tag listSpec, v reflect.Value, s scope) (empty bool) {
	if v.IsNil() && !h.cfg.equateEmpty {
		h.u64(tNull)
		return true
	}
	if v.Len() > 0 && h.enterRef(v.Pointer(), p.typ) {
		h.u64(tCycle)
		h.leaveRef(v.Pointer(), p.typ)
		return false
	}
	defer func() {
		if v.Len() > 0 {
			h.leaveRef(v.Pointer(), p.typ)
		}
	}()
	switch spec := h.listSpec(tag); {
	case spec.mode == listKeyed && s.free:
		// Without filters, the items' multiset is enough: it is the
		// same for lists Diff finds equal by key or by position.
		h.unordered(p.elem, v, s)
	case spec.mode == listKeyed && h.keyed(p.elem, spec.keys, v, s):
	case spec.mode == listSet && h.set(p.elem, v, s):
	default:
		h.positional(p.elem, v, s)
	}
	return v.Len() == 0
}

// keyed hashes a keyed list as the sum of its items' hashes, each under
// its key path. It does nothing and returns false when the keys do not
// identify the items.
func (h *hasher) keyed(elem *typePlan, names []string, v reflect.Value, s scope) bool {
	keys, _, ok := itemKeys(v, names)
	if !ok {
		return false
	}
	var sum uint64
	for i, k := range keys {
		x := v.Index(i)
		cs, in := h.enter(s, Element{Kind: KeyElem, Keys: k.fields}, item{w: x})
		if in {
			saved := h.begin("")
			h.value(elem, x, cs)
			sum += h.end(saved)
		}
		h.leave(cs)
	}
	h.u64(tMap)
	h.u64(sum)
	return true
}

// set hashes a list of scalars as the sum of its distinct items' hashes.
// It does nothing and returns false when an item is not a scalar.
func (h *hasher) set(elem *typePlan, v reflect.Value, s scope) bool {
	values, ids, _, ok := itemValues(v)
	if !ok {
		return false
	}
	var sum uint64
	done := make(map[string]bool, len(ids))
	for i, id := range ids {
		if done[id] {
			continue
		}
		done[id] = true
		x := v.Index(i)
		cs, in := h.enter(s, Element{Kind: ValueElem, Value: values[i]}, item{w: x})
		if in {
			saved := h.begin("")
			h.value(elem, x, cs)
			sum += h.end(saved)
		}
		h.leave(cs)
	}
	h.u64(tMap)
	h.u64(sum)
	return true
}

// unordered hashes a list as the sum of its items' hashes.
func (h *hasher) unordered(elem *typePlan, v reflect.Value, s scope) {
	var sum uint64
	for i := range v.Len() {
		saved := h.begin("")
		h.value(elem, v.Index(i), s)
		sum += h.end(saved)
	}
	h.u64(tMap)
	h.u64(sum)
}

func (h *hasher) positional(elem *typePlan, v reflect.Value, s scope) {
	h.u64(tList)
	for i := range v.Len() {
		x := v.Index(i)
		cs, ok := h.enter(s, Element{Kind: IndexElem, Index: i}, item{w: x})
		if ok {
			h.u64(uint64(i))
			h.value(elem, x, cs)
		}
		h.leave(cs)
	}
	h.u64(tList)
}
