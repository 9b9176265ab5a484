package diff

import (
	"bytes"
	"math"
	"reflect"
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
func Diff(want, got any, opts ...Option) Changes {
	var d differ
	d.path = make([]Element, 0, 16)
	for _, o := range opts {
		if o != nil {
			o.apply(&d.cfg)
		}
	}
	s, ok := d.rootScope()
	if !ok {
		return nil
	}
	d.any(want, got, s)
	return d.changes
}

// differ walks want and got in parallel and collects changes.
type differ struct {
	walker
	changes Changes
	depth   int
	visited map[visit]bool
	// probing > 0 while checking whether two lists are equal item by item,
	// before matching them by key: reports only set probeFailed.
	probing     int
	probeFailed bool
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
	d.changes = append(d.changes, Change{Kind: k, Path: d.record(), Old: old, New: new})
}

func (d *differ) changed(w, g reflect.Value) {
	d.report(Changed, iface(w), iface(g))
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
	switch p.kind {
	case kBool, kInt, kUint, kString, kFloat:
		if !scalarEqual(p, w, g) {
			d.changed(w, g)
		}
	case kComplex:
		a, b := w.Complex(), g.Complex()
		if !floatEqual(real(a), real(b)) || !floatEqual(imag(a), imag(b)) {
			d.changed(w, g)
		}
	case kTime:
		if !timeEqual(w, g) {
			d.changed(w, g)
		}
	case kBytes:
		if !d.bytesEqual(w, g) {
			d.changed(w, g)
		}
	case kStruct:
		d.structs(p, w, g, s)
	case kPtr:
		if w.IsNil() || g.IsNil() {
			if w.IsNil() != g.IsNil() {
				d.changed(w, g)
			}
			return
		}
		if w.Pointer() == g.Pointer() || d.seen(w.Pointer(), g.Pointer(), p.typ) {
			return
		}
		d.depth++
		d.value(p.elem, w.Elem(), g.Elem(), s)
		d.depth--
	case kIface:
		if w.IsNil() || g.IsNil() {
			if w.IsNil() != g.IsNil() {
				d.changed(w, g)
			}
			return
		}
		d.any(w.Interface(), g.Interface(), s)
	case kSlice:
		d.slice(p, listSpec{}, w, g, s)
	case kArray:
		d.positional(p.elem, w, g, s)
	case kMap:
		d.maps(p, w, g, s)
	default:
		if !opaqueEqual(w, g) {
			d.changed(w, g)
		}
	}
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
	if w.IsNil() != g.IsNil() && !(d.cfg.equateEmpty && w.Len() == 0 && g.Len() == 0) {
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
				d.slice(f.plan, f.list, wf, gf, cs)
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
			d.report(Removed, iface(wf), nil)
		} else {
			d.report(Added, nil, iface(gf))
		}
	}
	d.leave(cs)
}
