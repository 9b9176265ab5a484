package diff

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
)

// any compares two dynamic values: JSON-like trees without reflection,
// anything else through its type's plan. Fast path (BenchmarkEqualPodTree:
// 0 allocs; 176 through the reflective walk, which handles trees too):
// treeMap, treeList and treeEqualScalar walk decoded JSON without
// reflection.
func (d *differ) any(w, g any, s scope) {
	switch wv := w.(type) {
	case nil:
		if g == nil {
			return
		}
	case map[string]any:
		if gv, ok := g.(map[string]any); ok {
			d.treeMap(wv, gv, s)
			return
		}
	case []any:
		if gv, ok := g.([]any); ok {
			d.treeList(wv, gv, s)
			return
		}
	default:
		// Unequal scalars take the general way below, to the same report.
		if treeEqualScalar(w, g) {
			return
		}
	}
	if !d.cfg.exactNums && d.numbers(w, g) {
		return
	}
	wt, gt := reflect.TypeOf(w), reflect.TypeOf(g)
	if wt != gt {
		d.report(Changed, w, g)
		return
	}
	if wt == nil {
		return
	}
	d.depth++
	d.value(planOf(wt), reflect.ValueOf(w), reflect.ValueOf(g), s)
	d.depth--
}

// numbers compares w and g by value when both are numbers, and reports
// whether they were.
func (d *differ) numbers(w, g any) bool {
	a, ok := numberOf(w)
	if !ok {
		return false
	}
	b, ok := numberOf(g)
	if !ok {
		return false
	}
	if !a.equal(b) {
		d.report(Changed, w, g)
	}
	return true
}

// treeEqualScalar reports whether w and g are equal strings, bools or
// float64s: the common leaves of decoded JSON, compared without a push.
func treeEqualScalar(w, g any) bool {
	switch wv := w.(type) {
	case string:
		gv, ok := g.(string)
		return ok && gv == wv
	case bool:
		gv, ok := g.(bool)
		return ok && gv == wv
	case float64:
		gv, ok := g.(float64)
		return ok && floatEqual(gv, wv)
	}
	return false
}

func (d *differ) treeMap(w, g map[string]any, s scope) {
	if (w == nil) != (g == nil) && !d.cfg.bothEmpty(len(w), len(g)) {
		d.report(Changed, w, g)
		return
	}
	if len(w) == 0 && len(g) == 0 {
		return
	}
	if d.depth >= cycleDepth && d.seen(reflect.ValueOf(w).Pointer(), reflect.ValueOf(g).Pointer(), nil) {
		return
	}
	if d.nest >= MaxDepth {
		if reflect.ValueOf(w).Pointer() != reflect.ValueOf(g).Pointer() {
			d.report(Changed, w, g)
		}
		return
	}
	d.depth++
	d.nest++
	defer func() { d.depth--; d.nest-- }()
	start, matched := len(d.changes), 0
	for k, wv := range w {
		gv, ok := g[k]
		if ok {
			matched++
			if treeEqualScalar(wv, gv) {
				continue
			}
		}
		cs, in := d.enter(s, Element{Kind: FieldElem, Name: k}, item{})
		if in {
			if ok {
				d.any(wv, gv, cs)
			} else {
				d.report(Removed, wv, nil)
			}
		}
		d.leave(cs)
	}
	if matched < len(g) {
		d.treeAdded(w, g, s)
	}
	d.sortFrom(start)
}

// treeAdded reports the fields of g that w lacks as Added.
func (d *differ) treeAdded(w, g map[string]any, s scope) {
	for k, gv := range g {
		if _, ok := w[k]; ok {
			continue
		}
		cs, in := d.enter(s, Element{Kind: FieldElem, Name: k}, item{})
		if in {
			d.report(Added, nil, gv)
		}
		d.leave(cs)
	}
}

var anySliceTyp = reflect.TypeFor[[]any]()

func (d *differ) treeList(w, g []any, s scope) {
	if (w == nil) != (g == nil) && !d.cfg.bothEmpty(len(w), len(g)) {
		d.report(Changed, w, g)
		return
	}
	if len(w) == 0 && len(g) == 0 {
		return
	}
	if spec := d.listSpec(listSpec{}); spec.mode != listPositional || !s.free {
		// Keyed lists, sets and item filters need to look into items:
		// take the reflective path.
		d.value(planOf(anySliceTyp), reflect.ValueOf(w), reflect.ValueOf(g), s)
		return
	}
	if d.depth >= cycleDepth && d.seen(reflect.ValueOf(w).Pointer(), reflect.ValueOf(g).Pointer(), nil) {
		return
	}
	if d.nest >= MaxDepth {
		if reflect.ValueOf(w).Pointer() != reflect.ValueOf(g).Pointer() || len(w) != len(g) {
			d.report(Changed, w, g)
		}
		return
	}
	d.depth++
	d.nest++
	defer func() { d.depth--; d.nest-- }()
	n := min(len(w), len(g))
	for i := range n {
		if treeEqualScalar(w[i], g[i]) {
			continue
		}
		cs, _ := d.enter(s, Element{Kind: IndexElem, Index: i}, item{})
		d.any(w[i], g[i], cs)
		d.leave(cs)
	}
	for i := n; i < len(w); i++ {
		cs, _ := d.enter(s, Element{Kind: IndexElem, Index: i}, item{})
		d.report(Removed, w[i], nil)
		d.leave(cs)
	}
	for i := n; i < len(g); i++ {
		cs, _ := d.enter(s, Element{Kind: IndexElem, Index: i}, item{})
		d.report(Added, nil, g[i])
		d.leave(cs)
	}
}

// number is a numeric value of any Go type, for comparison by value.
type number struct {
	class byte // 'i' int64, 'u' uint64 beyond int64, 'f' float64 not integral or beyond range
	i     int64
	u     uint64
	f     float64
}

// numberOf classifies v if it is a number: any Go integer or float type
// (named or not) or a json.Number. Integral floats in range become
// integers, so that each value has one form.
func numberOf(v any) (number, bool) {
	switch x := v.(type) {
	case float64:
		return floatNumber(x), true
	case int:
		return number{class: 'i', i: int64(x)}, true
	case int64:
		return number{class: 'i', i: x}, true
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return number{class: 'i', i: i}, true
		}
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return number{class: 'u', u: u}, true
		}
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			return floatNumber(f), true
		}
		return number{}, false
	case nil, string, bool, map[string]any, []any:
		return number{}, false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return number{class: 'i', i: rv.Int()}, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintNumber(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return floatNumber(rv.Float()), true
	}
	return number{}, false
}

// uintNumber is the number of an unsigned integer: an integer unless it is
// beyond int64.
func uintNumber(u uint64) number {
	if u > math.MaxInt64 {
		return number{class: 'u', u: u}
	}
	return number{class: 'i', i: int64(u)}
}

func floatNumber(f float64) number {
	switch {
	case f != math.Trunc(f) || math.IsInf(f, 0):
	case f >= -(1<<63) && f < 1<<63:
		return number{class: 'i', i: int64(f)}
	case f >= 0 && f < 1<<64:
		return number{class: 'u', u: uint64(f)}
	}
	if f == 0 {
		f = 0 // -0
	}
	return number{class: 'f', f: f}
}

func (a number) equal(b number) bool {
	if a.class != b.class {
		return false
	}
	switch a.class {
	case 'i':
		return a.i == b.i
	case 'u':
		return a.u == b.u
	}
	return floatEqual(a.f, b.f)
}
