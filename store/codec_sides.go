package store

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

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
type sideDecoder func(d *metaDecoder, v reflect.Value, depth int) bool

// maxSideDepth bounds nesting as jsonscan and encoding/json do.
const maxSideDepth = 10000

// sidePlans holds the Store's sideDecoders for S and T (nil: none).
type sidePlans struct{ spec, status sideDecoder }

func sidePlansOf[S, T any]() *sidePlans {
	return &sidePlans{spec: sidePlanOf(reflect.TypeFor[S]()), status: sidePlanOf(reflect.TypeFor[T]())}
}

// decodeSide decodes v, one JSON value that jsonscan validated, into p, a
// pointer to a zero value, with plan when there is one and with
// encoding/json otherwise (or when plan declines), reporting whether it
// decoded.
func (d *metaDecoder) decodeSide(v []byte, p any, plan sideDecoder) bool {
	if plan != nil {
		outer := d.r
		d.r = jsonscan.NewReader(v)
		e := reflect.ValueOf(p).Elem()
		ok := plan(d, e, 0) && d.r.End()
		d.r = outer
		if ok {
			return true
		}
		e.SetZero() // encoding/json decodes into a zero value
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
			return func(d *metaDecoder, v reflect.Value, depth int) bool { return (*p)(d, v, depth) }, true
		}
		self := new(sideDecoder)
		c.late[t] = self
		dec, ok := c.composite(t)
		*self = dec
		return dec, ok
	}
	switch t.Kind() {
	case reflect.Bool:
		return decodeBool, true
	case reflect.String:
		return decodeString, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return decodeInt, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return decodeUint, true
	case reflect.Float32, reflect.Float64:
		return decodeFloat, true
	}
	return nil, false // interfaces, arrays, complex numbers, channels, funcs
}

// composite compiles the decoder of a pointer, slice, map or struct type.
func (c *sideCompiler) composite(t reflect.Type) (sideDecoder, bool) {
	switch t.Kind() {
	case reflect.Pointer:
		return c.pointer(t)
	case reflect.Slice:
		if t == stringsType {
			return decodeStrings, true
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, false // base64
		}
		return c.slice(t)
	case reflect.Map:
		if t == stringMapType {
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
	stringsType   = reflect.TypeFor[[]string]()
	stringMapType = reflect.TypeFor[map[string]string]()
)

// decodeStrings and decodeStringMap are the slice and map decoders for the
// commonest element type, without reflection per element (a null element
// reports false).
func decodeStrings(d *metaDecoder, v reflect.Value, _ int) bool {
	if null(d) {
		return true
	}
	s, ok := list(d, (*metaDecoder).string)
	*v.Addr().Interface().(*[]string) = s // reflect.ValueOf(s) would allocate
	return ok
}

func decodeStringMap(d *metaDecoder, v reflect.Value, _ int) bool {
	if null(d) {
		return true
	}
	m, ok := d.stringMap()
	v.Set(reflect.ValueOf(m))
	return ok
}

// null reads a null, which encoding/json decodes into any value as
// leaving it as it is (zero: the decoders fill zero values), or as
// setting a pointer, slice or map to nil.
func null(d *metaDecoder) bool {
	return d.r.Next() == 'n' && d.r.Null()
}

func decodeBool(d *metaDecoder, v reflect.Value, _ int) bool {
	if null(d) {
		return true
	}
	b, ok := d.r.Bool()
	v.SetBool(b)
	return ok
}

func decodeString(d *metaDecoder, v reflect.Value, _ int) bool {
	if null(d) {
		return true
	}
	s, ok := d.string()
	v.SetString(s)
	return ok
}

func decodeInt(d *metaDecoder, v reflect.Value, _ int) bool {
	if null(d) {
		return true
	}
	n, ok := d.r.Int64()
	if !ok || v.OverflowInt(n) {
		return false
	}
	v.SetInt(n)
	return true
}

func decodeUint(d *metaDecoder, v reflect.Value, _ int) bool {
	if null(d) {
		return true
	}
	if d.r.Next() == '-' {
		return false // encoding/json refuses even -0
	}
	n, ok := d.r.Int64()
	if !ok || v.OverflowUint(uint64(n)) {
		return false
	}
	v.SetUint(uint64(n))
	return true
}

func decodeFloat(d *metaDecoder, v reflect.Value, _ int) bool {
	if null(d) {
		return true
	}
	text, ok := d.r.Number()
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(text), v.Type().Bits())
	if err != nil || v.OverflowFloat(f) {
		return false
	}
	v.SetFloat(f)
	return true
}

// decodeTime does what encoding/json does for a string token into a
// time.Time: it calls its UnmarshalJSON, with the quotes.
func decodeTime(d *metaDecoder, v reflect.Value, _ int) bool {
	if null(d) {
		return true
	}
	raw, ok := d.r.Raw()
	return ok && raw[0] == '"' && v.Addr().Interface().(*time.Time).UnmarshalJSON(raw) == nil
}

func (c *sideCompiler) pointer(t reflect.Type) (sideDecoder, bool) {
	elem, ok := c.compile(t.Elem())
	if !ok {
		return nil, false
	}
	et := t.Elem()
	return func(d *metaDecoder, v reflect.Value, depth int) bool {
		if null(d) {
			return true
		}
		if depth >= maxSideDepth {
			return false // a pointer to itself reads no byte per level
		}
		p := reflect.New(et)
		v.Set(p)
		return elem(d, p.Elem(), depth+1)
	}, true
}

func (c *sideCompiler) slice(t reflect.Type) (sideDecoder, bool) {
	elem, ok := c.compile(t.Elem())
	if !ok {
		return nil, false
	}
	return func(d *metaDecoder, v reflect.Value, depth int) bool {
		if null(d) {
			return true
		}
		if depth >= maxSideDepth {
			return false
		}
		// v grows in place: a reflect.MakeSlice per array would cost an
		// allocation for its header.
		n := 0
		ok := d.r.Array(func() bool {
			if n == v.Cap() {
				v.Grow(max(n, 4))
			}
			v.SetLen(n + 1)
			n++
			return elem(d, v.Index(n-1), depth+1)
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
	return func(d *metaDecoder, v reflect.Value, depth int) bool {
		if null(d) {
			return true
		}
		if depth >= maxSideDepth {
			return false
		}
		m := reflect.MakeMap(t)
		v.Set(m)
		k, e := reflect.New(kt).Elem(), reflect.New(et).Elem()
		return d.r.Object(func(key []byte) bool {
			// A repeated key takes the last value, as with
			// encoding/json, which decodes each into a zero value.
			e.SetZero()
			if !elem(d, e, depth+1) {
				return false
			}
			k.SetString(d.str(key)) // plain ASCII (Reader.Object)
			m.SetMapIndex(k, e)
			return true
		})
	}, true
}

// sideField is a field of a struct as encoding/json names it. same, when
// not nil, reads the field's value when it is the held one's (see
// heldSide); nested says that dec is a struct's, which takes the held
// struct.
type sideField struct {
	name   string
	index  int
	dec    sideDecoder
	same   sameField
	nested bool
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
	var fields []sideField
	sfs, ok := jsonFields(t)
	if !ok {
		return nil, false
	}
	for _, sf := range sfs {
		i := sf.Index[0]
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
		fields = append(fields, sideField{name: name, index: i, dec: dec, same: sameFieldOf(sf.Type),
			nested: sf.Type.Kind() == reflect.Struct && sf.Type != timeType})
	}
	if len(fields) > 64 {
		return nil, false
	}
	return structDecoder(fields), true
}

// structDecoder returns the sideDecoder of a struct with fields.
func structDecoder(fields []sideField) sideDecoder {
	return func(d *metaDecoder, v reflect.Value, depth int) bool {
		held := d.held
		d.held = reflect.Value{}
		if null(d) {
			return true
		}
		if depth >= maxSideDepth {
			return false
		}
		var seen uint64
		return d.r.Object(func(key []byte) bool {
			for i := range fields {
				f := &fields[i]
				if string(key) != f.name {
					continue
				}
				if seen&(1<<i) != 0 {
					return false // given twice
				}
				seen |= 1 << i
				return f.decode(d, v.Field(f.index), held, depth+1)
			}
			return false // not exactly a field's name
		})
	}
}

// decode decodes the field's value at d.r into fv, sharing the value of
// held (the held struct, when valid) when it may (see heldSide).
func (f *sideField) decode(d *metaDecoder, fv, held reflect.Value, depth int) bool {
	if held.IsValid() {
		hv := held.Field(f.index)
		switch {
		case f.same != nil && f.same(d, hv):
			fv.Set(hv)
			return true
		case f.nested:
			d.held = hv // for its decoder to take
		}
	}
	return f.dec(d, fv, depth)
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
// held value only when its text decodes to an equal one.
//
// A sameField reads the value at d.r when it is written as the store's
// encoding writes it (no white space, plain strings, a map's keys in
// increasing order) and decodes to what h holds (an empty or nil h never
// is: the text of an empty list or map decodes to an empty, not a nil, one
// and a null to nothing); otherwise it reads nothing and reports false, and
// the field's decoder reads it.
type sameField func(d *metaDecoder, h reflect.Value) bool

// sameFieldOf returns the sameField of a field of type t, nil for one
// whose value is not worth sharing or is not compared.
func sameFieldOf(t reflect.Type) sameField {
	switch t {
	case reflect.TypeFor[string]():
		return sameString
	case stringsType:
		return sameStrings
	case stringMapType:
		return sameStringMap
	}
	return nil
}

func sameString(d *metaDecoder, h reflect.Value) bool {
	start := d.r
	b, ok := d.r.Plain()
	if ok && string(b) == h.String() {
		return true
	}
	d.r = start
	return false
}

func sameStrings(d *metaDecoder, h reflect.Value) bool {
	if !h.CanAddr() {
		return false
	}
	held := *h.Addr().Interface().(*[]string)
	if len(held) == 0 {
		return false
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
				return true
			}
			break
		}
		ok = ok && r.Literal(`,`)
	}
	d.r = start
	return false
}

func sameStringMap(d *metaDecoder, h reflect.Value) bool {
	if !h.CanAddr() {
		return false
	}
	held := *h.Addr().Interface().(*map[string]string)
	if len(held) == 0 {
		return false
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
