package store

import (
	"maps"
	"reflect"
	"unsafe"

	"github.com/steady-go/steady/internal/objpath"
)

// FieldChanges first asks whether a side of two objects is plainly equal,
// on every event a cache source judges. reflect.DeepEqual answers that, but
// allocates for every map entry it visits (a spec's labels or selector) and
// walks the type for every call. An equality built once per type from
// reflect.Type answers the same on the values' memory: every verdict is
// reflect.DeepEqual's (a nil slice or map differs from an empty one, NaN
// differs from itself, unexported fields count), and a kind it has no
// compiled form for (an interface, a map other than map[string]string, a
// func, a chan, a type that contains itself) is handed to reflect.DeepEqual
// for that part of the value.

// equalFunc reports whether the values at a and b, both of one type, are
// reflect.DeepEqual.
type equalFunc func(a, b unsafe.Pointer) bool

// sideEquals are the equalities of a Store's Spec and Status types, built
// on first use (see Store.sideEquals).
type sideEquals[S, T any] struct {
	spec, status equalFunc
	// specFields and statusFields are S's and T's fields as the diff
	// names them, nil when they have no plain form (see fieldsOf).
	specFields, statusFields judgedFields
}

// sideEquals returns s's equalities, building them on first use; two
// callers may both build them, and either result serves.
func (s *Store[S, T]) sideEquals() *sideEquals[S, T] {
	if e := s.equals.Load(); e != nil {
		return e
	}
	e := &sideEquals[S, T]{spec: equalOf(reflect.TypeFor[S]()), status: equalOf(reflect.TypeFor[T]()),
		specFields: fieldsOf(reflect.TypeFor[S](), objpath.Spec), statusFields: fieldsOf(reflect.TypeFor[T](), objpath.Status)}
	s.equals.Store(e)
	return e
}

// equalOf returns the equality of values of type t.
func equalOf(t reflect.Type) equalFunc {
	if recursive(t, map[reflect.Type]bool{}) {
		return deepEqualOf(t) // DeepEqual guards against cycles in values
	}
	eq := compile(t)
	return func(a, b unsafe.Pointer) bool {
		return a == b || eq(a, b) // DeepEqual(p, p) is true, even holding NaN
	}
}

// recursive reports whether t contains itself (through pointers, slices,
// maps or arrays); seen holds the types on the path to t.
func recursive(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return true
	}
	seen[t] = true
	defer delete(seen, t)
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return recursive(t.Elem(), seen)
	case reflect.Map:
		return recursive(t.Key(), seen) || recursive(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if recursive(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

// deepEqualOf is reflect.DeepEqual on values of type t.
func deepEqualOf(t reflect.Type) equalFunc {
	return func(a, b unsafe.Pointer) bool {
		return reflect.DeepEqual(reflect.NewAt(t, a).Interface(), reflect.NewAt(t, b).Interface())
	}
}

func compile(t reflect.Type) equalFunc {
	switch t.Kind() {
	case reflect.Pointer:
		return compilePointer(t)
	case reflect.Struct:
		return compileStruct(t)
	case reflect.Array:
		return compileArray(t)
	case reflect.Slice:
		return compileSlice(t)
	case reflect.Map:
		return compileMap(t)
	}
	return compileScalar(t)
}

// compileScalar compares bool, numeric and string kinds by their bits; any
// other kind falls back to reflect.DeepEqual.
func compileScalar(t reflect.Type) equalFunc {
	switch t.Kind() {
	case reflect.Bool:
		return func(a, b unsafe.Pointer) bool { return *(*bool)(a) == *(*bool)(b) }
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Uintptr:
		if t.Size() == 8 {
			return func(a, b unsafe.Pointer) bool { return *(*uint64)(a) == *(*uint64)(b) }
		}
		return func(a, b unsafe.Pointer) bool { return *(*uint32)(a) == *(*uint32)(b) }
	case reflect.Int32, reflect.Uint32:
		return func(a, b unsafe.Pointer) bool { return *(*uint32)(a) == *(*uint32)(b) }
	case reflect.Int16, reflect.Uint16:
		return func(a, b unsafe.Pointer) bool { return *(*uint16)(a) == *(*uint16)(b) }
	case reflect.Int8, reflect.Uint8:
		return func(a, b unsafe.Pointer) bool { return *(*uint8)(a) == *(*uint8)(b) }
	case reflect.Float32:
		return func(a, b unsafe.Pointer) bool { return *(*float32)(a) == *(*float32)(b) }
	case reflect.Float64:
		return func(a, b unsafe.Pointer) bool { return *(*float64)(a) == *(*float64)(b) }
	case reflect.Complex64:
		return func(a, b unsafe.Pointer) bool { return *(*complex64)(a) == *(*complex64)(b) }
	case reflect.Complex128:
		return func(a, b unsafe.Pointer) bool { return *(*complex128)(a) == *(*complex128)(b) }
	case reflect.String:
		return func(a, b unsafe.Pointer) bool { return *(*string)(a) == *(*string)(b) }
	}
	return deepEqualOf(t)
}

func compilePointer(t reflect.Type) equalFunc {
	elem := compile(t.Elem())
	return func(a, b unsafe.Pointer) bool {
		pa, pb := *(*unsafe.Pointer)(a), *(*unsafe.Pointer)(b)
		if pa == pb {
			return true
		}
		return pa != nil && pb != nil && elem(pa, pb)
	}
}

func compileStruct(t reflect.Type) equalFunc {
	type field struct {
		off uintptr
		eq  equalFunc
	}
	fields := make([]field, t.NumField())
	for i := range fields {
		f := t.Field(i)
		fields[i] = field{f.Offset, compile(f.Type)}
	}
	return func(a, b unsafe.Pointer) bool {
		for _, f := range fields {
			if !f.eq(unsafe.Add(a, f.off), unsafe.Add(b, f.off)) {
				return false
			}
		}
		return true
	}
}

func compileArray(t reflect.Type) equalFunc {
	elem, size, n := compile(t.Elem()), t.Elem().Size(), uintptr(t.Len())
	return func(a, b unsafe.Pointer) bool {
		for i := range n {
			if !elem(unsafe.Add(a, i*size), unsafe.Add(b, i*size)) {
				return false
			}
		}
		return true
	}
}

func compileSlice(t reflect.Type) equalFunc {
	elem, size := compile(t.Elem()), t.Elem().Size()
	return func(a, b unsafe.Pointer) bool {
		sa, sb := (*sliceHeader)(a), (*sliceHeader)(b)
		switch {
		case (sa.data == nil) != (sb.data == nil) || sa.len != sb.len:
			return false
		case sa.data == sb.data:
			return true
		}
		for i := range uintptr(sa.len) {
			if !elem(unsafe.Add(sa.data, i*size), unsafe.Add(sb.data, i*size)) {
				return false
			}
		}
		return true
	}
}

// compileMap has a fast path only for plain map[string]string, which a
// map shares with itself at once; other maps fall back to
// reflect.DeepEqual.
func compileMap(t reflect.Type) equalFunc {
	if t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String && t.Key().PkgPath() == "" && t.Elem().PkgPath() == "" {
		return func(a, b unsafe.Pointer) bool {
			if *(*unsafe.Pointer)(a) == *(*unsafe.Pointer)(b) {
				return true // one map: a watch event shares the held object's unchanged ones
			}
			ma, mb := *(*map[string]string)(a), *(*map[string]string)(b)
			return (ma == nil) == (mb == nil) && maps.Equal(ma, mb)
		}
	}
	return deepEqualOf(t)
}

// sliceHeader is the layout of a slice value.
type sliceHeader struct {
	data unsafe.Pointer
	len  int
	cap  int
}

// treeEqual reports whether a and b, trees of decoded JSON (map[string]any,
// []any, string, bool, int64, float64, nil), are reflect.DeepEqual: the
// status write path asks it of its merged and applied status trees on every
// write, where reflect.DeepEqual allocated for each map entry it visited
// and walked each value's type. Its verdicts are reflect.DeepEqual's for
// any values: a nil map or list differs from an empty one, a map or list
// equals itself (even holding NaN), NaN differs from itself otherwise, and
// a value of any other type, or below treeEqualDepth, is handed to
// reflect.DeepEqual.
func treeEqual(a, b any) bool { return treeEqualAt(a, b, 0) }

// treeEqualDepth is how deep treeEqual walks by itself: decoded JSON is far
// shallower (jsonscan stops at 10,000), and reflect.DeepEqual, which takes
// over below it, stops at cycles, which a tree built by hand can have.
const treeEqualDepth = 100

func treeEqualAt(a, b any, depth int) bool {
	if depth > treeEqualDepth {
		return reflect.DeepEqual(a, b)
	}
	switch av := a.(type) {
	case nil:
		return b == nil
	case map[string]any:
		bv, ok := b.(map[string]any)
		return ok && treeMapsEqual(av, bv, depth)
	case []any:
		bv, ok := b.([]any)
		return ok && treeListsEqual(av, bv, depth)
	case string, int64, float64, bool:
		return a == b // same dynamic type and value; NaN differs from itself
	}
	return reflect.DeepEqual(a, b)
}

// treeMapsEqual is treeEqualAt of two maps.
func treeMapsEqual(a, b map[string]any, depth int) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	if *(*unsafe.Pointer)(unsafe.Pointer(&a)) == *(*unsafe.Pointer)(unsafe.Pointer(&b)) {
		return true // one map: equal to itself, even holding NaN
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok || !treeEqualAt(x, y, depth+1) {
			return false
		}
	}
	return true
}

// treeListsEqual is treeEqualAt of two lists.
func treeListsEqual(a, b []any, depth int) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	if len(a) > 0 && &a[0] == &b[0] {
		return true // one list: equal to itself, even holding NaN
	}
	for i := range a {
		if !treeEqualAt(a[i], b[i], depth+1) {
			return false
		}
	}
	return true
}
