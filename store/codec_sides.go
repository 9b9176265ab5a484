package store

import (
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/steady-go/steady/internal/jsonscan"
)

// A sideDecoder decodes a Spec or Status from its JSON without
// encoding/json, which scans a value twice and goes through reflection for
// every token: it was most of the cost of a typed read (a watch event, a
// Get). It is compiled once per type (sidePlanOf) and handles the types a
// Spec or Status is usually made of: structs without embedded fields, and
// within them strings, bools, integers, floats, pointers, slices (not of
// bytes), maps with string keys and time.Time. For a type with anything
// else, there is no sideDecoder and encoding/json decodes it.
//
// It reads exactly what encoding/json would read without error into a zero
// value and gives the same result: for anything else (a key that is not
// exactly a field's name, a field given twice, a number out of the field's
// range or with a fraction, a string where a number is expected...) it
// reports false, and the caller decodes the value with encoding/json, which
// gives its result or its error. TestSideDecoderAgreesWithEncodingJSON holds
// it to that.
//
// It writes at p, which points at a value of the type it was compiled for:
// the type and each field's offset are known when it is compiled, so a
// value is written as the plain Go code for its type would write it, where
// going through reflect.Value per field and per value (Field, Set, SetInt,
// Index) was a fifth of a decode. A struct, slice or map of a composite
// element still goes through reflect to allocate, never to write a scalar.
type sideDecoder func(d *metaDecoder, p unsafe.Pointer, depth int) bool

// maxSideDepth bounds nesting as jsonscan and encoding/json do.
const maxSideDepth = 10000

// sidePlans holds the Store's sideDecoders for S and T (nil: none), and
// the types.
type sidePlans struct {
	spec, status         sideDecoder
	specType, statusType reflect.Type
}

func sidePlansOf[S, T any]() *sidePlans {
	s, t := reflect.TypeFor[S](), reflect.TypeFor[T]()
	return &sidePlans{spec: sidePlanOf(s), status: sidePlanOf(t), specType: s, statusType: t}
}

// decodeSide decodes v, one JSON value that jsonscan validated, into p, a
// pointer to a zero value, with plan when there is one and with
// encoding/json otherwise (or when plan declines), reporting whether it
// decoded.
func (d *metaDecoder) decodeSide(v []byte, p any, plan sideDecoder) bool {
	if plan != nil {
		outer := d.r
		d.r = jsonscan.NewReader(v)
		pv := reflect.ValueOf(p)
		ok := plan(d, pv.UnsafePointer(), 0) && d.r.End()
		d.r = outer
		if ok {
			return true
		}
		pv.Elem().SetZero() // encoding/json decodes into a zero value
	}
	return d.json(v, p)
}

// sidePlanOf compiles the sideDecoder of t, or returns nil when t has
// something it does not handle.
func sidePlanOf(t reflect.Type) sideDecoder {
	c := sideCompiler{late: map[reflect.Type]*sideDecoder{}}
	dec, ok := c.compile(t)
	if !ok {
		return nil
	}
	return dec
}

type sideCompiler struct {
	// late holds the decoders of the composite types being compiled, for
	// the types that contain themselves; filled in when done.
	late map[reflect.Type]*sideDecoder
}

func (c *sideCompiler) compile(t reflect.Type) (sideDecoder, bool) {
	if t == timeType {
		return decodeTime, true
	}
	if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil, false // its own decoding: encoding/json calls it
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Struct:
		// A type may contain itself (type List []List): its decoder
		// calls the one being compiled.
		if p, ok := c.late[t]; ok {
			return func(d *metaDecoder, v unsafe.Pointer, depth int) bool { return (*p)(d, v, depth) }, true
		}
		self := new(sideDecoder)
		c.late[t] = self
		dec, ok := c.composite(t)
		*self = dec
		return dec, ok
	}
	return scalarDecoder(t)
}

// scalarDecoder returns the decoder of a bool, string, integer or float
// type, writing a value of its size.
func scalarDecoder(t reflect.Type) (sideDecoder, bool) {
	switch t.Kind() {
	case reflect.Bool:
		return decodeBool, true
	case reflect.String:
		return decodeString, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return decodeInt(t.Bits()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return decodeUint(t.Bits()), true
	case reflect.Float32:
		return decodeFloat32, true
	case reflect.Float64:
		return decodeFloat64, true
	}
	return nil, false // interfaces, arrays, complex numbers, channels, funcs
}

// composite compiles the decoder of a pointer, slice, map or struct type.
func (c *sideCompiler) composite(t reflect.Type) (sideDecoder, bool) {
	switch t.Kind() {
	case reflect.Pointer:
		return c.pointer(t)
	case reflect.Slice:
		if t.Elem() == stringType {
			return decodeStrings, true
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, false // base64
		}
		return c.slice(t)
	case reflect.Map:
		if t.Key() == stringType && t.Elem() == stringType {
			return decodeStringMap, true
		}
		if k := t.Key(); k.Kind() != reflect.String || reflect.PointerTo(k).Implements(textUnmarshaler) {
			return nil, false // encoding/json decodes such keys otherwise
		}
		return c.mapOf(t)
	case reflect.Struct:
		return c.structOf(t)
	}
	return nil, false
}

var (
	stringType    = reflect.TypeFor[string]()
	stringsType   = reflect.TypeFor[[]string]()
	stringMapType = reflect.TypeFor[map[string]string]()
)

// decodeStrings and decodeStringMap are the slice and map decoders for the
// commonest element type (and the types named after them, which have its
// layout), without reflection per element (a null element reports false).
func decodeStrings(d *metaDecoder, p unsafe.Pointer, _ int) bool {
	if null(d) {
		return true
	}
	var s []string
	var ok bool
	if v := d.sharing(); v != nil {
		s, ok = sharedByText(d, &v.lists, decodeStringList, listAt)
	} else {
		s, ok = decodeStringList(d)
	}
	*(*[]string)(p) = s
	return ok
}

func decodeStringList(d *metaDecoder) ([]string, bool) {
	start := d.r
	if s, ok := stringsAsWritten(d); ok {
		return s, true
	}
	d.r = start
	return list(d, (*metaDecoder).string)
}

// stringsAsWritten reads a list of strings as list reads it with
// metaDecoder.string when its text is spelled as encoding/json writes
// such a list of plain strings (see jsonscan.Reader.String): no white
// space, no escapes. It reports false for any other text, having read
// part of it, for the caller to read it element by element from the
// start. The elements are read without a call through string per
// element, as the store writes them.
func stringsAsWritten(d *metaDecoder) ([]string, bool) {
	r := &d.r
	if !r.Literal(`[`) {
		return nil, false
	}
	var first [8]string
	items := first[:0]
	if !r.Literal(`]`) {
		for {
			b, ok := r.Plain()
			if !ok {
				return nil, false
			}
			items = append(items, d.str(b))
			if r.Literal(`]`) {
				break
			}
			if !r.Literal(`,`) {
				return nil, false
			}
		}
	}
	return append(make([]string, 0, len(items)), items...), true
}

func decodeStringMap(d *metaDecoder, p unsafe.Pointer, _ int) bool {
	if null(d) {
		return true
	}
	var m map[string]string
	var ok bool
	if v := d.sharing(); v != nil {
		m, ok = sharedByText(d, &v.maps, (*metaDecoder).stringMap, mapAt)
	} else {
		m, ok = d.stringMap()
	}
	*(*map[string]string)(p) = m
	return ok
}

// null reads a null, which encoding/json decodes into any value as
// leaving it as it is (zero: the decoders fill zero values), or as
// setting a pointer, slice or map to nil.
func null(d *metaDecoder) bool {
	return d.r.Next() == 'n' && d.r.Null()
}

func decodeBool(d *metaDecoder, p unsafe.Pointer, _ int) bool {
	if null(d) {
		return true
	}
	b, ok := d.r.Bool()
	*(*bool)(p) = b
	return ok
}

func decodeString(d *metaDecoder, p unsafe.Pointer, _ int) bool {
	if null(d) {
		return true
	}
	s, ok := d.string()
	*(*string)(p) = s
	return ok
}

// decodeInt returns the decoder of a signed integer of the given bits,
// which declines a number out of its range, as encoding/json refuses it.
func decodeInt(bits int) sideDecoder {
	shift := 64 - bits
	return func(d *metaDecoder, p unsafe.Pointer, _ int) bool {
		if null(d) {
			return true
		}
		n, ok := d.r.Int64()
		if !ok || n<<shift>>shift != n {
			return false
		}
		switch bits {
		case 8:
			*(*int8)(p) = int8(n)
		case 16:
			*(*int16)(p) = int16(n)
		case 32:
			*(*int32)(p) = int32(n)
		default:
			*(*int64)(p) = n
		}
		return true
	}
}

// decodeUint is decodeInt for an unsigned integer; the number must fit
// int64 too (jsonscan's Int64), which the largest uint64 do not: those
// are declined, for encoding/json to decode.
func decodeUint(bits int) sideDecoder {
	shift := 64 - bits
	return func(d *metaDecoder, p unsafe.Pointer, _ int) bool {
		if null(d) {
			return true
		}
		if d.r.Next() == '-' {
			return false // encoding/json refuses even -0
		}
		n, ok := d.r.Int64()
		if u := uint64(n); !ok || u<<shift>>shift != u {
			return false
		}
		switch bits {
		case 8:
			*(*uint8)(p) = uint8(n)
		case 16:
			*(*uint16)(p) = uint16(n)
		case 32:
			*(*uint32)(p) = uint32(n)
		default:
			*(*uint64)(p) = uint64(n)
		}
		return true
	}
}

// floatText reads a number's text for decodeFloat32 and decodeFloat64.
func floatText(d *metaDecoder) ([]byte, bool) {
	return d.r.Number()
}

func decodeFloat64(d *metaDecoder, p unsafe.Pointer, _ int) bool {
	if null(d) {
		return true
	}
	text, ok := floatText(d)
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		return false
	}
	*(*float64)(p) = f
	return true
}

func decodeFloat32(d *metaDecoder, p unsafe.Pointer, _ int) bool {
	if null(d) {
		return true
	}
	text, ok := floatText(d)
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(text), 32)
	// What reflect.Value.OverflowFloat checks for a float32, after
	// encoding/json's ParseFloat.
	if err != nil || math.Abs(f) > math.MaxFloat32 {
		return false
	}
	*(*float32)(p) = float32(f)
	return true
}

// decodeTime does what encoding/json does for a string token into a
// time.Time: it calls its UnmarshalJSON, with the quotes.
func decodeTime(d *metaDecoder, p unsafe.Pointer, _ int) bool {
	if null(d) {
		return true
	}
	raw, ok := d.r.Raw()
	return ok && raw[0] == '"' && (*time.Time)(p).UnmarshalJSON(raw) == nil
}

func (c *sideCompiler) pointer(t reflect.Type) (sideDecoder, bool) {
	elem, ok := c.compile(t.Elem())
	if !ok {
		return nil, false
	}
	et := t.Elem()
	return func(d *metaDecoder, p unsafe.Pointer, depth int) bool {
		if null(d) {
			return true
		}
		if depth >= maxSideDepth {
			return false // a pointer to itself reads no byte per level
		}
		e := reflect.New(et).UnsafePointer()
		*(*unsafe.Pointer)(p) = e
		return elem(d, e, depth+1)
	}, true
}

func (c *sideCompiler) slice(t reflect.Type) (sideDecoder, bool) {
	elem, ok := c.compile(t.Elem())
	if !ok {
		return nil, false
	}
	size := t.Elem().Size()
	return func(d *metaDecoder, p unsafe.Pointer, depth int) bool {
		if null(d) {
			return true
		}
		if depth >= maxSideDepth {
			return false
		}
		// The slice grows in place (reflect allocates its array, typed,
		// for the collector): a reflect.MakeSlice per array would cost
		// an allocation for its header.
		v := reflect.NewAt(t, p).Elem()
		h := (*sliceHeader)(p)
		n := 0
		ok := d.r.Array(func() bool {
			if n == h.cap {
				v.Grow(max(n, 4))
			}
			h.len = n + 1
			n++
			return elem(d, unsafe.Add(h.data, uintptr(n-1)*size), depth+1)
		})
		if ok && n == 0 {
			v.Set(reflect.MakeSlice(t, 0, 0)) // [] is an empty slice, not nil
		}
		return ok
	}, true
}

func (c *sideCompiler) mapOf(t reflect.Type) (sideDecoder, bool) {
	elem, ok := c.compile(t.Elem())
	if !ok {
		return nil, false
	}
	kt, et := t.Key(), t.Elem()
	return func(d *metaDecoder, p unsafe.Pointer, depth int) bool {
		if null(d) {
			return true
		}
		if depth >= maxSideDepth {
			return false
		}
		m := reflect.MakeMap(t)
		reflect.NewAt(t, p).Elem().Set(m)
		k, e := reflect.New(kt).Elem(), reflect.New(et).Elem()
		ep := e.Addr().UnsafePointer()
		return d.r.Object(func(key []byte) bool {
			// A repeated key takes the last value, as with
			// encoding/json, which decodes each into a zero value.
			e.SetZero()
			if !elem(d, ep, depth+1) {
				return false
			}
			k.SetString(d.str(key)) // plain ASCII (Reader.Object)
			m.SetMapIndex(k, e)
			return true
		})
	}, true
}

// sideField is a field of a struct as encoding/json names it, at offset
// in the struct. same, when not nil, reads the field's value when it is
// the held one's (see heldSide); nested says that dec is a struct's,
// which takes the held struct.
type sideField struct {
	name   string
	offset uintptr
	dec    sideDecoder
	same   sameField
	nested bool
	// key and nextKey are the member's opening as encoding/json writes
	// it, first in its object and after another: `"name":` and
	// `,"name":` (see structAsWritten).
	key, nextKey string
}

// jsonFields returns the fields of struct type t that encoding/json
// reads and writes (exported, not tagged "-"), in order; false when t
// embeds one (encoding/json's promotion rules, left to it).
func jsonFields(t reflect.Type) ([]reflect.StructField, bool) {
	var out []reflect.StructField
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil, false
		}
		if sf.IsExported() && sf.Tag.Get("json") != "-" {
			out = append(out, sf)
		}
	}
	return out, true
}

func (c *sideCompiler) structOf(t reflect.Type) (sideDecoder, bool) {
	fields, ok := c.structFields(t)
	if !ok {
		return nil, false
	}
	return structDecoder(t, fields), true
}

// structFields compiles the fields of struct type t, in order, or reports
// false when t has one that a sideDecoder does not handle.
func (c *sideCompiler) structFields(t reflect.Type) ([]sideField, bool) {
	var fields []sideField
	sfs, ok := jsonFields(t)
	if !ok {
		return nil, false
	}
	for _, sf := range sfs {
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if !plainTagName(name) || !plainTagOpts(opts) {
			return nil, false
		}
		if name == "" {
			name = sf.Name
		}
		for _, f := range fields {
			if f.name == name {
				return nil, false // encoding/json's rules for clashes
			}
		}
		dec, ok := c.compile(sf.Type)
		if !ok {
			return nil, false
		}
		fields = append(fields, sideField{name: name, offset: sf.Offset, dec: dec, same: sameFieldOf(sf.Type),
			nested: sf.Type.Kind() == reflect.Struct && sf.Type != timeType,
			key:    `"` + name + `":`, nextKey: `,"` + name + `":`})
	}
	if len(fields) > 64 {
		return nil, false
	}
	return fields, true
}

// structDecoder returns the sideDecoder of a struct of type t with fields.
func structDecoder(t reflect.Type, fields []sideField) sideDecoder {
	return func(d *metaDecoder, p unsafe.Pointer, depth int) bool {
		held := d.held
		d.held = nil
		if null(d) {
			return true
		}
		if depth >= maxSideDepth {
			return false
		}
		start := d.r
		if structAsWritten(d, fields, p, held, depth) {
			return true
		}
		// Read member by member from the start, into a zero struct
		// again (structAsWritten may have decoded some fields).
		d.r = start
		reflect.NewAt(t, p).Elem().SetZero()
		var seen uint64
		// The fields are looked for from the one after the last found:
		// encoding/json writes them in order, so that is the next key
		// but for the omitted ones.
		next := 0
		return d.r.Object(func(key []byte) bool {
			for j := range fields {
				i := next + j
				if i >= len(fields) {
					i -= len(fields)
				}
				f := &fields[i]
				if string(key) != f.name {
					continue
				}
				if seen&(1<<i) != 0 {
					return false // given twice
				}
				seen |= 1 << i
				next = i + 1
				return f.decode(d, unsafe.Add(p, f.offset), held, depth+1)
			}
			return false // not exactly a field's name
		})
	}
}

// structAsWritten decodes the struct at d.r into p, as structDecoder's
// member loop does, when its text is spelled as encoding/json writes it:
// no white space around the braces and keys, each key a field's name
// exactly, the fields in their order (any of them left out). That is what
// the store writes, and each key then costs one comparison with the text
// the next fields open with, where the member loop reads the key's token
// and looks for the field it names. It reports false for any other text,
// or a value that a field's decoder declines, having read part of it and
// decoded part of p: the caller then reads the text member by member from
// the start, into a zero struct, which gives the same result for the
// texts structAsWritten reads (the member loop takes the same keys in the
// same order to the same decoders) and its own for the others.
func structAsWritten(d *metaDecoder, fields []sideField, p, held unsafe.Pointer, depth int) bool {
	r := &d.r
	if !r.Literal(`{`) {
		return false
	}
	if r.Literal(`}`) {
		return true
	}
	first := true
	for i := range fields {
		f := &fields[i]
		key := f.nextKey
		if first {
			key = f.key
		}
		if !r.Literal(key) {
			continue
		}
		first = false
		if !f.decode(d, unsafe.Add(p, f.offset), held, depth+1) {
			return false
		}
	}
	return r.Literal(`}`)
}

// decode decodes the field's value at d.r into fp, sharing the value of
// held (the held struct, when not nil) when it may (see heldSide).
func (f *sideField) decode(d *metaDecoder, fp, held unsafe.Pointer, depth int) bool {
	if held != nil {
		hp := unsafe.Add(held, f.offset)
		switch {
		case f.same != nil && f.same(d, hp, fp):
			return true
		case f.nested:
			d.held = hp // for its decoder to take
		}
	}
	return f.dec(d, fp, depth)
}

// heldSide: a watch event's Spec or Status decoded over the held object
// (see WatchUndecoded) shares the held one's strings, []string and
// map[string]string fields, at any depth of structs, whose text decodes to
// what they hold: another client's spec update that changes a count
// leaves the spec's lists and maps as they were, and decoding them again
// was most of what decoding the spec cost (a map and a slice allocated
// per event). The held object is read-only, as the new one is, so they may
// share them, as the Spec of a status write is shared whole (see
// heldObjects.sameSpec). What is shared is decided by comparing the text
// with the held values themselves, not with the bytes they were decoded
// from, so it needs no base bytes (a value past the Store's memory) and
// holds whatever the held object was decoded from: a field shares the
// held value only when its text decodes to an equal one. A held list or
// map that the decoder handed out from its shared values (see
// sharedValues.texts) is compared by the text it was decoded from, at
// once, before element by element.
//
// A sameField reads the value at d.r when it is written as the store's
// encoding writes it (no white space, plain strings, a map's keys in
// increasing order) and decodes to what h points at (an empty or nil one
// never does: the text of an empty list or map decodes to an empty, not a
// nil, one and a null to nothing), and then sets *p to it; otherwise it
// reads nothing and reports false, and the field's decoder reads it.
type sameField func(d *metaDecoder, h, p unsafe.Pointer) bool

// sameFieldOf returns the sameField of a field of type t, nil for one
// whose value is not worth sharing or is not compared.
func sameFieldOf(t reflect.Type) sameField {
	switch t {
	case stringType:
		return sameString
	case stringsType:
		return sameStrings
	case stringMapType:
		return sameStringMap
	}
	return nil
}

func sameString(d *metaDecoder, h, p unsafe.Pointer) bool {
	held := *(*string)(h)
	sc := d.scratch
	if sc != nil && sc.plain.has(held) && d.r.Quoted(held) {
		*(*string)(p) = held
		return true
	}
	start := d.r
	b, ok := d.r.Plain()
	if ok && string(b) == held {
		*(*string)(p) = held
		if sc != nil {
			sc.plain.keep(held)
		}
		return true
	}
	d.r = start
	return false
}

// plainStrings are held strings (see heldSide) found to be plain text:
// what Plain read, each byte printable ASCII other than a quote or a
// backslash. Plain then reads s from the text "s" and from no other, so
// sameString reads a held string it holds with one comparison of its
// bytes (Reader.Quoted), where Plain scans them for the byte that ends
// them and then compares them: for the controller benchmark's 51-byte
// image, ~150 instructions where it was ~410, ~290 of them Plain's. A
// string is known by its bytes' address and length, those of the string
// found plain, which it holds: so that memory is no other string's, and
// a longer string at that address (of which the one found plain is a
// part) is not taken for it (a string's bytes never change). The strings
// of a kind's held objects are mostly the same few (d.str hands out one
// string for a text that repeats); the oldest goes first.
type plainStrings struct {
	s    [4]string
	next int
}

// has reports whether v holds s (its bytes, not an equal string).
func (v *plainStrings) has(s string) bool {
	for i := range v.s {
		if len(v.s[i]) == len(s) && unsafe.StringData(v.s[i]) == unsafe.StringData(s) {
			return true
		}
	}
	return false
}

// keep remembers s, a string Plain read, in place of the oldest.
func (v *plainStrings) keep(s string) {
	v.s[v.next] = s
	v.next = (v.next + 1) % len(v.s)
}

func sameStrings(d *metaDecoder, h, p unsafe.Pointer) bool {
	held := *(*[]string)(h)
	if len(held) == 0 {
		return false
	}
	if hp, n := listAt(held); d.sameText(hp, n) {
		*(*[]string)(p) = held
		return true
	}
	start := d.r
	r := &d.r
	ok := r.Literal(`[`)
	for i := 0; ok; i++ {
		var b []byte
		b, ok = r.Plain()
		ok = ok && i < len(held) && string(b) == held[i]
		if ok && r.Literal(`]`) {
			if i+1 == len(held) {
				*(*[]string)(p) = held
				if v := d.sharing(); v != nil {
					hp, n := listAt(held)
					v.keepText(hp, n, string(r.Since(start.Pos())))
				}
				return true
			}
			break
		}
		ok = ok && r.Literal(`,`)
	}
	d.r = start
	return false
}

func sameStringMap(d *metaDecoder, h, p unsafe.Pointer) bool {
	held := *(*map[string]string)(h)
	if len(held) == 0 {
		return false
	}
	if hp, n := mapAt(held); d.sameText(hp, n) {
		*(*map[string]string)(p) = held
		return true
	}
	start := d.r
	n, same := 0, true
	// Keys in increasing order are distinct: n of them, each held's with
	// its value, are held's n entries.
	ok := d.entriesAsWritten(func(k, v []byte) {
		hv, in := held[string(k)]
		same = same && in && hv == string(v)
		n++
	})
	if ok && same && n == len(held) {
		*(*map[string]string)(p) = held
		if v := d.sharing(); v != nil {
			hp, n := mapAt(held)
			v.keepText(hp, n, string(d.r.Since(start.Pos())))
		}
		return true
	}
	d.r = start
	return false
}

// plainTagName reports whether a json tag's name is one encoding/json
// takes as it is and that a plain ASCII key can spell: letters, digits,
// '_', '-' and '.' ("" for the field's name).
func plainTagName(name string) bool {
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

// plainTagOpts reports whether a json tag's options change nothing about
// decoding: "string" does.
func plainTagOpts(opts string) bool {
	return !slices.Contains(strings.Split(opts, ","), "string")
}
