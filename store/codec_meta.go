package store

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/steady-go/steady/internal/jsonscan"
)

// metaDecoder decodes the Meta and Conditions of stored values without
// encoding/json's reflection, which is most of the cost of reading an object
// (a watch event decodes two, a write reads one). It reads exactly what the
// store writes: each of Meta's keys at most once and spelled as encoding/json
// spells it, non-null values of the fields' JSON types, integers that fit
// int64. For anything else, well-formed or not (a key in another case, a
// duplicate, a null, 2.0 for an integer), it reports false and the caller
// decodes the value with encoding/json, so both ways give the same result
// and the same errors (FuzzDecodeFast holds them to that).
//
// It allocates only what the decoded value owns that is not already at hand:
// a string that spells the Store's kind or the key's name is that string, and
// with a table (strings) a string seen lately is the one decoded then. Strings
// are immutable, so sharing one between objects is safe; maps and slices
// are never shared.
type metaDecoder struct {
	kind, name string
	scratch    *decodeScratch // nil: none
}

// decodeScratch is what one goroutine that decodes many values (a watch)
// keeps from one value to the next. It is not safe for concurrent use.
type decodeScratch struct {
	// strings remembers the last strings decoded, two per slot, so that
	// those that repeat from one object to the next (label keys and
	// values, manager names, the UID of an object's old and new state)
	// are allocated once.
	strings [128][2]string
	// dec decodes Spec and Status, reusing its state from one value to
	// the next (json.Unmarshal allocates it anew every call); nil until
	// first used, and after an error.
	dec *json.Decoder
	r   bytes.Reader
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
	h := uint32(2166136261) // FNV-1a
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	slot := &d.scratch.strings[h%uint32(len(d.scratch.strings))]
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

// string decodes a string token v (a raw value that jsonscan validated).
func (d *metaDecoder) string(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	body := v[1 : len(v)-1]
	for _, c := range body {
		if c == '\\' || c >= 0x80 {
			// Escapes and UTF-8 (possibly invalid, which encoding/json
			// replaces) the exact way; rare in what the store writes.
			var s string
			if json.Unmarshal(v, &s) != nil {
				return "", false
			}
			return s, true
		}
	}
	return d.str(body), true
}

// int64 decodes an integer token as encoding/json decodes it into an int64.
func int64Of(v []byte) (int64, bool) {
	if len(v) == 0 || v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

func boolOf(v []byte) (bool, bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// members calls f with each member of the object v, reporting false for a
// key that repeats or that f does not know (f reports the key's bit, 0 for
// unknown, and whether its value decoded).
func members(v []byte, f func(key, value []byte) (bit uint, ok bool)) bool {
	var seen uint
	return jsonscan.Members(v, func(key, value []byte) bool {
		bit, ok := f(key, value)
		if !ok || bit == 0 || seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
}

// meta decodes a Meta, as json.Unmarshal into a zero Meta does.
func (d *metaDecoder) meta(v []byte, m *Meta) bool {
	return members(v, func(key, value []byte) (uint, bool) {
		var ok bool
		switch string(key) {
		case "kind":
			m.Kind, ok = d.string(value)
			return 1 << 0, ok
		case "name":
			m.Name, ok = d.string(value)
			return 1 << 1, ok
		case "uid":
			m.UID, ok = d.string(value)
			return 1 << 2, ok
		case "labels":
			m.Labels, ok = d.stringMap(value)
			return 1 << 3, ok
		case "annotations":
			m.Annotations, ok = d.stringMap(value)
			return 1 << 4, ok
		case "owners":
			m.Owners, ok = list(value, d.owner)
			return 1 << 5, ok
		case "finalizers":
			m.Finalizers, ok = list(value, d.string)
			return 1 << 6, ok
		case "deletionRequested":
			m.DeletionRequested, ok = boolOf(value)
			return 1 << 7, ok
		case "managed":
			m.Managed, ok = list(value, d.managed)
			return 1 << 8, ok
		case "lastWrite":
			m.LastWrite, ok = d.lastWrite(value)
			return 1 << 9, ok
		case "generation":
			m.Generation, ok = int64Of(value)
			return 1 << 10, ok
		case "statusGeneration":
			m.StatusGeneration, ok = int64Of(value)
			return 1 << 11, ok
		}
		return 0, false
	})
}

// stringMap decodes a JSON object of strings into a new map; a repeated key
// reports false (encoding/json keeps the last, the store never writes one).
func (d *metaDecoder) stringMap(v []byte) (map[string]string, bool) {
	out := map[string]string{}
	ok := jsonscan.Members(v, func(key, value []byte) bool {
		s, ok := d.string(value)
		n := len(out)
		out[d.str(key)] = s // the key is plain ASCII (Members)
		return ok && len(out) > n
	})
	return out, ok
}

// list decodes a JSON array with elem into a new slice ([] gives an empty,
// non-nil one, as encoding/json does).
func list[E any](v []byte, elem func([]byte) (E, bool)) ([]E, bool) {
	n := 0
	if !jsonscan.Elements(v, func([]byte) bool { n++; return true }) {
		return nil, false
	}
	out := make([]E, 0, n)
	ok := jsonscan.Elements(v, func(value []byte) bool {
		e, ok := elem(value)
		out = append(out, e)
		return ok
	})
	return out, ok
}

func (d *metaDecoder) owner(v []byte) (OwnerRef, bool) {
	var o OwnerRef
	ok := members(v, func(key, value []byte) (uint, bool) {
		var ok bool
		switch string(key) {
		case "kind":
			o.Kind, ok = d.string(value)
			return 1 << 0, ok
		case "name":
			o.Name, ok = d.string(value)
			return 1 << 1, ok
		case "uid":
			o.UID, ok = d.string(value)
			return 1 << 2, ok
		case "controller":
			o.Controller, ok = boolOf(value)
			return 1 << 3, ok
		}
		return 0, false
	})
	return o, ok
}

func (d *metaDecoder) managed(v []byte) (ManagedFields, bool) {
	var f ManagedFields
	ok := members(v, func(key, value []byte) (uint, bool) {
		var ok bool
		switch string(key) {
		case "manager":
			f.Manager, ok = d.string(value)
			return 1 << 0, ok
		case "operation":
			f.Operation, ok = d.string(value)
			return 1 << 1, ok
		case "subresource":
			f.Subresource, ok = d.string(value)
			return 1 << 2, ok
		case "fields":
			f.Fields, ok = d.string(value)
			return 1 << 3, ok
		}
		return 0, false
	})
	return f, ok
}

func (d *metaDecoder) lastWrite(v []byte) (LastWrite, bool) {
	var w LastWrite
	ok := members(v, func(key, value []byte) (uint, bool) {
		var ok bool
		var s string
		switch string(key) {
		case "manager":
			w.Manager, ok = d.string(value)
			return 1 << 0, ok
		case "op":
			s, ok = d.string(value)
			w.Op = Op(s)
			return 1 << 1, ok
		case "trace":
			w.Trace, ok = d.string(value)
			return 1 << 2, ok
		}
		return 0, false
	})
	return w, ok
}

// conditions decodes a list of conditions, as json.Unmarshal into a nil
// []Condition does.
func (d *metaDecoder) conditions(v []byte) ([]Condition, bool) {
	return list(v, d.condition)
}

func (d *metaDecoder) condition(v []byte) (Condition, bool) {
	var c Condition
	ok := members(v, func(key, value []byte) (uint, bool) {
		var ok bool
		var s string
		switch string(key) {
		case "type":
			c.Type, ok = d.string(value)
			return 1 << 0, ok
		case "status":
			s, ok = d.string(value)
			c.Status = ConditionStatus(s)
			return 1 << 1, ok
		case "reason":
			c.Reason, ok = d.string(value)
			return 1 << 2, ok
		case "message":
			c.Message, ok = d.string(value)
			return 1 << 3, ok
		case "lastTransitionTime":
			// What encoding/json calls for a string token into a
			// time.Time.
			ok = len(value) > 0 && value[0] == '"' && c.LastTransitionTime.UnmarshalJSON(value) == nil
			return 1 << 4, ok
		case "observedGeneration":
			c.ObservedGeneration, ok = int64Of(value)
			return 1 << 5, ok
		}
		return 0, false
	})
	return c, ok
}
