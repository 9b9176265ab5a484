package jsonscan

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// maxDepth bounds nesting, as encoding/json does, so hostile input cannot
// exhaust the stack.
const maxDepth = 10000

// scanner reads one JSON text. The readers that keep strings (Decode,
// ChangedScalars) set s to string(b) and slice keys and plain strings from
// it, so they cost no allocation of their own; the validating readers
// (Members) leave s empty and never read it.
type scanner struct {
	b []byte
	s string
	i int
	// items collects array elements while a tree is built, so that each
	// array is allocated once, at its final size.
	items []any
	// shape makes scalars outside lists nil (see DecodeShape); inList is
	// the depth of lists being read.
	shape  bool
	inList int
	// ranges makes skip reject a number beyond float64's range, as Decode
	// does (AppendShapeKey's lists).
	ranges bool
}

func (p *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: "+format, append([]any{p.i}, args...)...)
}

func (p *scanner) space() {
	// Every byte above ' ' is not white space: one comparison for the
	// common case, values that the store wrote compactly.
	for p.i < len(p.b) && p.b[p.i] <= ' ' {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// spaceEnd returns the index of the first byte of b at or after i that is
// not white space, or len(b): space on locals.
func spaceEnd(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// byte consumes c if it is next.
func (p *scanner) byte(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// atEnd reports whether only white space is left.
func (p *scanner) atEnd() bool {
	p.space()
	return p.i == len(p.b)
}

// skip validates one value (after white space) without decoding it, as
// encoding/json validates a json.RawMessage: number ranges are not checked
// and invalid UTF-8 in strings is accepted.
func (p *scanner) skip(depth int) bool {
	p.space()
	if depth > maxDepth || p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.members('{', '}', func() bool {
			p.space()
			if !p.skipString() {
				return false
			}
			p.space()
			return p.byte(':') && p.skip(depth+1)
		})
	case c == '[':
		return p.members('[', ']', func() bool { return p.skip(depth + 1) })
	case c == '"':
		return p.skipString()
	case c == 't':
		return p.word("true")
	case c == 'f':
		return p.word("false")
	case c == 'n':
		return p.word("null")
	case c == '-' || '0' <= c && c <= '9':
		start, ok := p.numberText()
		return ok && (!p.ranges || inRange(p.b[start:p.i]))
	}
	return false
}

// members reads an object or array (after white space) delimited by open
// and close, calling member at each member (white space before it read
// when it is not the first), which must read it. It reports false when
// the next value does not open with open, a member is not followed by a
// comma or close, or member returns false.
func (p *scanner) members(open, close byte, member func() bool) bool {
	p.space()
	if !p.byte(open) {
		return false
	}
	p.space()
	if p.byte(close) {
		return true
	}
	for {
		if !member() {
			return false
		}
		p.space()
		if p.byte(close) {
			return true
		}
		if !p.byte(',') {
			return false
		}
	}
}

func (p *scanner) word(w string) bool {
	if len(p.b)-p.i >= len(w) && string(p.b[p.i:p.i+len(w)]) == w {
		p.i += len(w)
		return true
	}
	return false
}

// skipString validates a string token: no control characters, valid
// escapes. Bytes of invalid UTF-8 are accepted, as encoding/json accepts
// them.
func (p *scanner) skipString() bool {
	_, ok := p.skipStringPlain()
	return ok
}

// skipStringPlain is skipString that also reports whether the string's
// content is plain: printable ASCII without escapes.
func (p *scanner) skipStringPlain() (plain, ok bool) {
	if !p.byte('"') {
		return false, false
	}
	p.i = plainEnd(p.b, p.i)
	if p.byte('"') {
		return true, true
	}
	return false, p.skipStringRest()
}

// plainEnd returns the index of the first byte of b at or after i that
// ends a plain run, the common bytes of a string (printable ASCII but
// quotes and backslashes): a control character, quote, backslash or
// non-ASCII byte; or len(b). It works on locals: a loop over p.b and p.i
// reloads both from memory on every byte. The scanner calls it directly,
// inlined, rather than through a method: a call per string costs what
// the words save.
//
// It skips eight bytes at a time while none of them ends the run (the
// strings of a stored object, ownership records and specs, run to tens or
// hundreds of bytes). In a word x, the lowest byte c that ends the run sets
// its high bit in x - 0x20 per byte (a control character borrows), or in
// (x ^ '"') - 1 or (x ^ '\\') - 1 per byte (the quote or backslash is 0
// there and borrows); a non-ASCII c keeps its high bit through the second,
// but for 0xa2, which becomes 0x80 and then 0x7f, and keeps it through the
// first. A byte that does not end the run sets none, and borrows none into
// the byte above, so the word is clear exactly when no high bit is set, and
// otherwise its lowest high bit set is that of the byte that ends the run
// (a byte above it may set one too, through a borrow from it): the run ends
// there, found without a loop over the word's bytes, which cost a fifth of
// a decode's string scanning.
func plainEnd(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if m := ((x - 0x20*ones) | ((x ^ '"'*ones) - ones) | ((x ^ '\\'*ones) - ones)) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(b) && !endsRun[b[i]]; i++ {
	}
	return i
}

// endsStrict holds, for each byte, whether it ends a strict run (see
// Reader.PlainStrict).
var endsStrict = func() (t [256]bool) {
	for c := range t {
		t[c] = endsRun[c] || c == '<' || c == '>' || c == '&'
	}
	return t
}()

// endsRun holds, for each byte, whether it ends a plain run (see plainEnd).
var endsRun = func() (t [256]bool) {
	for c := range t {
		t[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80
	}
	return t
}()

// skipStringRest is skipString for the rest of a string that is not plain.
func (p *scanner) skipStringRest() bool {
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if !p.skipEscape() {
				return false
			}
		default:
			p.i++
		}
	}
	return false
}

// skipEscape validates the escape sequence at p.i.
func (p *scanner) skipEscape() bool {
	if p.i+1 >= len(p.b) {
		return false
	}
	switch p.b[p.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		p.i += 2
		return true
	case 'u':
		if len(p.b)-p.i < 6 {
			return false
		}
		for _, h := range p.b[p.i+2 : p.i+6] {
			if !isHex(h) {
				return false
			}
		}
		p.i += 6
		return true
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// string reads a string token and returns its value. Plain ASCII strings
// without escapes, the common case, are sliced from s; anything else goes
// through encoding/json, which handles escapes, surrogates and invalid UTF-8
// exactly.
func (p *scanner) string() (string, error) {
	start := p.i
	p.i++ // "
	p.i = plainEnd(p.b, p.i)
	if p.byte('"') {
		return p.s[start+1 : p.i-1], nil
	}
	if !p.skipStringRest() {
		return "", p.errorf("bad string")
	}
	var s string
	if err := json.Unmarshal(p.b[start:p.i], &s); err != nil {
		return "", p.errorf("bad string: %v", err)
	}
	return s, nil
}

func (p *scanner) literal(word string, v any) (any, error) {
	if !p.word(word) {
		return nil, p.errorf("bad literal")
	}
	return v, nil
}

// numberText reads a token of the JSON number grammar and returns its
// bounds in b; range is not checked. It works on locals, as plainEnd does:
// a loop over p.b and p.i reloads both from memory on every byte, which
// was most of what reading a short integer cost.
func (p *scanner) numberText() (start int, ok bool) {
	b, i := p.b, p.i
	start = i
	if i < len(b) && b[i] == '-' {
		i++
	}
	intStart := i
	i = digitsEnd(b, i)
	if n := i - intStart; n == 0 || n > 1 && b[intStart] == '0' {
		p.i = i
		return start, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := digitsEnd(b, i)
		if j == i {
			p.i = i
			return start, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digitsEnd(b, i)
		if j == i {
			p.i = i
			return start, false
		}
		i = j
	}
	p.i = i
	return start, true
}

// digitsEnd returns the index of the first byte of b at or after i that
// is not a decimal digit, or len(b).
func digitsEnd(b []byte, i int) int {
	for i < len(b) && b[i]-'0' <= 9 {
		i++
	}
	return i
}

// number reads a JSON number as a tree holds it (see Number).
func (p *scanner) number() (any, error) {
	start, ok := p.numberText()
	if !ok {
		return nil, p.errorf("bad number")
	}
	text := p.s[start:p.i]
	v, ok := Number(text)
	if !ok {
		return nil, p.errorf("number %s out of range", text)
	}
	return v, nil
}

// IsNumber reports whether s is exactly one token of JSON's number grammar,
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func IsNumber(s string) bool {
	p := scanner{b: []byte(s)}
	_, ok := p.numberText()
	return ok && p.i == len(p.b)
}

// ParseNumber parses a token of JSON's number grammar as a tree holds it:
// n when integral and in int64's range (isInt), f otherwise. ok is false
// beyond float64's range, as encoding/json has it.
func ParseNumber(text string) (n int64, f float64, isInt, ok bool) {
	if integral(text) {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return n, 0, true, true
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	return 0, f, false, err == nil
}

// Number is a token of JSON's number grammar as a tree holds it: int64 when
// it is an integer written as encoding/json writes an int64; float64 when its
// value is not an integer (as encoding/json reads it, so nearest); and
// otherwise, an integer value written in any other way (-0, beyond int64,
// 1e3, 1.0), its text, as a json.Number. Encoding the tree with encoding/json
// so gives every integer's text back as it was: a uint64 beyond int64, a big
// integer in a float64 field, a -0. ok is false beyond float64's range, as
// encoding/json has it.
func Number(text string) (v any, ok bool) {
	if integral(text) {
		// "-0" is the one text ParseInt reads that FormatInt does not write.
		if n, err := strconv.ParseInt(text, 10, 64); err == nil && (n != 0 || len(text) == 1) {
			return n, true
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	switch {
	case err != nil:
		return nil, false
	case f != math.Trunc(f): // not an integer, nor ±Inf (out of range above)
		return f, true
	}
	return json.Number(text), true
}

// integral reports whether number text has no fraction and no exponent.
func integral(text string) bool {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}

// scalar reads a string, number, true, false or null as a tree would (so
// with the same errors) and returns its text.
func (p *scanner) scalar() (string, error) {
	start := p.i
	var err error
	switch c := p.b[p.i]; {
	case c == '"':
		_, err = p.string()
	case c == 't':
		_, err = p.literal("true", nil)
	case c == 'f':
		_, err = p.literal("false", nil)
	case c == 'n':
		_, err = p.literal("null", nil)
	case c == '-' || '0' <= c && c <= '9':
		// Its range is checked as Number would find it, but the common
		// short number is not parsed (see inRange).
		if _, ok := p.numberText(); !ok {
			err = p.errorf("bad number")
		} else if text := p.b[start:p.i]; !inRange(text) {
			err = p.errorf("number %s out of range", text)
		}
	default:
		err = p.errorf("unexpected %q", c)
	}
	if err != nil {
		return "", err
	}
	return p.s[start:p.i], nil
}
