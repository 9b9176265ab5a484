package diff

import (
	"encoding/json"
	"reflect"
	"strings"
)

// item is the list item being entered, so that key and value filters can
// look inside it: w alone for an item on one side (and in Hash), w and g for
// two items compared by position.
type item struct {
	w, g reflect.Value
}

func (it item) valid() bool { return it.w.IsValid() }

// matches reports whether a filter's key or value element selects the
// item. For a pair, an Ignore path selects it only if it selects both
// sides, and an Only path if it selects either, so that Diff leaves out
// exactly what Hash leaves out of each side.
func (it item) matches(f Element, ignore bool) bool {
	m := matchItem(f, it.w)
	if !it.g.IsValid() {
		return m
	}
	if ignore {
		return m && matchItem(f, it.g)
	}
	return m || matchItem(f, it.g)
}

// matchItem reports whether key or value element f selects item v by
// content.
func matchItem(f Element, v reflect.Value) bool {
	switch f.Kind {
	case KeyElem:
		for _, k := range f.Keys {
			x, ok := valueField(v, k.Name)
			if !ok || compareScalar(x, k.Value) != 0 {
				return false
			}
		}
		return true
	case ValueElem:
		x, ok := valueScalar(v)
		return ok && compareScalar(x, f.Value) == 0
	}
	return false
}

// valueField finds field name in a struct (by the name Diff uses) or a map
// with string keys, through pointers and interfaces, and returns it as a
// normalized scalar. ok is false when there is no such field or it is not a
// scalar.
func valueField(v reflect.Value, name string) (any, bool) {
	v, ok := deref(v)
	if !ok {
		return nil, false
	}
	switch v.Kind() {
	case reflect.Map:
		if m, isTree := v.Interface().(map[string]any); isTree {
			x, found := m[name]
			if !found {
				return nil, false
			}
			return valueScalar(reflect.ValueOf(x))
		}
		if v.Type().Key().Kind() != reflect.String {
			return nil, false
		}
		x := v.MapIndex(reflect.ValueOf(name).Convert(v.Type().Key()))
		if !x.IsValid() {
			return nil, false
		}
		return valueScalar(x)
	case reflect.Struct:
		p := planOf(v.Type())
		i, found := p.byName[name]
		if !found {
			return nil, false
		}
		f, present := p.fields[i].get(v)
		if !present {
			return nil, false
		}
		return valueScalar(f)
	}
	return nil, false
}

// deref follows pointers and interfaces; ok is false at a nil one.
func deref(v reflect.Value) (reflect.Value, bool) {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			return v, false
		}
		v = v.Elem()
	}
	return v, v.IsValid()
}

// valueScalar returns v as a path scalar (see Path): nil for a nil pointer
// or interface, else a normalized bool, number or string. ok is false for
// composite values.
func valueScalar(v reflect.Value) (any, bool) {
	if !v.IsValid() {
		return nil, true
	}
	v, ok := deref(v)
	if !ok {
		return nil, true
	}
	switch v.Kind() {
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return normalizeScalar(v.Uint()), true
	case reflect.Float32, reflect.Float64:
		return normalizeFloat(v.Float()), true
	case reflect.String:
		if v.Type() == numTyp {
			return normalizeScalar(json.Number(v.String())), true
		}
		return v.String(), true
	}
	return nil, false
}

// itemKey is a keyed list item's identity: its key fields, and their
// formatted values as a map key.
type itemKey struct {
	fields []KeyField
	id     string
}

// itemKeys computes every item's key; ok is false when an item lacks a key
// field or two items share their keys.
func itemKeys(list reflect.Value, names []string) (keys []itemKey, index map[string]int, ok bool) {
	n := list.Len()
	keys = make([]itemKey, n)
	index = make(map[string]int, n)
	var b strings.Builder
	for i := range n {
		it := list.Index(i)
		fields := make([]KeyField, len(names))
		b.Reset()
		for j, name := range names {
			v, found := valueField(it, name)
			if !found {
				return nil, nil, false
			}
			fields[j] = KeyField{Name: name, Value: v}
			b.WriteString(formatScalar(v))
			b.WriteByte(',')
		}
		id := b.String()
		if _, dup := index[id]; dup {
			return nil, nil, false
		}
		index[id] = i
		keys[i] = itemKey{fields: fields, id: id}
	}
	return keys, index, true
}

// itemValues returns every item of a list of scalars, normalized, with
// their formatted values as set keys; ok is false when an item is not a
// scalar.
func itemValues(list reflect.Value) (values []any, ids []string, set map[string]bool, ok bool) {
	n := list.Len()
	values, ids = make([]any, n), make([]string, n)
	set = make(map[string]bool, n)
	for i := range n {
		v, scalar := valueScalar(list.Index(i))
		if !scalar {
			return nil, nil, nil, false
		}
		values[i], ids[i] = v, formatScalar(v)
		set[ids[i]] = true
	}
	return values, ids, set, true
}
