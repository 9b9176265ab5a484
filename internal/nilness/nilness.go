// Package nilness tells a nil interface from one holding a nil pointer, map,
// slice, channel or func (a typed nil), which a plain == nil check misses.
package nilness

import "reflect"

// IsNil reports whether v is nil or holds a nil pointer, map, slice,
// channel, func or interface.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}
