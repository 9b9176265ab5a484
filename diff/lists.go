package diff

import (
	"reflect"
	"strconv"
)

// slice compares two slices of plan p's type; tag is the list declaration
// of the field holding them, which ListKeys and ListSets options override.
func (d *differ) slice(p *typePlan, tag listSpec, w, g reflect.Value, s scope) {
	if w.IsNil() != g.IsNil() && !d.cfg.bothEmpty(w.Len(), g.Len()) {
		d.changed(w, g)
		return
	}
	if w.Len() == g.Len() && (w.Len() == 0 || w.Pointer() == g.Pointer()) {
		return
	}
	if d.seen(w.Pointer(), g.Pointer(), p.typ) {
		return
	}
	d.depth++
	defer func() { d.depth-- }()
	spec := d.listSpec(tag)
	if spec.mode != listPositional && s.free && d.probing == 0 && w.Len() == g.Len() && d.equalInOrder(p.elem, w, g, s) {
		// Equal item by item: equal as keyed lists and as sets too,
		// found without computing keys. Not inside another probe: a
		// failed probe is followed by the matching below, which walks
		// the items again, so probes in probes walked lists nested in
		// declared lists (a list of lists under ListSets, whose inner
		// lists share its declaration) 2^depth times.
		return
	}
	switch spec.mode {
	case listKeyed:
		if d.keyed(p.elem, spec.keys, w, g, s) {
			return
		}
	case listSet:
		if d.set(w, g, s) {
			return
		}
	}
	d.positional(p.elem, w, g, s)
}

// equalInOrder reports whether the lists, of equal length, are equal item
// by item.
func (d *differ) equalInOrder(elem *typePlan, w, g reflect.Value, s scope) bool {
	d.probing++
	for i := range w.Len() {
		wi, gi := w.Index(i), g.Index(i)
		if scalarEqual(elem, wi, gi) {
			continue
		}
		cs, _ := d.enter(s, Element{Kind: IndexElem, Index: i}, item{wi, gi})
		d.value(elem, wi, gi, cs)
		d.leave(cs)
		if d.probeFailed {
			break
		}
	}
	d.probing--
	failed := d.probeFailed
	if d.probing == 0 {
		d.probeFailed = false
		// Pairs remembered for cycle detection during the probe were not
		// reported on; forget them so the real comparison walks them.
		d.visited = nil
	}
	return !failed
}

// positional compares items by position; items past the shorter list are
// Added or Removed.
func (d *differ) positional(elem *typePlan, w, g reflect.Value, s scope) {
	wn, gn := w.Len(), g.Len()
	n := min(wn, gn)
	for i := range n {
		wi, gi := w.Index(i), g.Index(i)
		if scalarEqual(elem, wi, gi) {
			continue
		}
		cs, ok := d.enter(s, Element{Kind: IndexElem, Index: i}, item{wi, gi})
		if ok {
			d.value(elem, wi, gi, cs)
		}
		d.leave(cs)
	}
	for i := n; i < wn; i++ {
		wi := w.Index(i)
		cs, ok := d.enter(s, Element{Kind: IndexElem, Index: i}, item{w: wi})
		if ok {
			d.reportValues(Removed, wi, reflect.Value{})
		}
		d.leave(cs)
	}
	for i := n; i < gn; i++ {
		gi := g.Index(i)
		cs, ok := d.enter(s, Element{Kind: IndexElem, Index: i}, item{w: gi})
		if ok {
			d.reportValues(Added, reflect.Value{}, gi)
		}
		d.leave(cs)
	}
}

// keyed matches items by key fields: want's items in want's order, then
// got's new items in got's order. It does nothing and returns false when
// the keys do not identify the items.
func (d *differ) keyed(elem *typePlan, names []string, w, g reflect.Value, s scope) bool {
	wk, widx, ok := itemKeys(w, names)
	if !ok {
		return false
	}
	gk, gidx, ok := itemKeys(g, names)
	if !ok {
		return false
	}
	for i, k := range wk {
		wi := w.Index(i)
		j, found := gidx[k.id]
		var gi reflect.Value
		if found {
			gi = g.Index(j)
		}
		cs, in := d.enter(s, Element{Kind: KeyElem, Keys: k.fields}, item{wi, gi})
		if in {
			if found {
				d.value(elem, wi, gi, cs)
			} else {
				d.reportValues(Removed, wi, reflect.Value{})
			}
		}
		d.leave(cs)
	}
	for j, k := range gk {
		if _, found := widx[k.id]; found {
			continue
		}
		gj := g.Index(j)
		cs, in := d.enter(s, Element{Kind: KeyElem, Keys: k.fields}, item{w: gj})
		if in {
			d.reportValues(Added, reflect.Value{}, gj)
		}
		d.leave(cs)
	}
	return true
}

// set compares lists of scalars as sets. It does nothing and returns false
// when an item is not a scalar.
func (d *differ) set(w, g reflect.Value, s scope) bool {
	wv, wids, wset, ok := itemValues(w)
	if !ok {
		return false
	}
	gv, gids, gset, ok := itemValues(g)
	if !ok {
		return false
	}
	d.setSide(Removed, w, wv, wids, gset, s)
	d.setSide(Added, g, gv, gids, wset, s)
	return true
}

// setSide reports the values of one side that the other lacks, once each.
func (d *differ) setSide(k ChangeKind, list reflect.Value, values []any, ids []string, other map[string]bool, s scope) {
	done := make(map[string]bool)
	for i, v := range values {
		if other[ids[i]] || done[ids[i]] {
			continue
		}
		done[ids[i]] = true
		x := list.Index(i)
		cs, in := d.enter(s, Element{Kind: ValueElem, Value: v}, item{w: x})
		if in {
			d.reportValues(k, x, x)
		}
		d.leave(cs)
	}
}

// keyName names a map key as encoding/json does: strings as they are,
// integers in decimal; other scalars as in paths (floats in shortest form,
// true, false), and composite keys as JSON.
func keyName(k reflect.Value) string {
	switch k.Kind() {
	case reflect.String:
		return k.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10)
	}
	if k.Kind() == reflect.Interface && !k.IsNil() {
		return keyName(k.Elem())
	}
	if v, ok := valueScalar(k); ok {
		if s, isString := v.(string); isString {
			return s
		}
		return formatScalar(v)
	}
	return formatValue(iface(k))
}
