package store

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
)

// maxJSONDepth is how many objects and arrays, each inside the one before,
// a value the store encodes may nest: as many as encoding/json and the
// store's decoders read back. A deeper Spec, Status or Apply configuration
// (only a value built in Go, or one that holds itself, is) is refused with
// ErrInvalid before encoding/json, which would follow it until the
// goroutine's stack overflowed, ending the process.
const maxJSONDepth = 10000

// checkJSONDepth returns an error naming what when
// v, encoded inside nest objects, nests deeper than maxJSONDepth objects
// and arrays in all: a Spec or Status is inside the stored object (nest 1),
// so it may nest maxJSONDepth-1. Types that cannot nest without bound (no
// interface, no type holding itself) are not walked.
func checkJSONDepth(what string, v reflect.Value, nest int) error {
	if !v.IsValid() || !mayNestDeep(v.Type()) {
		return nil
	}
	w := depthWalk{}
	if !w.value(v, nest) {
		return fmt.Errorf("%s nests deeper than %d JSON objects and arrays (too deep, or it holds itself)", what, maxJSONDepth-nest)
	}
	return nil
}

// nestDeep caches mayNestDeep by type.
var nestDeep sync.Map // reflect.Type → bool

// mayNestDeep reports whether a value of type t may nest past any bound: t
// holds an interface or contains itself.
func mayNestDeep(t reflect.Type) bool {
	if v, ok := nestDeep.Load(t); ok {
		return v.(bool)
	}
	deep := holdsInterface(t, map[reflect.Type]bool{}) || recursive(t, map[reflect.Type]bool{})
	nestDeep.Store(t, deep)
	return deep
}

// holdsInterface reports whether t is or contains an interface type; seen
// holds the types already looked at.
func holdsInterface(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return holdsInterface(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsInterface(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// depthWalk walks a value as encoding/json encodes it, counting the
// objects and arrays it nests (structs, maps, slices, arrays), and the
// pointers and interfaces followed on the way, so that a pointer that
// holds itself ends too. A value that encodes itself (MarshalJSON,
// MarshalText) is not walked: what it writes, encoding/json checks.
type depthWalk struct {
	refs int // pointers and interfaces on the current path
}

// value reports whether v, at nesting nest, stays within maxJSONDepth.
func (w *depthWalk) value(v reflect.Value, nest int) bool {
	t := v.Type()
	if t.Implements(jsonMarshalerType) || t.Implements(textMarshalerType) ||
		t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface &&
			(reflect.PointerTo(t).Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)) {
		return true
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return true
		}
		if w.refs >= 2*maxJSONDepth {
			return false
		}
		w.refs++
		ok := w.value(v.Elem(), nest)
		w.refs--
		return ok
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Array:
	default:
		return true
	}
	if nest >= maxJSONDepth {
		return false
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous || f.Tag.Get("json") == "-" {
				continue // not encoded: a back pointer there is no cycle
			}
			if !w.value(v.Field(i), nest+1) {
				return false
			}
		}
	case reflect.Map:
		if m, ok := v.Interface().(map[string]any); ok {
			// A tree's maps: ranged without a reflect.MapIter, which
			// would allocate one per map on every write.
			for _, e := range m {
				if e != nil && !w.value(reflect.ValueOf(e), nest+1) {
					return false
				}
			}
			return true
		}
		it := v.MapRange()
		for it.Next() {
			if !w.value(it.Value(), nest+1) {
				return false
			}
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return true // bytes: a base64 string
		}
		for i := range v.Len() {
			if !w.value(v.Index(i), nest+1) {
				return false
			}
		}
	}
	return true
}
