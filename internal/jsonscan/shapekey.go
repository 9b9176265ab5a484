package jsonscan

import (
	"bytes"
	"strconv"
)

// AppendShapeKey appends to dst a key of the shape of the JSON text b: two
// texts with the same key decode (DecodeShape) to the same tree. Object keys
// are kept as written, every scalar that is not inside a list becomes 0,
// and lists are kept whole, as their items carry their identity. It reports
// false, and dst as given, for malformed text and for a key that is not
// plain ASCII or a number beyond float64's range (as Decode); texts that decode alike may still have different keys.
//
// A text it gives a key to is one that Decode accepts.
func AppendShapeKey(dst, b []byte) ([]byte, bool) {
	p := scanner{b: b}
	out, ok := p.shapeKey(dst, 0)
	if !ok || !p.atEnd() {
		return dst, false
	}
	return out, true
}

func (p *scanner) shapeKey(dst []byte, depth int) ([]byte, bool) {
	p.space()
	if depth > maxDepth || p.i >= len(p.b) {
		return dst, false
	}
	switch p.b[p.i] {
	case '{':
		p.i++
		dst = append(dst, '{')
		p.space()
		if p.byte('}') {
			return append(dst, '}'), true
		}
		for {
			p.space()
			start := p.i
			if plain, ok := p.skipStringPlain(); !plain || !ok {
				return dst, false
			}
			dst = append(dst, p.b[start:p.i]...)
			p.space()
			if !p.byte(':') {
				return dst, false
			}
			dst = append(dst, ':')
			var ok bool
			if dst, ok = p.shapeKey(dst, depth+1); !ok {
				return dst, false
			}
			p.space()
			switch {
			case p.byte(','):
				dst = append(dst, ',')
			case p.byte('}'):
				return append(dst, '}'), true
			default:
				return dst, false
			}
		}
	case '[':
		// As Decode, a number beyond float64's range is an error, in a
		// list too.
		start := p.i
		p.ranges = true
		ok := p.skip(depth)
		p.ranges = false
		if !ok {
			return dst, false
		}
		return append(dst, p.b[start:p.i]...), true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		// As Decode, a number beyond float64's range is an error.
		start, ok := p.numberText()
		if !ok || !inRange(p.b[start:p.i]) {
			return dst, false
		}
		return append(dst, '0'), true
	default:
		if !p.skip(depth) {
			return dst, false
		}
		return append(dst, '0'), true
	}
}

// inRange reports whether the number text is within float64's range, as
// Decode requires. Only an exponent or a long mantissa can be out of range.
func inRange(text []byte) bool {
	if len(text) <= 15 && !bytes.ContainsAny(text, "eE") {
		return true
	}
	_, err := strconv.ParseFloat(string(text), 64)
	return err == nil
}
