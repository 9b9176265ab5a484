package store

import "encoding/json"

// decodeRawFast decodes a stored value as decodeRaw does, but reads the
// outer object itself: only Meta and Conditions go through encoding/json,
// while Spec and Status, most of the value, are validated and sliced in one
// pass instead of being scanned twice by encoding/json. It handles exactly
// the values the store writes (the four keys, each at most once, spelled as
// encode spells them, or Meta under the legacy key) and reports false for
// anything else, well-formed or not, which decodeRaw then decodes the
// general way; so both give the same result and the same errors.
func decodeRawFast(value []byte, raw *rawObject) bool {
	s := rawScanner{b: value}
	s.space()
	if !s.byte('{') {
		return false
	}
	var meta, conds []byte
	var seen [4]bool
	for first := true; ; first = false {
		s.space()
		if first && s.byte('}') {
			break
		}
		if !s.byte('"') {
			return false
		}
		start := s.i
		for s.i < len(s.b) && s.b[s.i] != '"' && s.b[s.i] != '\\' {
			s.i++
		}
		key := string(s.b[start:s.i]) // no allocation: used in a switch
		if !s.byte('"') {
			return false
		}
		s.space()
		if !s.byte(':') {
			return false
		}
		s.space()
		vstart := s.i
		if !s.skip(0) {
			return false
		}
		v := s.b[vstart:s.i]
		var k int
		switch key {
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
		s.space()
		if s.byte('}') {
			break
		}
		if !s.byte(',') {
			return false
		}
	}
	s.space()
	if s.i != len(s.b) {
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

// rawScanner validates JSON values without decoding them. It accepts a
// subset of what encoding/json accepts (nesting is capped lower); whatever
// it rejects goes to encoding/json.
type rawScanner struct {
	b []byte
	i int
}

const maxRawDepth = 1000

func (s *rawScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *rawScanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *rawScanner) skip(depth int) bool {
	if depth > maxRawDepth || s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		s.i++
		s.space()
		if s.byte('}') {
			return true
		}
		for {
			s.space()
			if !s.string() {
				return false
			}
			s.space()
			if !s.byte(':') {
				return false
			}
			s.space()
			if !s.skip(depth + 1) {
				return false
			}
			s.space()
			if s.byte('}') {
				return true
			}
			if !s.byte(',') {
				return false
			}
		}
	case c == '[':
		s.i++
		s.space()
		if s.byte(']') {
			return true
		}
		for {
			s.space()
			if !s.skip(depth + 1) {
				return false
			}
			s.space()
			if s.byte(']') {
				return true
			}
			if !s.byte(',') {
				return false
			}
		}
	case c == '"':
		return s.string()
	case c == 't':
		return s.word("true")
	case c == 'f':
		return s.word("false")
	case c == 'n':
		return s.word("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return false
}

func (s *rawScanner) word(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// string accepts a string token: no control characters, valid escapes.
// Bytes of invalid UTF-8 are accepted, as encoding/json accepts them.
func (s *rawScanner) string() bool {
	if !s.byte('"') {
		return false
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if len(s.b)-s.i < 6 {
					return false
				}
				for _, h := range s.b[s.i+2 : s.i+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				s.i += 6
			default:
				return false
			}
		default:
			s.i++
		}
	}
	return false
}

// number accepts the JSON number grammar; range is not checked, as
// encoding/json does not check it for a json.RawMessage.
func (s *rawScanner) number() bool {
	s.byte('-')
	digits := func() int {
		n := 0
		for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	start := s.i
	if n := digits(); n == 0 || n > 1 && s.b[start] == '0' {
		return false
	}
	if s.byte('.') && digits() == 0 {
		return false
	}
	if s.byte('e') || s.byte('E') {
		if !s.byte('+') {
			s.byte('-')
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}
