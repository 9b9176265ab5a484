package store

import (
	"encoding/json"

	"github.com/steady-go/steady/internal/jsonscan"
)

// decodeRawFast decodes a stored value as decodeRaw does, but reads the
// outer object itself: only Meta and Conditions go through encoding/json,
// while Spec and Status, most of the value, are validated and sliced in one
// pass instead of being scanned twice by encoding/json. It handles exactly
// the values the store writes (the four keys, each at most once, spelled as
// encode spells them, or Meta under the legacy key) and reports false for
// anything else, well-formed or not, which decodeRaw then decodes the
// general way; so both give the same result and the same errors.
func decodeRawFast(value []byte, raw *rawObject, d *metaDecoder) bool {
	var meta, conds []byte
	var seen [4]bool
	ok := jsonscan.Members(value, func(key, v []byte) bool {
		var k int
		switch string(key) {
		case "metadata", legacyMetaKey:
			k, meta = 0, v
		case "spec":
			k, raw.Spec = 1, v
		case "status":
			k, raw.Status = 2, v
		case "conditions":
			k, conds = 3, v
		default:
			return false
		}
		if seen[k] {
			return false
		}
		seen[k] = true
		return true
	})
	if !ok {
		return false
	}
	// Spec and Status share one copy of their bytes, as encoding/json would
	// not keep references into value either.
	if len(raw.Spec)+len(raw.Status) > 0 {
		buf := make([]byte, 0, len(raw.Spec)+len(raw.Status))
		buf = append(buf, raw.Spec...)
		buf = append(buf, raw.Status...)
		spec, status := buf[:len(raw.Spec):len(raw.Spec)], buf[len(raw.Spec):]
		if raw.Spec != nil {
			raw.Spec = spec
		}
		if raw.Status != nil {
			raw.Status = status
		}
	}
	return decodeMetaConds(meta, conds, &raw.Meta, &raw.Conditions, d)
}

// decodeMetaConds decodes the values of the metadata and conditions members
// (nil when absent) into m and conds, with d when d takes them and with
// encoding/json otherwise.
func decodeMetaConds(meta, conds []byte, m *Meta, cs *[]Condition, d *metaDecoder) bool {
	if meta != nil && !d.meta(meta, m) {
		*m = Meta{}
		if json.Unmarshal(meta, m) != nil {
			return false
		}
	}
	if conds != nil {
		var ok bool
		if *cs, ok = d.conditions(conds); !ok {
			*cs = nil
			if json.Unmarshal(conds, cs) != nil {
				return false
			}
		}
	}
	return true
}

// decodeObjectFast is decodeRawFast for a typed object: Meta and Conditions
// through d, Spec and Status through encoding/json, each from its own bytes.
// It reports false for what decodeRawFast declines and for a value that
// encoding/json would not decode into obj; the caller then decodes it with
// encoding/json alone, into a new object.
func decodeObjectFast[S, T any](value []byte, obj *Object[S, T], d *metaDecoder) bool {
	var meta, conds, spec, status []byte
	var seen [4]bool
	ok := jsonscan.Members(value, func(key, v []byte) bool {
		var k int
		switch string(key) {
		case "metadata", legacyMetaKey:
			k, meta = 0, v
		case "spec":
			k, spec = 1, v
		case "status":
			k, status = 2, v
		case "conditions":
			k, conds = 3, v
		default:
			return false
		}
		if seen[k] {
			return false
		}
		seen[k] = true
		return true
	})
	if !ok || !decodeMetaConds(meta, conds, &obj.Meta, &obj.Conditions, d) {
		return false
	}
	return (spec == nil || d.json(spec, &obj.Spec)) && (status == nil || d.json(status, &obj.Status))
}
