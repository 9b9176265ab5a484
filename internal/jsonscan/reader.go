package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"strconv"
)

// Reader reads one JSON text token by token, for a decoder that knows the
// shape it expects and reads each byte once: Object and Array walk
// containers, String, Int64 and Bool read scalars, Raw takes any value
// whole. Each method validates what it reads as encoding/json does, and
// reports false for anything it does not accept (malformed text, a value of
// another type, null, a key that is not plain ASCII); the caller then takes
// the encoding/json way. After a false, the Reader is spent.
//
// A decoder that reads the whole text with these methods and ends with End
// has validated it, so it may trust what it read.
type Reader struct{ p scanner }

// NewReader returns a Reader of b.
func NewReader(b []byte) Reader { return Reader{p: scanner{b: b}} }

// End reports whether only white space is left.
func (r *Reader) End() bool { return r.p.atEnd() }

// Pos returns the offset in b of the next byte to read: within Object's f,
// the first byte after the member's colon.
func (r *Reader) Pos() int { return r.p.i }

// Next returns the first byte of the next value, after white space (0 at
// the end), without reading it: '{' for an object, '[' for an array.
func (r *Reader) Next() byte {
	p := &r.p
	p.space()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// Object reads an object, calling f with each member's key (plain ASCII,
// b's own memory) once the Reader stands at the member's value, which f
// must read. It reports false if the next value is not an object or f
// returns false.
func (r *Reader) Object(f func(key []byte) bool) bool {
	// Its own member loop rather than scanner.members: this is the
	// decoders' innermost loop, and a closure call per member costs
	// more than the loop it would share. It works on locals, as
	// plainEnd does, storing the position only where f reads on and
	// where it returns: through r.p, every byte read and white space
	// skipped was a load and a store of p.i (and loads of p.b), most of
	// what a member cost.
	b, i := r.p.b, spaceEnd(r.p.b, r.p.i)
	if i >= len(b) || b[i] != '{' {
		r.p.i = i
		return false
	}
	i = spaceEnd(b, i+1)
	if i < len(b) && b[i] == '}' {
		r.p.i = i + 1
		return true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			r.p.i = i
			return false
		}
		start := i + 1
		i = plainEnd(b, start)
		key := b[start:i]
		if i >= len(b) || b[i] != '"' {
			r.p.i = i
			return false
		}
		i = spaceEnd(b, i+1)
		if i >= len(b) || b[i] != ':' {
			r.p.i = i
			return false
		}
		r.p.i = i + 1
		if !f(key) {
			return false
		}
		b, i = r.p.b, spaceEnd(r.p.b, r.p.i) // f may have read another text, and set it back
		switch {
		case i < len(b) && b[i] == '}':
			r.p.i = i + 1
			return true
		case i < len(b) && b[i] == ',':
			i = spaceEnd(b, i+1)
		default:
			r.p.i = i
			return false
		}
	}
}

// Array reads an array, calling f once the Reader stands at each element,
// which f must read. It reports false if the next value is not an array or
// f returns false.
func (r *Reader) Array(f func() bool) bool {
	return r.p.members('[', ']', f)
}

// String reads a string token and returns it, quotes included (b's own
// memory), and whether its content is plain: printable ASCII without
// escapes, so that token[1:len(token)-1] is the string's value. A token
// whose content is not plain must be decoded (with encoding/json).
func (r *Reader) String() (token []byte, plain, ok bool) {
	p := &r.p
	p.space()
	start := p.i
	if plain, ok = p.skipStringPlain(); !ok {
		return nil, false, false
	}
	return p.b[start:p.i], plain, true
}

// Int64 reads a number token that is an integer in int64's range (what
// encoding/json decodes into an int64 without error).
func (r *Reader) Int64() (int64, bool) {
	p := &r.p
	p.space()
	// The common case, an integer of at most 18 digits (which cannot
	// overflow) not followed by a fraction or an exponent, in one pass
	// over its digits; anything else the general way below.
	b, i := p.b, p.i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	digitsStart, n := i, int64(0)
	for ; i < len(b) && b[i]-'0' <= 9; i++ {
		n = n*10 + int64(b[i]-'0')
	}
	if k := i - digitsStart; k > 0 && k <= 18 && (k == 1 || b[digitsStart] != '0') &&
		(i == len(b) || b[i] != '.' && b[i] != 'e' && b[i] != 'E') {
		p.i = i
		if neg {
			n = -n
		}
		return n, true
	}
	start, ok := p.numberText()
	if !ok {
		return 0, false
	}
	text := p.b[start:p.i]
	n, neg, digits := int64(0), false, text
	if digits[0] == '-' {
		neg, digits = true, digits[1:]
	}
	if len(digits) > 18 { // may overflow int64: parse it the slow way
		n, err := strconv.ParseInt(string(text), 10, 64)
		return n, err == nil
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false // a fraction or an exponent
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// Bool reads true or false.
func (r *Reader) Bool() (v, ok bool) {
	p := &r.p
	p.space()
	switch {
	case p.word("true"):
		return true, true
	case p.word("false"):
		return false, true
	}
	return false, false
}

// Raw reads any value, validating it as encoding/json validates a
// json.RawMessage, and returns its bytes (b's own memory).
func (r *Reader) Raw() ([]byte, bool) {
	p := &r.p
	p.space()
	start := p.i
	// A container the one loop; a scalar, read as fast by skip, not.
	if c := r.Next(); c == '{' || c == '[' {
		if _, ok := p.compact(nil, false); ok {
			return p.b[start:p.i], true
		}
		p.i = start
	}
	if !p.skip(0) {
		return nil, false
	}
	return p.b[start:p.i], true
}

// RawShape is Raw that also appends to dst the value's shape key (see
// AppendShapeKey) in the same pass, and returns it. A well-formed value
// that has no shape key is read as Raw reads it, with keyed false and dst
// as given.
func (r *Reader) RawShape(dst []byte) (raw, key []byte, keyed, ok bool) {
	p := &r.p
	p.space()
	start := p.i
	if key, keyed = p.shapeKeyOf(dst); keyed {
		return p.b[start:p.i], key, true, true
	}
	p.i = start
	raw, ok = r.Raw()
	return raw, dst, false, ok
}

// RawOfShape is RawShape of a value expected to have s's shape key: it
// reports true, with the value's bytes, exactly when RawShape would read
// that value with s's key (s.Key()). It compares the value's text with
// the key's between the key's scalars outside lists and reads only those
// scalars token by token (with compactScalar, as compact reads them), where
// RawShape reads every token: a value whose text is the key's but for
// valid scalars in the key's scalars' places is valid and has the key,
// which holds the rest of the text as a shape key does (structure, object
// keys, lists whole). It reports false, the Reader as it was, for any
// other value, which may still be valid, and even have s's key (a value
// with white space where s has none): the caller then reads it with
// RawShape.
func (r *Reader) RawOfShape(s *Shape) ([]byte, bool) {
	p := &r.p
	b, at := p.b, p.i
	start := spaceEnd(b, at)
	i, last := start, len(s.segs)-1
	for k, seg := range s.segs {
		if len(b)-i < len(seg) || string(b[i:i+len(seg)]) != seg {
			p.i = at
			return nil, false
		}
		if i += len(seg); k == last {
			break
		}
		if i >= len(b) {
			p.i = at
			return nil, false
		}
		if i = p.compactScalar(i, true); i < 0 {
			p.i = at
			return nil, false
		}
	}
	p.i = i
	return b[start:i], true
}

// Null reads null, reporting false if it is not next.
func (r *Reader) Null() bool {
	p := &r.p
	p.space()
	return p.word("null")
}

// Number reads a number token and returns it (b's own memory); its range is
// not checked.
func (r *Reader) Number() ([]byte, bool) {
	p := &r.p
	p.space()
	if p.i >= len(p.b) {
		return nil, false
	}
	start, ok := p.numberText()
	return p.b[start:p.i], ok
}

// Literal reads lit when the text goes on with it byte for byte, white
// space included, and reports whether it did; otherwise it reads nothing.
// With Plain, it reads a text in the one spelling its decoder expects
// (the store's own encoding) without a call per member, the caller taking
// another way when either reports false.
func (r *Reader) Literal(lit string) bool { return r.p.word(lit) }

// LiteralBytes is Literal for a text held in bytes: a decoder that
// remembers texts it read (and what they decoded to) reads one again
// with a comparison.
func (r *Reader) LiteralBytes(lit []byte) bool {
	p := &r.p
	if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == string(lit) {
		p.i += len(lit)
		return true
	}
	return false
}

// Quoted reports whether the next bytes are s between quotes, reading
// them when they are (nothing otherwise): for a caller that knows s to be
// a text Plain reads as it is (printable ASCII with no quote or
// backslash), whose token the bytes then are, read with one comparison
// where Plain scans them for the byte that ends them.
func (r *Reader) Quoted(s string) bool {
	p := &r.p
	b, i, n := p.b, p.i, len(s)
	if len(b)-i < n+2 || b[i] != '"' || b[i+1+n] != '"' || string(b[i+1:i+1+n]) != s {
		return false
	}
	p.i = i + n + 2
	return true
}

// Skip reads the next n bytes with no look at them and returns them (b's
// own memory), for a caller that knows them to be a value, as a store's
// decoder knows a part of a value that is byte for byte one it wrote (see
// store's baseValue.overOwn): finding its end by structure (SkipValid)
// would read each byte. It reports false, reading nothing, when fewer
// than n bytes are left, or n is negative.
func (r *Reader) Skip(n int) ([]byte, bool) {
	p := &r.p
	if n < 0 || len(p.b)-p.i < n {
		return nil, false
	}
	p.i += n
	return p.b[p.i-n : p.i], true
}

// Since returns the bytes read from pos, an earlier Pos, on (b's own
// memory).
func (r *Reader) Since(pos int) []byte { return r.p.b[pos:r.p.i] }

// Plain reads a string token that starts right at the next byte and whose
// content is plain (printable ASCII without escapes, see String), and
// returns that content (b's own memory). For anything else it reports
// false and reads nothing.
func (r *Reader) Plain() ([]byte, bool) {
	p := &r.p
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	start := p.i + 1
	end := plainEnd(p.b, start)
	if end >= len(p.b) || p.b[end] != '"' {
		return nil, false
	}
	p.i = end + 1
	return p.b[start:end], true
}

// PlainStrict is Plain for a string that encoding/json writes as it is,
// between quotes: Plain's, without <, > and & (which it escapes for HTML).
// A decoder that reads a text with it (and Literal) knows that the text is
// what encoding/json writes for what it read.
func (r *Reader) PlainStrict() ([]byte, bool) {
	// plainEnd's loop, not a function of its own: a call per string
	// (which the compiler did not inline) cost a third of the strings'
	// scanning. In a word x, the lowest <, > or & sets its high bit in
	// ((x | 2) ^ '>') - 1 per byte (< and > are 0 there) or in (x ^ '&')
	// - 1 (& is), where no plain byte below it sets one (see plainEnd).
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	b, i := r.p.b, r.p.i
	if i >= len(b) || b[i] != '"' {
		return nil, false
	}
	start := i + 1
	for i = start; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		angle, amp := (x|0x02*ones)^'>'*ones, x^'&'*ones
		m := (x - 0x20*ones) | ((x ^ '"'*ones) - ones) | ((x ^ '\\'*ones) - ones) | (angle - ones) | (amp - ones)
		if m &= highs; m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			break
		}
	}
	for ; i < len(b) && !endsStrict[b[i]]; i++ {
	}
	if i >= len(b) || b[i] != '"' {
		return nil, false
	}
	r.p.i = i + 1
	return b[start:i], true
}
