package store

import (
	"bytes"
	"encoding/json"
	"reflect"
	"unsafe"

	"github.com/steady-go/steady/internal/jsonscan"
)

// storedValue holds the parts of a stored value as decodeStored reads them:
// Meta and Conditions decoded, Spec and Status as their bytes in the value
// (nil when absent).
type storedValue struct {
	spec, status []byte
	preserved    []byte
}

// decodeStored reads a stored value the way the store writes it, in one
// pass: Meta and Conditions into m and conds with d, Spec and Status
// validated and sliced (and decoded too when d says so: metaDecoder.into).
// It handles exactly the values the store writes (the
// four keys, each at most once, spelled as encode spells them, or Meta under
// the legacy key, and what metaDecoder reads) and reports false for anything
// else, well-formed or not, which the caller then decodes the general way
// (encoding/json); so both give the same result and the same errors.
func decodeStored(value []byte, m *Meta, conds *[]Condition, d *metaDecoder) (storedValue, bool) {
	var out storedValue
	var seen [6]bool
	d.found, d.headEnd = d.first, 0
	d.r = jsonscan.NewReader(value)
	r := &d.r
	ok := r.Object(func(key []byte) bool {
		var k int
		var ok bool
		switch string(key) {
		case "metadata", legacyMetaKey:
			k, ok = 0, d.meta(m)
		case "spec":
			k = 1
			if d.specShape {
				out.spec, ok = d.readSpec(m)
				break
			}
			if b := d.base; b != nil && b.specAsHeld > 0 {
				// The Store's own encoding of a spec that decoded,
				// right after its key (see baseValue.overOwn).
				out.spec, ok = r.Skip(b.specAsHeld)
				b.specSame = ok
				break
			}
			var s sideRead
			s, ok = d.sideOf(value, key, d.into.spec, d.into.specPlan, d.into.specType, d.into.specHeld, d.base != nil && d.base.sides.spec)
			out.spec, d.into.specDone = s.raw, s.decoded
			if s.same {
				d.base.specSame = true
			}
		case "status":
			k = 2
			var s sideRead
			s, ok = d.sideOf(value, key, d.into.status, d.into.statusPlan, d.into.statusType, d.into.statusHeld, d.base != nil && d.base.sides.status)
			out.status, d.into.statusDone = s.raw, s.decoded
			if s.same {
				d.base.statusSame = true
			}
		case "conditions":
			k = 3
			*conds, ok = d.conditionsOrBase(value, key)
		case "version":
			k = 4
			var v string
			v, ok = d.string()
			d.found = d.versionOf(v)
			if ok && d.typed && d.found != d.version {
				// A typed decode cannot read a value of another
				// version: stop before its metadata, which the
				// conversion (decodeConverted) decodes.
				d.otherVersion = true
				return false
			}
		case "preserved":
			k = 5
			out.preserved, ok = r.Raw()
		}
		if !ok || seen[k] {
			return false
		}
		seen[k] = true
		return true
	})
	return out, ok && r.End()
}

// sidesInto is where decodeStored decodes a typed object's Spec and
// Status as it reads them, each in one pass where its bytes are read
// (validated, then decoded, was two), with their sideDecoders; zero (no
// plan) for a raw read. specDone and statusDone report the sides it
// decoded. specHeld and statusHeld, when not nil, point at the held
// object's Spec and Status (see heldSide), whose unchanged fields the new
// ones may share.
type sidesInto struct {
	spec, status         unsafe.Pointer
	specPlan, statusPlan sideDecoder
	specType, statusType reflect.Type
	specHeld, statusHeld unsafe.Pointer
	specDone, statusDone bool
}

// sideRead is what metaDecoder.sideOf read.
type sideRead struct {
	raw []byte
	// decoded: into its sidesInto value; same: the base holds it (may
	// it be taken, see baseValue).
	decoded, same bool
}

// sideOf reads the Spec or Status at d.r, the value of key in value: decoded
// into *p with plan in the same pass when plan is not nil and the base
// (when may) does not hold it, and as its bytes. A value plan declines is
// read again as bytes alone, *p zero, for decodeSides to decode. t is
// *p's type. held, when not nil, points at the held object's side, whose
// fields *p may share (see heldSide).
func (d *metaDecoder) sideOf(value, key []byte, p unsafe.Pointer, plan sideDecoder, t reflect.Type, held unsafe.Pointer, may bool) (sideRead, bool) {
	r := &d.r
	r.Next() // the white space before it
	start := r.Pos()
	b := d.base
	if may && b.inSuffix(value, key, start) {
		// The base's own bytes, which it was read whole from: valid, so
		// the value's end is all there is to find (SkipValid).
		raw, ok := r.SkipValid()
		return sideRead{raw: raw, same: ok}, ok
	}
	if plan != nil {
		outer := *r
		if t.Kind() == reflect.Struct {
			d.held = held // for plan, a struct's decoder, to take
		}
		ok := plan(d, p, 0)
		d.held = nil
		if ok {
			return sideRead{raw: value[start:r.Pos()], decoded: true}, true
		}
		reflect.NewAt(t, p).Elem().SetZero()
		*r = outer
	}
	raw, ok := r.Raw()
	return sideRead{raw: raw, same: ok && may && b.samePrefix(value, r.Pos())}, ok
}

// conditionsOrBase reads the conditions at d.r, the value of key in value,
// or takes the base's when they are the same (see baseValue).
func (d *metaDecoder) conditionsOrBase(value, key []byte) ([]Condition, bool) {
	b := d.base
	start := d.r.Pos()
	if b == nil {
		return d.conditions()
	}
	if b.inSuffix(value, key, start) {
		// The base's, valid (see sideOf).
		_, ok := d.r.SkipValid()
		return b.conds, ok
	}
	if !b.samePrefix(value, start+1) {
		return d.conditions()
	}
	raw, ok := d.r.Raw()
	if !ok {
		return nil, false
	}
	if b.member(value, key, start, d.r.Pos()) {
		return b.conds, true
	}
	outer := d.r
	d.r = jsonscan.NewReader(raw)
	conds, ok := d.conditions()
	ok = ok && d.r.End()
	d.r = outer
	return conds, ok
}

// readSpec reads the spec's raw text at d.r; when the records in m relative to
// the spec need its shape, it also reads the shape key into d.specKey
// (in d.scratch's buffer when there is one).
//
// A write's read needs the key: the write's keepManaged takes the spec
// side's Codec key from it (codecKey, then keptWrite.same), and without it
// sideShapeKey reads the spec a second time. Read in the pass that slices
// the spec, it costs only the appends of its runs (RawShape against Raw:
// ~400 instructions on the controller benchmark's spec, against ~2,800 for
// AppendShapeKey's own pass); BenchmarkEventToReconcile without it runs
// ~4,800 instructions more per event (bench/split.sh).
func (d *metaDecoder) readSpec(m *Meta) ([]byte, bool) {
	r := &d.r
	d.specKey = nil // not an earlier value's
	if !d.specShape || !hasRelative(m.Managed, specSide) {
		return r.Raw()
	}
	var buf []byte
	if d.scratch != nil {
		buf = d.scratch.shape[:0]
	}
	spec, buf, keyed, ok := r.RawShape(buf)
	if d.scratch != nil {
		d.scratch.shape = buf
	}
	if keyed {
		d.specKey = buf
	}
	return spec, ok
}

// decodeRawFast decodes a stored value as decodeRaw does with
// decodeStored, reporting false when that does.
func decodeRawFast(value []byte, raw *rawObject, d *metaDecoder) bool {
	if !decodeRawShared(value, raw, d) {
		return false
	}
	if raw.Preserved != nil {
		raw.Preserved = append(json.RawMessage(nil), raw.Preserved...)
	}
	raw.ownSides(d.specKey)
	if d.found == "" {
		raw.head = d.headOf(value)
	}
	return true
}

// ownSides replaces raw's Spec and Status, slices of the value read, with
// one copy of their bytes, as encoding/json would not keep references into
// the value either; key, the spec's shape key when the read computed it
// (nil when not), shares that copy (see rawObject.specKey).
func (raw *rawObject) ownSides(key []byte) {
	if n := len(raw.Spec) + len(raw.Status) + len(key); n > 0 {
		buf := make([]byte, 0, n)
		buf = append(buf, raw.Spec...)
		buf = append(buf, raw.Status...)
		buf = append(buf, key...)
		spec, status := len(raw.Spec), len(raw.Spec)+len(raw.Status)
		if raw.Spec != nil {
			raw.Spec = buf[:spec:spec]
		}
		if raw.Status != nil {
			raw.Status = buf[spec:status:status]
		}
		if key != nil {
			raw.shape = shapeOf(raw.Spec, buf[status:])
		}
	}
}

// shareSides is ownSides for the read of a write of a Store that does not
// remember values (see decodeRawAs): Spec and Status stay slices of the
// value read, which its Backend never modifies (kv.Backend), capped at
// their length so that no append writes into it, rather than a copy (an
// allocation and ~500 instructions of the other writer's Update on the
// controller benchmark). Nothing keeps them past the write, which copies
// what it keeps of them into the value it writes; a memory of values
// would, and would then hold the whole value read. key, the spec's shape
// key (nil when not computed), is taken as it is when immutable (keyOwn),
// else copied (it is the decoder's scratch).
func (raw *rawObject) shareSides(key []byte, keyOwn bool) {
	raw.Spec = raw.Spec[:len(raw.Spec):len(raw.Spec)]
	raw.Status = raw.Status[:len(raw.Status):len(raw.Status)]
	if key != nil {
		if !keyOwn {
			key = bytes.Clone(key)
		}
		raw.shape = shapeOf(raw.Spec, key)
	}
}

// decodeRawShared is decodeRawFast with Spec, Status and Preserved slices
// of value, for a raw that does not outlive value.
func decodeRawShared(value []byte, raw *rawObject, d *metaDecoder) bool {
	parts, ok := decodeStored(value, &raw.Meta, &raw.Conditions, d)
	if !ok {
		return false
	}
	if d.found != "" {
		raw.Version = d.found
	}
	raw.Spec, raw.Status, raw.Preserved = parts.spec, parts.status, parts.preserved
	return true
}

// decodeObjectFast is decodeRawFast for a typed object: Spec and Status go
// through encoding/json, each from its own bytes, unless like (when not
// nil) holds a Spec or Status decoded from the same bytes that cp allows to
// copy. It reports false for what decodeStored declines and for a value
// that encoding/json would not decode into obj; the caller then decodes it
// with encoding/json alone, into a new object. It returns obj with the
// bytes of its Spec and Status, for a later call's like.
func decodeObjectFast[S, T any](value []byte, obj *Object[S, T], d *metaDecoder, like *decodedFrom[S, T], cp copies) (decodedFrom[S, T], bool) {
	d.typed = true
	if (like == nil || d.base != nil) && d.plans != nil {
		// Without like, whose sides are copied when their bytes match
		// (known once read), in the pass that reads them.
		d.into = sidesIntoOf(d.plans, obj, like)
	}
	parts, ok := decodeStored(value, &obj.Meta, &obj.Conditions, d)
	into := d.into
	d.typed, d.into = false, sidesInto{}
	if !ok {
		return decodedFrom[S, T]{}, false
	}
	if d.found != d.version {
		d.otherVersion = true
		return decodedFrom[S, T]{}, false
	}
	if b := d.base; b != nil && like != nil {
		// like is the held object; take the sides it has as they are.
		held := *like
		if b.specSame {
			held.spec, cp.spec = parts.spec, true
		}
		if b.statusSame {
			held.status, cp.status = parts.status, true
		}
		like = &held
	}
	spec, status := parts.spec, parts.status
	if into.specDone {
		spec = nil // decoded
	}
	if into.statusDone {
		status = nil
	}
	if !decodeSides(d, obj, spec, status, like, cp) {
		return decodedFrom[S, T]{}, false
	}
	plain := parts.preserved == nil && d.found == ""
	from := decodedFrom[S, T]{obj: obj, spec: parts.spec, status: parts.status, plain: plain}
	if plain {
		from.headEnd = d.headOf(value).n
	}
	return from, true
}

// sidesIntoOf returns the sidesInto of obj for plans, over like, the held
// object, when not nil (see heldSide).
func sidesIntoOf[S, T any](plans *sidePlans, obj *Object[S, T], like *decodedFrom[S, T]) sidesInto {
	into := sidesInto{specPlan: plans.spec, statusPlan: plans.status, specType: plans.specType, statusType: plans.statusType,
		spec: unsafe.Pointer(&obj.Spec), status: unsafe.Pointer(&obj.Status)}
	if like != nil {
		into.specHeld, into.statusHeld = unsafe.Pointer(&like.obj.Spec), unsafe.Pointer(&like.obj.Status)
	}
	return into
}

// decodeSides decodes spec and status (nil when absent), the bytes of a
// stored value's Spec and Status, into obj's, or copies from like (when
// not nil) the one that like holds decoded from the same bytes when cp
// allows, reporting false when decodeSide does.
func decodeSides[S, T any](d *metaDecoder, obj *Object[S, T], spec, status []byte, like *decodedFrom[S, T], cp copies) bool {
	var plans sidePlans
	if d.plans != nil {
		plans = *d.plans
	}
	switch {
	case spec == nil:
	case cp.spec && like != nil && sameBytes(spec, like.spec):
		obj.Spec = like.obj.Spec
	case !d.decodeSide(spec, &obj.Spec, plans.spec):
		return false
	}
	switch {
	case status == nil:
	case cp.status && like != nil && sameBytes(status, like.status):
		obj.Status = like.obj.Status
	case !d.decodeSide(status, &obj.Status, plans.status):
		return false
	}
	return true
}
