package store

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"time"
)

// copies says which of an object's Spec and Status a decoder may copy from
// another object decoded from the same bytes instead of decoding them again:
// those whose type copies whole with = (plainCopy). A watch event carries
// the object before and after a change, and a change leaves one of the two
// as it was (a spec write the status, a status write the spec), so the
// watch decodes that one once.
type copies struct{ spec, status bool }

func copiesOf[S, T any]() copies {
	return copies{spec: plainCopy(reflect.TypeFor[S]()), status: plainCopy(reflect.TypeFor[T]())}
}

// decodedFrom is an object with the bytes its Spec and Status were decoded
// from.
type decodedFrom[S, T any] struct {
	obj          *Object[S, T]
	spec, status []byte // nil when absent
	// plain says that the value holds only metadata, spec, status and
	// conditions, at no version, and spec and status are slices of it:
	// its raw read (decodeRaw) is obj's Meta and Conditions with them.
	plain bool
	// headEnd, when not 0, is the length of the value's head (see
	// storedHead), for a plain one.
	headEnd int
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	timeType        = reflect.TypeFor[time.Time]()
)

// plainCopy reports whether a value of type t decoded by encoding/json is
// the same as a copy (with =) of another value decoded from the same bytes,
// sharing nothing that either could change: no pointer, map, slice,
// interface, channel or function at any depth (strings, whose bytes never
// change, are fine), and no type with its own decoding (whose result might
// not depend on the bytes alone), time.Time excepted.
func plainCopy(t reflect.Type) bool {
	if t == timeType {
		return true
	}
	if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return true
	case reflect.Array:
		return plainCopy(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !plainCopy(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

// sameBytes reports whether two encoded parts are present alike and equal.
func sameBytes(a, b []byte) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	jsonNumber    = reflect.TypeFor[json.Number]()
)

// plainJSON reports whether encoding a value of type t with encoding/json,
// decoding that as a t and encoding the result gives the first encoding
// again, and decoding it as a t strictly (unknown fields refused) cannot
// fail: a plainCopy type with no encoding of its own at any depth,
// time.Time excepted. An applied status of such a type is the canonical
// encoding of itself (see mergeStatus).
func plainJSON(t reflect.Type) bool {
	if t == timeType {
		return true
	}
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) ||
		t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		return false
	}
	switch t.Kind() {
	case reflect.Array:
		return plainJSON(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !plainJSON(t.Field(i).Type) {
				return false
			}
		}
	}
	return plainCopy(t)
}
