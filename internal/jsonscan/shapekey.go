package jsonscan

import (
	"slices"
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
	out, ok := p.shapeKeyOf(dst)
	if !ok || !p.atEnd() {
		return dst, false
	}
	return out, true
}

// shapeKeyOf is shapeKey of the value at p.i: read in one loop
// (compact) when it is written as the store writes values, and
// read again the general way when that declines it.
func (p *scanner) shapeKeyOf(dst []byte) ([]byte, bool) {
	p.space()
	start := p.i
	if out, ok := p.compact(dst, true); ok {
		return out, true
	}
	p.i = start
	return p.shapeKey(dst, 0, nil)
}

// maxCompactDepth bounds the nesting compact reads: a bit per
// open container.
const maxCompactDepth = 64

// compact reads a value with no white space outside its strings and no
// object key that is not plain (encoding/json's output, as the store
// writes values), nested at most maxCompactDepth deep, in one loop rather
// than a call per token: with key, as shapeKey reads it, appending its key
// to dst, which is then the text itself with each scalar outside lists
// replaced by 0, appended by runs; without, as skip reads it, appending
// nothing. It reports false for any other text, valid or not, having
// written only to dst's spare capacity, and p.i anywhere: the caller reads
// the value again the general way, which gives the answer.
func (p *scanner) compact(dst []byte, key bool) ([]byte, bool) {
	b, i := p.b, p.i
	run := i // the start of the text not yet appended
	var n compactNest
	for {
		// A value starts at i.
		if i >= len(b) {
			return dst, false
		}
		if c := b[i]; c == '{' || c == '[' {
			var empty, ok bool
			if i, empty, ok = n.open(b, i); !ok {
				return dst, false
			} else if !empty {
				continue
			}
		} else {
			start := i
			if i = p.compactScalar(i, key); i < 0 {
				return dst, false
			}
			if key && n.lists == 0 {
				dst = append(append(dst, b[run:start]...), '0')
				run = i
			}
		}
		// A value ends at i.
		var done, ok bool
		if i, done, ok = n.next(b, i); !ok {
			return dst, false
		} else if done {
			p.i = i
			if key {
				dst = append(dst, b[run:i]...)
			}
			return dst, true
		}
	}
}

// compactNest is the containers open around compact's place in the text.
type compactNest struct {
	// objs holds a bit per open container, the innermost lowest: 1 for an
	// object, 0 for a list; lists counts the open lists.
	objs         uint64
	depth, lists int
}

// open reads the container that opens at i: an empty one whole (empty),
// else its opening and, in an object, its first key, and returns where
// what follows starts; ok is false for a text compact does not read.
func (n *compactNest) open(b []byte, i int) (next int, empty, ok bool) {
	c := b[i]
	if i++; i < len(b) && b[i] == c+2 { // '}' or ']'
		return i + 1, true, true
	}
	if n.depth == maxCompactDepth {
		return i, false, false
	}
	n.depth++
	n.objs <<= 1
	if c == '[' {
		n.lists++
		return i, false, true
	}
	n.objs |= 1
	i = plainKey(b, i)
	return i, false, i >= 0
}

// next reads, after a value that ends at i, the closings of the containers
// it ends, then a comma and, in an object, the key after it, and returns
// where the next value starts; done reports that the value read was the
// outermost, ending at next.
func (n *compactNest) next(b []byte, i int) (next int, done, ok bool) {
	for n.depth > 0 {
		if i >= len(b) {
			return i, false, false
		}
		inObj := n.objs&1 == 1
		if b[i] == ',' {
			if i++; inObj {
				i = plainKey(b, i)
			}
			return i, false, i >= 0
		}
		if inObj && b[i] != '}' || !inObj && b[i] != ']' {
			return i, false, false
		}
		i++
		if !inObj {
			n.lists--
		}
		n.depth--
		n.objs >>= 1
	}
	return i, true, true
}

// compactScalar reads the scalar at i as compact does (a number's range
// checked with ranges) and returns its end, or -1.
func (p *scanner) compactScalar(i int, ranges bool) int {
	b := p.b
	switch b[i] {
	case '"':
		if i = plainEnd(b, i+1); i < len(b) && b[i] == '"' {
			return i + 1
		}
		p.i = i
		if !p.skipStringRest() {
			return -1
		}
		return p.i
	case 't':
		return literalEnd(b, i, "true")
	case 'f':
		return literalEnd(b, i, "false")
	case 'n':
		return literalEnd(b, i, "null")
	}
	p.i = i
	if n, ok := p.numberText(); !ok || ranges && !inRange(b[n:p.i]) {
		return -1
	}
	return p.i
}

// plainKey reads a plain object key (see plainEnd) and its colon at i,
// with no white space, and returns where its value starts, or -1.
func plainKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	i = plainEnd(b, i+1)
	if i+1 >= len(b) || b[i] != '"' || b[i+1] != ':' {
		return -1
	}
	return i + 2
}

// literalEnd returns the end of the literal w at i, or -1 if it is not
// there.
func literalEnd(b []byte, i int, w string) int {
	if len(b)-i < len(w) || string(b[i:i+len(w)]) != w {
		return -1
	}
	return i + len(w)
}

// shapeKey appends the shape key of the value at p.i to dst, read the
// general way (white space allowed, any nesting up to maxDepth). With
// marks not nil, it records in marks each 0 it writes for a scalar
// outside lists (see Shape).
func (p *scanner) shapeKey(dst []byte, depth int, marks *shapeMarks) ([]byte, bool) {
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
			name := p.b[start+1 : p.i-1] // plain: its text
			p.space()
			if !p.byte(':') {
				return dst, false
			}
			dst = append(dst, ':')
			if marks != nil {
				marks.path = append(marks.path, string(name))
			}
			var ok bool
			if dst, ok = p.shapeKey(dst, depth+1, marks); !ok {
				return dst, false
			}
			if marks != nil {
				marks.path = marks.path[:len(marks.path)-1]
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
	default:
		if !p.skip(depth) {
			return dst, false
		}
	}
	if marks != nil {
		marks.at = append(marks.at, len(dst))
		marks.paths = append(marks.paths, slices.Clone(marks.path))
	}
	return append(dst, '0'), true
}

// shapeMarks is where shapeKey records the 0s it writes for scalars
// outside lists: their offsets in its output (at), and the object keys
// above each (paths); path is the keys above the value being read.
type shapeMarks struct {
	at    []int
	paths [][]string
	path  []string
}

// Shape is a shape key (see AppendShapeKey) made ready for
// Reader.RawOfShape: the key's text split at the 0s that stand for its
// scalars outside lists. It is immutable.
type Shape struct {
	key []byte
	// segs are the key's text between those 0s, one more than them;
	// paths holds, for each 0, the object keys above it.
	segs  []string
	paths [][]string
}

// NewShape returns the Shape of key, which must be a shape key: one that
// AppendShapeKey gives itself as the key (a shape key's scalars outside
// lists are 0 already). It reports false for any other text. It does not
// retain key.
func NewShape(key []byte) (*Shape, bool) {
	var marks shapeMarks
	p := scanner{b: key}
	out, ok := p.shapeKey(nil, 0, &marks)
	if !ok || !p.atEnd() || string(out) != string(key) {
		return nil, false
	}
	text := string(key)
	s := &Shape{key: []byte(text), segs: make([]string, 0, len(marks.at)+1), paths: marks.paths}
	prev := 0
	for _, m := range marks.at {
		s.segs = append(s.segs, text[prev:m])
		prev = m + 1
	}
	s.segs = append(s.segs, text[prev:])
	return s, true
}

// Key returns s's shape key. The caller must not modify it.
func (s *Shape) Key() []byte { return s.key }

// inRange reports whether the number text is within float64's range, as
// Decode requires. Only an exponent or a long mantissa can be out of range.
func inRange(text []byte) bool {
	if len(text) <= 15 && !hasExponent(text) {
		return true
	}
	_, err := strconv.ParseFloat(string(text), 64)
	return err == nil
}

// hasExponent reports whether the number text has an exponent: a loop
// over the few bytes of a common number costs less than a call to
// bytes.ContainsAny.
func hasExponent(text []byte) bool {
	for _, c := range text {
		if c|0x20 == 'e' {
			return true
		}
	}
	return false
}
