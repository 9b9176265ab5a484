package store

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// A sideEncoder appends a Spec or Status value as json.Marshal encodes it,
// byte for byte, without encoding/json's reflection per value and its
// buffer handling: json.Marshal was most of the cost of encoding a write's
// Spec. It is compiled once per type (sideEncoderOf) for the types a Spec
// or Status is usually made of: structs without embedded fields, and
// within them strings, bools, integers, pointers, slices (not of bytes)
// and maps with string keys. A type with anything else (floats, whose
// formatting is encoding/json's own, json.Number, interfaces, arrays, a
// type with its own encoding, time.Time among them) has none, and encoding/json encodes
// it. depth counts the pointers, slices and maps entered, so that a cycle,
// which encoding/json reports as an error, is left to it.
//
// It reports false, having appended something, for a value it leaves to
// encoding/json: one nested deeper than maxEncodeDepth of those.
// TestSideEncoderAgreesWithEncodingJSON holds it to json.Marshal.
type sideEncoder func(b []byte, v reflect.Value, depth int) ([]byte, bool)

// maxEncodeDepth bounds the pointers, slices and maps a sideEncoder
// enters; encoding/json starts looking for cycles at 1000.
const maxEncodeDepth = 500

// sideEncoders caches sideEncoderOf per type (a nil sideEncoder: none).
var sideEncoders sync.Map // reflect.Type -> sideEncoder

// sideEncoderOf returns the sideEncoder of t, or nil when it has none.
func sideEncoderOf(t reflect.Type) sideEncoder {
	if e, ok := sideEncoders.Load(t); ok {
		return e.(sideEncoder)
	}
	c := encCompiler{late: map[reflect.Type]*sideEncoder{}}
	enc, ok := c.compile(t)
	if !ok {
		enc = nil
	}
	e, _ := sideEncoders.LoadOrStore(t, enc)
	return e.(sideEncoder)
}

// encodeSide appends v with its sideEncoder, in a pooled buffer, and
// returns it in one allocation of its length (its capacity, as encode's); false when it has none or
// it declines.
func encodeSide(v any) ([]byte, bool) {
	enc := sideEncoderOf(reflect.TypeOf(v))
	if enc == nil {
		return nil, false
	}
	return encodeWith(enc, reflect.ValueOf(v))
}

// encodeWith is encodeSide of v with enc, v's sideEncoder.
func encodeWith(enc sideEncoder, v reflect.Value) ([]byte, bool) {
	bp := encodeBuffers.Get().(*[]byte)
	b, ok := enc((*bp)[:0], v, 0)
	var out []byte
	if ok {
		out = make([]byte, len(b)) // with the copy, one makeslicecopy (see encode)
		copy(out, b)
	}
	if cap(b) <= maxPooledEncode {
		*bp = b[:0]
		encodeBuffers.Put(bp)
	}
	return out, ok
}

type encCompiler struct {
	// late holds the encoders of the composite types being compiled, for
	// the types that contain themselves; filled in when done.
	late map[reflect.Type]*sideEncoder
}

func (c *encCompiler) compile(t reflect.Type) (sideEncoder, bool) {
	if t == nil || t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) ||
		t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		return nil, false // its own encoding (time.Time's too)
	}
	if t == jsonNumber {
		return nil, false // a string type that encoding/json writes as a number
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Struct:
		if p, ok := c.late[t]; ok {
			return func(b []byte, v reflect.Value, depth int) ([]byte, bool) { return (*p)(b, v, depth) }, true
		}
		self := new(sideEncoder)
		c.late[t] = self
		enc, ok := c.composite(t)
		*self = enc
		return enc, ok
	case reflect.Bool:
		return func(b []byte, v reflect.Value, _ int) ([]byte, bool) { return strconv.AppendBool(b, v.Bool()), true }, true
	case reflect.String:
		return func(b []byte, v reflect.Value, _ int) ([]byte, bool) { return appendJSONString(b, v.String()), true }, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(b []byte, v reflect.Value, _ int) ([]byte, bool) { return strconv.AppendInt(b, v.Int(), 10), true }, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(b []byte, v reflect.Value, _ int) ([]byte, bool) {
			return strconv.AppendUint(b, v.Uint(), 10), true
		}, true
	}
	return nil, false
}

// appendJSONString appends s quoted as encoding/json writes it: as it is
// when it has nothing encoding/json escapes or replaces, else as
// json.Marshal writes it.
func appendJSONString(b []byte, s string) []byte {
	if plainJSONString(s) {
		return append(append(append(b, '"'), s...), '"')
	}
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

func (c *encCompiler) composite(t reflect.Type) (sideEncoder, bool) {
	switch t.Kind() {
	case reflect.Pointer:
		elem, ok := c.compile(t.Elem())
		if !ok {
			return nil, false
		}
		return func(b []byte, v reflect.Value, depth int) ([]byte, bool) {
			if v.IsNil() {
				return append(b, "null"...), true
			}
			if depth >= maxEncodeDepth {
				return b, false // maybe a cycle: encoding/json's error
			}
			return elem(b, v.Elem(), depth+1)
		}, true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, false // base64
		}
		elem, ok := c.compile(t.Elem())
		if !ok {
			return nil, false
		}
		if t.Elem().Kind() == reflect.String {
			// Its elements compiled to the string encoder: no code of
			// their own, and a []string's layout.
			return encodeStrings, true
		}
		return func(b []byte, v reflect.Value, depth int) ([]byte, bool) {
			if v.IsNil() {
				return append(b, "null"...), true
			}
			if depth >= maxEncodeDepth {
				return b, false // maybe a cycle (type L []L)
			}
			b = append(b, '[')
			for i := range v.Len() {
				if i > 0 {
					b = append(b, ',')
				}
				var ok bool
				if b, ok = elem(b, v.Index(i), depth+1); !ok {
					return b, false
				}
			}
			return append(b, ']'), true
		}, true
	case reflect.Map:
		return c.mapOf(t)
	case reflect.Struct:
		return c.structOf(t)
	}
	return nil, false
}

func (c *encCompiler) mapOf(t reflect.Type) (sideEncoder, bool) {
	if t.Key().Kind() != reflect.String {
		return nil, false // encoding/json writes other keys otherwise
	}
	if t == stringMapType {
		return encodeStringMap, true
	}
	elem, ok := c.compile(t.Elem())
	if !ok {
		return nil, false
	}
	return func(b []byte, v reflect.Value, depth int) ([]byte, bool) {
		if v.IsNil() {
			return append(b, "null"...), true
		}
		if depth >= maxEncodeDepth {
			return b, false // maybe a cycle (type M map[string]M)
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) }) // encoding/json's order
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(appendJSONString(b, k.String()), ':')
			var ok bool
			if b, ok = elem(b, v.MapIndex(k), depth+1); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}, true
}

// encodeStringMap is the map encoder for the commonest map type, without
// reflection per entry.
func encodeStringMap(b []byte, v reflect.Value, _ int) ([]byte, bool) {
	m := v.Interface().(map[string]string) // a map's interface holds its pointer: no allocation
	if m == nil {
		return append(b, "null"...), true
	}
	// The entries are taken in one pass, values with their keys: a lookup
	// per key cost as much as the pass.
	var arr [16]stringEntry
	entries := arr[:0]
	for k, v := range m {
		entries = append(entries, stringEntry{k, v})
	}
	sortEntries(entries)
	b = append(b, '{')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(append(appendJSONString(b, e.k), ':'), e.v)
	}
	return append(b, '}'), true
}

// encodeStrings is the slice encoder of the slices of strings (any slice
// type whose elements are of a string kind the string encoder writes),
// without a reflect.Value and an encoder call per element: it reads an
// addressable slice (a write's Spec, encodeJSONWith) as the []string it is
// laid out as, and any other through reflect.
func encodeStrings(b []byte, v reflect.Value, depth int) ([]byte, bool) {
	if v.IsNil() {
		return append(b, "null"...), true
	}
	if depth >= maxEncodeDepth {
		return b, false // as the other slices (encoding/json's result)
	}
	b = append(b, '[')
	if v.CanAddr() {
		for i, s := range *(*[]string)(unsafe.Pointer(v.UnsafeAddr())) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, s)
		}
		return append(b, ']'), true
	}
	for i := range v.Len() {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, v.Index(i).String())
	}
	return append(b, ']'), true
}

// stringEntry is an entry of a map[string]string.
type stringEntry struct{ k, v string }

// maxInsertionSort is the most entries sortEntries sorts by insertion.
const maxInsertionSort = 12

// sortEntries sorts a map's entries by key, bytewise: encoding/json's
// order of a map's keys. The few entries of most maps are sorted by
// insertion, comparing keys inline (slices.SortFunc's pdqsort, with a
// comparison call per step, was ~140 instructions for two entries); more
// by slices.SortFunc. The keys of a map are distinct: no order between
// equal keys to keep.
func sortEntries(e []stringEntry) {
	if len(e) > maxInsertionSort {
		slices.SortFunc(e, func(a, b stringEntry) int { return strings.Compare(a.k, b.k) })
		return
	}
	for i := 1; i < len(e); i++ {
		for j := i; j > 0 && e[j].k < e[j-1].k; j-- {
			e[j], e[j-1] = e[j-1], e[j]
		}
	}
}

// encField is a field of a struct as encoding/json writes it.
type encField struct {
	prefix    string // `"name":`
	index     int
	omitEmpty bool
	enc       sideEncoder
	// direct is how the struct encoder reads the field of an addressable
	// struct itself, at offset: as a string, an int64, or not (through
	// enc).
	direct encDirect
	offset uintptr
}

// encDirect is how a struct's encoder reads a field itself (encField).
type encDirect uint8

const (
	encViaEnc encDirect = iota
	encString           // a string kind the string encoder writes
	encInt64            // a signed integer kind of 8 bytes
)

// directOf is the encDirect of a field of type t, whose encoder compiled.
func directOf(t reflect.Type) encDirect {
	switch k := t.Kind(); {
	case k == reflect.String:
		return encString
	case (k == reflect.Int || k == reflect.Int64) && t.Size() == 8:
		return encInt64
	}
	return encViaEnc
}

func (c *encCompiler) structOf(t reflect.Type) (sideEncoder, bool) {
	var fields []encField
	var names []string
	sfs, ok := jsonFields(t)
	if !ok {
		return nil, false
	}
	for _, sf := range sfs {
		i := sf.Index[0]
		name, omit, ok := encFieldName(sf.Name, sf.Tag.Get("json"))
		if !ok || slices.Contains(names, name) {
			return nil, false // a tag it leaves to encoding/json, or a clash
		}
		names = append(names, name)
		enc, ok := c.compile(sf.Type)
		if !ok {
			return nil, false
		}
		fields = append(fields, encField{prefix: `"` + name + `":`, index: i, omitEmpty: omit, enc: enc, direct: directOf(sf.Type), offset: sf.Offset})
	}
	return func(b []byte, v reflect.Value, depth int) ([]byte, bool) {
		// An addressable struct (a write's Spec, encodeJSONWith) has its
		// strings and integers read where they are, without a
		// reflect.Value and an encoder call each.
		var at unsafe.Pointer
		if v.CanAddr() {
			at = unsafe.Pointer(v.UnsafeAddr())
		}
		b = append(b, '{')
		first := true
		for i := range fields {
			f := &fields[i]
			if at != nil && f.direct != encViaEnc {
				p := unsafe.Add(at, f.offset)
				if f.omitEmpty && (f.direct == encString && len(*(*string)(p)) == 0 || f.direct == encInt64 && *(*int64)(p) == 0) {
					continue
				}
				if !first {
					b = append(b, ',')
				}
				first = false
				b = append(b, f.prefix...)
				if f.direct == encString {
					b = appendJSONString(b, *(*string)(p))
				} else {
					b = strconv.AppendInt(b, *(*int64)(p), 10)
				}
				continue
			}
			fv := v.Field(f.index)
			if f.omitEmpty && emptyJSON(fv) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, f.prefix...)
			var ok bool
			if b, ok = f.enc(b, fv, depth); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}, true
}

// encFieldName returns the name a field called field with the json tag
// tag has in its struct's encoding, and whether omitempty is among the
// tag's options; false for a tag a sideEncoder leaves to encoding/json (a
// name that is not plainTagName's, an option but omitempty).
func encFieldName(field, tag string) (name string, omit, ok bool) {
	name, opts, _ := strings.Cut(tag, ",")
	if !plainTagName(name) {
		return "", false, false
	}
	for _, o := range strings.Split(opts, ",") {
		switch o {
		case "":
		case "omitempty":
			omit = true
		default:
			return "", false, false // "string", "omitzero": encoding/json's rules
		}
	}
	if name == "" {
		name = field
	}
	return name, omit, true
}

// emptyJSON is encoding/json's isEmptyValue for the kinds a sideEncoder
// writes.
func emptyJSON(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Pointer:
		return v.IsNil()
	}
	return false
}
