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
func decodeRawFast(value []byte, raw *rawObject) bool {
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
	if meta != nil && json.Unmarshal(meta, &raw.Meta) != nil {
		return false
	}
	if conds != nil && json.Unmarshal(conds, &raw.Conditions) != nil {
		return false
	}
	return true
}
