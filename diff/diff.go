package diff

import (
	"bytes"
	"math"
	"reflect"
	"sync"
	"time"
)

// Diff returns the differences between want and got, in the view the
// options select. It never fails: values of different types are simply
// Changed at the node where their types part.
//
// Both values are walked in parallel. Old values in the result come from
// want and new ones from got: Added is a node only got has, Removed one only
// want has. Diff does not modify its
// arguments, and the Changes it returns do not alias them except through
// Old and New, which hold the values themselves (maps and slices among them
// are shared, not copied).
//
// What is compared, node by node:
//   - Structs field by field, named as encoding/json names them (the json
//     tag's name, else the Go name), so that paths match the JSON view.
//     Fields tagged json:"-" and unexported fields are left out; embedded
//     exported structs have their fields promoted, as in encoding/json.
//   - Maps key by key (keys that are not strings are named as encoding/json
//     names them: numbers in decimal); keys on one side only are Added or
//     Removed.
//   - Slices and arrays by position, so items beyond the shorter list are
//     Added or Removed; or by key fields or as sets of scalars (see ListKeys,
//     ListSets and the steady struct tag), ignoring order.
//   - Pointers by what they point to; a nil pointer against a non-nil one is
//     Changed. Likewise a nil slice or map against an empty one (see
//     EquateEmpty).
//   - Interfaces by their dynamic values: JSON-like trees (map[string]any,
//     []any, string, bool, float64, json.Number, other numbers, nil) and any
//     typed value. Values of different dynamic types are Changed, except
//     numbers, which compare by value (see ExactNumbers).
//   - time.Time with Equal, so the same instant in two locations is equal.
//   - Floats with ==, except that NaN equals NaN; []byte as a whole.
//   - Channels, functions and unsafe pointers by identity.
//
// Diff compares the Go structure of typed values; it does not call their
// MarshalJSON or Equal methods (time.Time and types defined from it aside),
// so a type whose JSON form differs from its fields is compared by its
// fields, and a struct with no exported fields (big.Int, for one) is equal
// to any other of its type.
//
// Cyclic values are compared as reflect.DeepEqual does: a cycle already
// being compared counts as equal.
//
// Values nested deeper than MaxDepth are not walked past it: a pair of
// maps, slices, arrays, structs or pointers met below MaxDepth others is
// reported Changed, at its path and with the two values as Old and New,
// unless they are the same map, slice or pointer. Diff so never overflows
// the goroutine's stack, which no recover catches.
func Diff(want, got any, opts ...Option) Changes {
	d := newDiffer(opts)
	defer d.free()
	s, ok := d.rootScope()
	if !ok {
		return nil
	}
	d.any(want, got, s)
	changes := d.changes
	d.changes = nil // the caller's now
	return changes
}

// ChangedPaths returns the paths of the changes Diff(want, got, opts...)
// reports, in the same order (values past MaxDepth included): Diff(want,
// got, opts...).Paths() without the values, at a fraction of the cost (no Old and New values are kept, and
// the paths share their backing arrays). Nil means the values are equal.
// The paths, like Change.Path, must not be modified in place; appending to
// one copies it.
func ChangedPaths(want, got any, opts ...Option) []Path {
	d := newDiffer(opts)
	defer d.free()
	d.pathsOnly = true
	s, ok := d.rootScope()
	if !ok {
		return nil
	}
	d.any(want, got, s)
	if len(d.changes) == 0 {
		return nil
	}
	return d.changes.Paths()
}

// MaxDepth is how many maps, slices, arrays, structs and pointers, each
// inside the one before, Diff, ChangedPaths, Hash and Change.String walk
// into: as many levels as encoding/json decodes (a JSON tree of MaxDepth
// objects and arrays is walked whole). A pointer chain of n nodes is 2n
// levels: each pointer and the struct it points to. Interfaces do not
// count; what they hold does.
//
// Past it, Diff reports the two values Changed, Hash hashes a marker in
// their place (values that differ only below MaxDepth hash equal), and
// Change.String shows "<too deep>". A deeper value, built in Go since no
// JSON gives one, would otherwise overflow the goroutine's stack, which
// ends the process.
const MaxDepth = 10000

// differs holds differs between calls, with their buffers.
var differs = sync.Pool{New: func() any { return &differ{walker: walker{path: make([]Element, 0, 16)}} }}

func newDiffer(opts []Option) *differ {
	d := differs.Get().(*differ)
	for _, o := range opts {
		if o != nil {
			o.apply(&d.cfg)
		}
	}
	return d
}

// free returns d to the pool, keeping its path buffers (and, from
// ChangedPaths, its changes) unless they grew large.
func (d *differ) free() {
	clear(d.changes) // drop the paths and values
	if cap(d.changes) > 64 {
		d.changes = nil
	}
	if cap(d.path) > 64 {
		d.path = make([]Element, 0, 16)
	}
	if cap(d.idx) > 256 {
		d.idx = nil
	}
	*d = differ{walker: walker{path: d.path[:0], idx: d.idx[:0]}, changes: d.changes[:0]}
	differs.Put(d)
}

// differ walks want and got in parallel and collects changes.
type differ struct {
	walker
	changes Changes
	depth   int // references walked into, for cycle detection
	nest    int // maps, slices, arrays, structs and pointers walked into (see MaxDepth)
	visited map[visit]bool
	// probing > 0 while checking whether two lists are equal item by item,
	// before matching them by key: reports only set probeFailed.
	probing     int
	probeFailed bool
	// pathsOnly: changes hold their paths only (ChangedPaths), which are
	// cut from arena.
	pathsOnly bool
	arena     []Element
}

// visit is a pair of references being compared, for cycle detection.
type visit struct {
	a, b uintptr
	t    reflect.Type
}

// cycleDepth is the nesting past which references are remembered.
const cycleDepth = 100

// seen reports whether the pair was already being compared; it remembers
// pairs only past cycleDepth, so ordinary values pay nothing.
func (d *differ) seen(a, b uintptr, t reflect.Type) bool {
	if d.depth < cycleDepth {
		return false
	}
	if d.visited == nil {
		d.visited = make(map[visit]bool)
	}
	v := visit{a, b, t}
	if d.visited[v] {
		return true
	}
	d.visited[v] = true
	return false
}

func (d *differ) report(k ChangeKind, old, new any) {
	if d.probing > 0 {
		d.probeFailed = true
		return
	}
	if d.pathsOnly {
		d.changes = append(d.changes, Change{Kind: k, Path: d.recordArena()})
		return
	}
	d.changes = append(d.changes, Change{Kind: k, Path: d.record(), Old: old, New: new})
}

// recordArena is record with the copy cut from d.arena, so that the paths of
// one ChangedPaths call take a few allocations, not one each. Each is
// capped, so appending to it copies. The first arena holds the first path
// alone, since most calls find one (a replica count, a status field: an
// arena of six elements was 448 bytes for a path of one); the next ones
// double.
func (d *differ) recordArena() Path {
	n := len(d.path)
	if cap(d.arena)-len(d.arena) < n {
		d.arena = make([]Element, 0, max(n, 2*cap(d.arena)))
	}
	start := len(d.arena)
	d.arena = append(d.arena, d.path...)
	return Path(d.arena[start : start+n : start+n])
}

func (d *differ) changed(w, g reflect.Value) {
	d.reportValues(Changed, w, g)
}

// reportValues reports a change of kind k between w and g (w is not read
// when k is Added, nor g when Removed). It converts them to Old and New
// only when they are kept: ChangedPaths keeps none.
func (d *differ) reportValues(k ChangeKind, w, g reflect.Value) {
	if d.pathsOnly {
		d.report(k, nil, nil)
		return
	}
	var old, new any
	if k != Added {
		old = iface(w)
	}
	if k != Removed {
		new = iface(g)
	}
	d.report(k, old, new)
}

// reportStrings is reportValues for the values of a map[string]string.
func (d *differ) reportStrings(k ChangeKind, w, g string) {
	if d.pathsOnly {
		d.report(k, nil, nil)
		return
	}
	var old, new any
	if k != Added {
		old = w
	}
	if k != Removed {
		new = g
	}
	d.report(k, old, new)
}

// reportMapValue reports the value at it as Added.
func (d *differ) reportMapValue(it *reflect.MapIter) {
	if d.pathsOnly {
		d.report(Added, nil, nil)
		return
	}
	d.report(Added, nil, it.Value().Interface())
}

func iface(v reflect.Value) any {
	if !v.IsValid() || !v.CanInterface() {
		return nil
	}
	return v.Interface()
}

// scalarEqual reports whether w and g are scalars of plan p and equal; it
// is false for every non-scalar plan.
func scalarEqual(p *typePlan, w, g reflect.Value) bool {
	switch p.kind {
	case kString:
		return w.String() == g.String()
	case kInt:
		return w.Int() == g.Int()
	case kBool:
		return w.Bool() == g.Bool()
	case kUint:
		return w.Uint() == g.Uint()
	case kFloat:
		return floatEqual(w.Float(), g.Float())
	}
	return false
}

func floatEqual(a, b float64) bool {
	return a == b || math.IsNaN(a) && math.IsNaN(b)
}

// value compares two values of plan p's type at the current path.
func (d *differ) value(p *typePlan, w, g reflect.Value, s scope) {
	if !p.kind.composite() {
		d.scalar(p, w, g, s)
		return
	}
	if d.tooDeep(w, g) {
		return
	}
	d.nest++
	d.composite(p, w, g, s)
	d.nest--
}

// tooDeep reports whether a map, slice, array, struct or pointer met now
// would be nested past MaxDepth, and then reports the pair as Changed
// unless both are the same reference.
func (d *differ) tooDeep(w, g reflect.Value) bool {
	if d.nest < MaxDepth {
		return false
	}
	switch w.Kind() {
	case reflect.Map, reflect.Pointer:
		if w.Pointer() == g.Pointer() {
			return true
		}
	case reflect.Slice:
		if w.Pointer() == g.Pointer() && w.Len() == g.Len() {
			return true
		}
	}
	d.changed(w, g)
	return true
}

// scalar is value for the plans that are not composite: interfaces and
// leaves.
func (d *differ) scalar(p *typePlan, w, g reflect.Value, s scope) {
	if p.kind == kIface {
		if !d.nilOnEitherSide(w, g) {
			d.any(w.Interface(), g.Interface(), s)
		}
		return
	}
	if !d.leafEqual(p, w, g) {
		d.changed(w, g)
	}
}

// composite is value for maps, slices, arrays, structs and pointers.
func (d *differ) composite(p *typePlan, w, g reflect.Value, s scope) {
	switch p.kind {
	case kStruct:
		d.structs(p, w, g, s)
	case kPtr:
		if d.nilOnEitherSide(w, g) || w.Pointer() == g.Pointer() || d.seen(w.Pointer(), g.Pointer(), p.typ) {
			return
		}
		d.depth++
		d.value(p.elem, w.Elem(), g.Elem(), s)
		d.depth--
	case kSlice:
		d.slice(p, listSpec{}, w, g, s)
	case kArray:
		d.positional(p.elem, w, g, s)
	case kMap:
		d.maps(p, w, g, s)
	}
}

// leafEqual compares two values of plan p's type that hold no values to
// walk into: scalars, times, []byte, channels, functions.
func (d *differ) leafEqual(p *typePlan, w, g reflect.Value) bool {
	switch p.kind {
	case kBool, kInt, kUint, kString, kFloat:
		return scalarEqual(p, w, g)
	case kComplex:
		a, b := w.Complex(), g.Complex()
		return floatEqual(real(a), real(b)) && floatEqual(imag(a), imag(b))
	case kTime:
		return timeEqual(w, g)
	case kBytes:
		return d.bytesEqual(w, g)
	}
	return opaqueEqual(w, g)
}

// nilOnEitherSide reports whether pointer or interface w or g is nil, and
// reports a change when only one of them is.
func (d *differ) nilOnEitherSide(w, g reflect.Value) bool {
	wn, gn := w.IsNil(), g.IsNil()
	if wn != gn {
		d.changed(w, g)
	}
	return wn || gn
}

// bothEmpty reports whether a nil and a non-nil map, slice or []byte, of
// lengths wn and gn, count as equal: with EquateEmpty, when both are empty.
func (c *config) bothEmpty(wn, gn int) bool {
	return c.equateEmpty && wn == 0 && gn == 0
}

// timeEqual compares two time.Time values with Equal, without boxing them
// when their representations are identical.
func timeEqual(w, g reflect.Value) bool {
	if w.Equal(g) {
		return true
	}
	return asTime(w).Equal(asTime(g))
}

// asTime returns a value of type time.Time, or of a type defined from it,
// as a time.Time.
func asTime(v reflect.Value) time.Time {
	if v.Type() != timeTyp {
		v = v.Convert(timeTyp)
	}
	return v.Interface().(time.Time)
}

func (d *differ) bytesEqual(w, g reflect.Value) bool {
	if w.IsNil() != g.IsNil() && !d.cfg.bothEmpty(w.Len(), g.Len()) {
		return false
	}
	return bytes.Equal(w.Bytes(), g.Bytes())
}

// opaqueEqual compares channels, functions and unsafe pointers the way
// reflect.DeepEqual does: channels and pointers by identity, functions only
// when both are nil.
func opaqueEqual(w, g reflect.Value) bool {
	switch w.Kind() {
	case reflect.Func:
		return w.IsNil() && g.IsNil()
	case reflect.Chan, reflect.UnsafePointer:
		return w.Pointer() == g.Pointer()
	}
	return true
}

// structs compares field by field; equal scalar fields cost no push.
func (d *differ) structs(p *typePlan, w, g reflect.Value, s scope) {
	for i := range p.fields {
		if d.probeFailed {
			return
		}
		f := &p.fields[i]
		var wf, gf reflect.Value
		if len(f.index) == 1 {
			wf, gf = w.Field(f.index[0]), g.Field(f.index[0])
		} else {
			var wok, gok bool
			wf, wok = f.get(w)
			gf, gok = f.get(g)
			if !wok || !gok {
				d.embeddedAbsent(f, wf, gf, wok, gok, s)
				continue
			}
		}
		if scalarEqual(f.plan, wf, gf) {
			continue
		}
		cs, ok := d.enter(s, Element{Kind: FieldElem, Name: f.name}, item{})
		if ok {
			if f.plan.kind == kSlice {
				if !d.tooDeep(wf, gf) {
					d.nest++
					d.slice(f.plan, f.list, wf, gf, cs)
					d.nest--
				}
			} else {
				d.value(f.plan, wf, gf, cs)
			}
		}
		d.leave(cs)
	}
}

// embeddedAbsent handles a promoted field behind a nil embedded pointer on
// one or both sides: absent on one side is Added or Removed.
func (d *differ) embeddedAbsent(f *fieldPlan, wf, gf reflect.Value, wok, gok bool, s scope) {
	if !wok && !gok {
		return
	}
	cs, ok := d.enter(s, Element{Kind: FieldElem, Name: f.name}, item{})
	if ok {
		if wok {
			d.reportValues(Removed, wf, reflect.Value{})
		} else {
			d.reportValues(Added, reflect.Value{}, gf)
		}
	}
	d.leave(cs)
}
