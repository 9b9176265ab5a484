package jsonscan

// Members reads b as one JSON object and calls f with each member's key and
// raw value (its bytes in b, validated as encoding/json validates a
// json.RawMessage), in order, until f returns false. It reports whether b is
// such an object and f accepted every member: it reports false for anything
// else, well-formed or not, including a key that is not plain ASCII (an
// escape, a byte of UTF-8, whose text may not be its value), so that the
// caller can take the encoding/json way instead.
//
// The key slice is b's own memory: convert it (string(key) in a switch costs
// nothing) rather than keep it.
func Members(b []byte, f func(key, value []byte) bool) bool {
	p := scanner{b: b}
	p.space()
	if !p.byte('{') {
		return false
	}
	p.space()
	if p.byte('}') {
		return p.atEnd()
	}
	for {
		p.space()
		if !p.byte('"') {
			return false
		}
		start := p.i
		for p.i < len(p.b) && p.b[p.i] != '"' && p.b[p.i] != '\\' && p.b[p.i] >= 0x20 && p.b[p.i] < 0x80 {
			p.i++
		}
		key := p.b[start:p.i]
		if !p.byte('"') {
			return false
		}
		p.space()
		if !p.byte(':') {
			return false
		}
		p.space()
		vstart := p.i
		if !p.skip(0) {
			return false
		}
		if !f(key, p.b[vstart:p.i]) {
			return false
		}
		p.space()
		if p.byte('}') {
			return p.atEnd()
		}
		if !p.byte(',') {
			return false
		}
	}
}

// Elements reads b as one JSON array and calls f with each element's raw
// value (its bytes in b, validated as Members validates a member's value),
// in order, until f returns false. It reports whether b is such an array and
// f accepted every element; it reports false for anything else, so that the
// caller can take the encoding/json way instead.
func Elements(b []byte, f func(value []byte) bool) bool {
	p := scanner{b: b}
	p.space()
	if !p.byte('[') {
		return false
	}
	p.space()
	if p.byte(']') {
		return p.atEnd()
	}
	for {
		p.space()
		start := p.i
		if !p.skip(0) {
			return false
		}
		if !f(p.b[start:p.i]) {
			return false
		}
		p.space()
		if p.byte(']') {
			return p.atEnd()
		}
		if !p.byte(',') {
			return false
		}
	}
}
