package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"unsafe"

	"github.com/steady-go/steady/internal/jsonscan"
	"github.com/steady-go/steady/ownership"
)

// metaDecoder decodes the Meta and Conditions of stored values without
// encoding/json's reflection, which is most of the cost of reading an object
// (a watch event decodes two, a write reads one), reading each byte once. It
// reads exactly what the store writes: each of Meta's keys at most once and
// spelled as encoding/json spells it, non-null values of the fields' JSON
// types, integers that fit int64. For anything else, well-formed or not (a
// key in another case, a duplicate, a null, 2.0 for an integer), it reports
// false and the caller decodes the value with encoding/json, so both ways
// give the same result and the same errors (FuzzDecodeObjectFast holds them
// to that).
//
// It allocates only what the decoded value owns that is not already at hand:
// a string that spells the Store's kind or the key's name is that string, and
// with scratch space a string seen lately is the one decoded then. Strings
// are immutable, so sharing one between objects is safe; maps and slices
// are shared only with a held object the value is decoded over (see
// baseValue), which is read-only.
type metaDecoder struct {
	kind, name string
	scratch    *decodeScratch // nil: none
	// plans decodes typed Specs and Statuses (nil: encoding/json does).
	plans *sidePlans
	r     jsonscan.Reader
	// version is the version the Store serves and first the version of a
	// value stored without one (both "" for a kind without versions);
	// found is the version of the value read, first until its key is read.
	version, first, found string
	// otherVersion reports that the value is at another version than the
	// Store serves; typed makes decodeStored stop when it finds that.
	otherVersion, typed bool
	// With specShape, decodeStored reads the spec's shape key into
	// specKey (nil when it has none, or no record is encoded relative to
	// the spec side) as it reads the spec, after the metadata as the
	// store writes them: for the conversion of the ownership records.
	specShape bool
	specKey   []byte
	// base, when not nil, is the value the held object was decoded from
	// (see baseValue): decodeStored takes from it what is the same.
	base *baseValue
	// into, for a typed decode, is where decodeStored decodes the Spec
	// and Status (see sidesInto).
	into sidesInto
	// held, when not nil, points at the held object's struct at the place
	// being decoded, for the struct's sideDecoder to take (see heldSide);
	// valid only from where it is set to that decoder's start.
	held unsafe.Pointer
	// headEnd is, once meta read metadata laid out as appendMeta writes
	// them, the offset in the text read of their last write's member (its
	// comma), else 0 (see storedHead).
	headEnd int
}

// versionOf returns the version of a value whose version key holds v.
func (d *metaDecoder) versionOf(v string) string {
	if v == "" {
		return d.first
	}
	return v
}

// decodeScratch is what one goroutine that decodes many values (a watch)
// keeps from one value to the next. It is not safe for concurrent use.
type decodeScratch struct {
	// strings remembers the last strings decoded, two per slot, so that
	// those that repeat from one object to the next (label keys and
	// values, manager names, the UID of an object's old and new state)
	// are allocated once.
	strings [1 << strSlotBits][2]string
	// dec decodes Spec and Status, reusing its state from one value to
	// the next (json.Unmarshal allocates it anew every call); nil until
	// first used, and after an error.
	dec *json.Decoder
	r   bytes.Reader
	// shape holds the last spec shape key read (metaDecoder.specKey).
	shape []byte
	// managed and writes remember the last ownership records and last
	// writes read, by their text (see textMemo).
	managed textMemo[ManagedFields]
	writes  textMemo[LastWrite]
	// plain holds the last held strings that sameString found to be
	// plain text (see plainStrings).
	plain plainStrings
	// validWrite is the last write whose strings decodeWritten last found
	// valid UTF-8 (see exactMeta).
	validWrite LastWrite
	// sharing, when not nil, says that the objects decoded with this
	// space are shared and read-only, those of different names as well,
	// and holds what they share (see sharedValues).
	sharing *sharedValues
	// kept is what a watch gave the Store's memory lately (see
	// keptLists).
	kept keptLists
	// d is the decoder of the value being read, kept here so that it costs
	// no allocation; base likewise, for its base.
	d    metaDecoder
	base baseValue
	// used says that d may hold what a decode left: metaDecoderOf zeroes
	// it before its next one. giveBack leaves it zero.
	used bool
	// raw and spec are what an Update of a Store without a memory of
	// values holds here for its write (see updateRead): the object read,
	// and the buffer of its spec's encoding.
	raw  rawObject
	spec []byte
}

// borrowScratch lends scratch space from the Store's pool to a decoder that
// reads one value per call (Get, List, the read of a write), so that it too
// allocates a repeated string once and no decoder state. giveBack returns it.
func (s *Store[S, T]) borrowScratch() *decodeScratch {
	if sc, ok := s.scratch.Get().(*decodeScratch); ok {
		return sc
	}
	return new(decodeScratch)
}

// giveBack returns sc to the Store's pool, keeping its strings but no
// reference to the value it read last, nor to what a listing's objects
// share.
func (s *Store[S, T]) giveBack(sc *decodeScratch) {
	sc.d, sc.used = metaDecoder{}, false
	sc.sharing = nil
	sc.r.Reset(nil)
	s.scratch.Put(sc)
}

// str returns the string of a JSON string token's plain ASCII content b.
func (d *metaDecoder) str(b []byte) string {
	// Comparisons of string(b) read b without converting it (a switch
	// on string(b) would convert it when it is longer than 32 bytes).
	if string(b) == d.kind {
		return d.kind
	}
	if string(b) == d.name {
		return d.name
	}
	if d.scratch == nil {
		return string(b)
	}
	slot := &d.scratch.strings[strSlot(b)]
	if string(b) == slot[0] {
		return slot[0]
	}
	if string(b) == slot[1] {
		slot[0], slot[1] = slot[1], slot[0]
		return slot[0]
	}
	slot[0], slot[1] = string(b), slot[0]
	return slot[0]
}

// json decodes v, a JSON value that jsonscan validated, into p as
// json.Unmarshal does, reporting whether it decoded.
func (d *metaDecoder) json(v []byte, p any) bool {
	sc := d.scratch
	if sc == nil {
		return json.Unmarshal(v, p) == nil
	}
	if sc.dec == nil {
		sc.dec = json.NewDecoder(&sc.r)
	}
	sc.r.Reset(v)
	if sc.dec.Decode(p) != nil {
		sc.dec = nil // its error may stick: start afresh next time
		return false
	}
	return true
}

// strSlot is the slot of decodeScratch.strings for b: a hash of its length
// and of its first, middle and last eight bytes (the strings that repeat,
// names, UIDs, records, label keys and values, images, arguments, mostly
// differ there: "--config=/etc/web/config.yaml" and its api twin only in
// the middle), which costs the same whatever b's length, where hashing
// every byte was a tenth of a decode. The words are mixed by a 128-bit
// product (both halves): a product by one constant, keeping its top bits,
// put strings that differ only in their first bytes' high bits in one
// slot, and a fleet's watch allocated three times as many of its repeated
// strings (TestStringCacheKeepsAFleetsRepeatedStrings). It is small enough
// to be inlined in str.
func strSlot(b []byte) int {
	n := len(b)
	var x, y uint64
	if n >= 8 {
		x = binary.LittleEndian.Uint64(b)
		y = binary.LittleEndian.Uint64(b[n-8:]) + binary.LittleEndian.Uint64(b[n/2-4:])
	} else {
		for _, c := range b {
			x = x<<8 | uint64(c)
		}
	}
	hi, lo := bits.Mul64(x, y^uint64(n)^0xe7037ed1a0b428db)
	return int((hi ^ lo) >> (64 - strSlotBits))
}

// strSlotBits is log2 of len(decodeScratch.strings): 256 slots of two
// strings (8 KiB) kept a fleet's repeated strings where 128 missed half
// again as often.
const strSlotBits = 8

// string reads a string.
func (d *metaDecoder) string() (string, bool) {
	token, plain, ok := d.r.String()
	if !ok {
		return "", false
	}
	if plain {
		return d.str(token[1 : len(token)-1]), true
	}
	// Escapes and UTF-8 (possibly invalid, which encoding/json replaces)
	// the exact way; rare in what the store writes.
	var s string
	return s, json.Unmarshal(token, &s) == nil
}

// members reads an object with f, reporting false for a key that repeats or
// that f does not know (f reports the key's bit, 0 for unknown, and whether
// its value decoded).
func members(r *jsonscan.Reader, f func(key []byte) (bit uint, ok bool)) bool {
	var seen uint
	return r.Object(func(key []byte) bool {
		bit, ok := f(key)
		if !ok || bit == 0 || seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
}

// meta decodes a Meta, as json.Unmarshal into a zero Meta does: as
// appendMeta writes them when they are (metaAsWritten, which takes from
// the base's held object what is the same), else member by member.
func (d *metaDecoder) meta(m *Meta) bool {
	var held *Meta
	if d.base != nil {
		held = d.base.meta
	}
	saved, outer := *m, d.r
	if d.metaAsWritten(m, held) {
		return true
	}
	*m, d.r, d.headEnd = saved, outer, 0
	return d.metaMembers(m)
}

// metaMembers decodes a Meta member by member, whatever their order.
func (d *metaDecoder) metaMembers(m *Meta) bool {
	r := &d.r
	return members(r, func(key []byte) (uint, bool) {
		var ok bool
		switch string(key) {
		case "kind":
			m.Kind, ok = d.string()
			return 1 << 0, ok
		case "name":
			m.Name, ok = d.string()
			return 1 << 1, ok
		case "uid":
			m.UID, ok = d.string()
			return 1 << 2, ok
		case "labels":
			m.Labels, ok = d.stringMap()
			return 1 << 3, ok
		case "annotations":
			m.Annotations, ok = d.stringMap()
			return 1 << 4, ok
		case "owners":
			m.Owners, ok = list(d, (*metaDecoder).owner)
			return 1 << 5, ok
		case "finalizers":
			m.Finalizers, ok = list(d, (*metaDecoder).string)
			return 1 << 6, ok
		case "deletionRequested":
			m.DeletionRequested, ok = r.Bool()
			return 1 << 7, ok
		case "managed":
			m.Managed, ok = list(d, (*metaDecoder).managed)
			return 1 << 8, ok
		case "lastWrite":
			m.LastWrite, ok = d.lastWrite()
			return 1 << 9, ok
		case "generation":
			m.Generation, ok = r.Int64()
			return 1 << 10, ok
		case "statusGeneration":
			m.StatusGeneration, ok = r.Int64()
			return 1 << 11, ok
		}
		return 0, false
	})
}

// stringMap decodes a JSON object of strings into a new map; a repeated key
// reports false (encoding/json keeps the last, the store never writes one).
func (d *metaDecoder) stringMap() (map[string]string, bool) {
	out := map[string]string{}
	ok := d.r.Object(func(key []byte) bool {
		s, ok := d.string()
		n := len(out)
		out[d.str(key)] = s // the key is plain ASCII (Reader.Object)
		return ok && len(out) > n
	})
	return out, ok
}

// list decodes a JSON array with elem into a new slice of its length ([]
// gives an empty, non-nil one, as encoding/json does).
func list[E any](d *metaDecoder, elem func(*metaDecoder) (E, bool)) ([]E, bool) {
	var first [4]E
	items := first[:0]
	ok := d.r.Array(func() bool {
		e, ok := elem(d)
		items = append(items, e)
		return ok
	})
	if !ok {
		return nil, false
	}
	return append(make([]E, 0, len(items)), items...), true
}

func (d *metaDecoder) owner() (OwnerRef, bool) {
	r := &d.r
	var o OwnerRef
	ok := members(r, func(key []byte) (uint, bool) {
		var ok bool
		switch string(key) {
		case "kind":
			o.Kind, ok = d.string()
			return 1 << 0, ok
		case "name":
			o.Name, ok = d.string()
			return 1 << 1, ok
		case "uid":
			o.UID, ok = d.string()
			return 1 << 2, ok
		case "controller":
			o.Controller, ok = r.Bool()
			return 1 << 3, ok
		}
		return 0, false
	})
	return o, ok
}

func (d *metaDecoder) managed() (ManagedFields, bool) {
	r := &d.r
	var f ManagedFields
	ok := members(r, func(key []byte) (uint, bool) {
		var ok bool
		switch string(key) {
		case "manager":
			f.Manager, ok = d.string()
			return 1 << 0, ok
		case "operation":
			f.Operation, ok = d.string()
			return 1 << 1, ok
		case "subresource":
			f.Subresource, ok = d.string()
			return 1 << 2, ok
		case "fields":
			f.Fields, ok = d.string()
			return 1 << 3, ok
		}
		return 0, false
	})
	return f, ok
}

func (d *metaDecoder) lastWrite() (LastWrite, bool) {
	r := &d.r
	var w LastWrite
	ok := members(r, func(key []byte) (uint, bool) {
		var ok bool
		var s string
		switch string(key) {
		case "manager":
			w.Manager, ok = d.string()
			return 1 << 0, ok
		case "op":
			s, ok = d.string()
			w.Op = ownership.Operation(s)
			return 1 << 1, ok
		case "trace":
			w.Trace, ok = d.string()
			return 1 << 2, ok
		}
		return 0, false
	})
	return w, ok
}

// conditions decodes a list of conditions, as json.Unmarshal into a nil
// []Condition does.
func (d *metaDecoder) conditions() ([]Condition, bool) {
	return list(d, (*metaDecoder).condition)
}

func (d *metaDecoder) condition() (Condition, bool) {
	r := &d.r
	var c Condition
	ok := members(r, func(key []byte) (uint, bool) {
		var ok bool
		var s string
		switch string(key) {
		case "type":
			c.Type, ok = d.string()
			return 1 << 0, ok
		case "status":
			s, ok = d.string()
			c.Status = ConditionStatus(s)
			return 1 << 1, ok
		case "reason":
			c.Reason, ok = d.string()
			return 1 << 2, ok
		case "message":
			c.Message, ok = d.string()
			return 1 << 3, ok
		case "lastTransitionTime":
			// What encoding/json calls for a string token into a
			// time.Time: its UnmarshalJSON, with the quotes.
			var raw []byte
			if raw, ok = r.Raw(); ok && raw[0] == '"' {
				ok = c.LastTransitionTime.UnmarshalJSON(raw) == nil
			} else {
				ok = false
			}
			return 1 << 4, ok
		case "observedGeneration":
			c.ObservedGeneration, ok = r.Int64()
			return 1 << 5, ok
		}
		return 0, false
	})
	return c, ok
}
