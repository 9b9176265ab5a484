package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"unsafe"
)

// ChangedScalars reads two JSON values token by token and returns the paths
// (object keys, below root) of the scalars whose text differs, without
// building either tree: both values have the same object keys in the same
// order, and a change inside an array or of a value's kind is not a scalar
// change. It reports false when the values differ in any other way (a key
// added, removed or reordered, a change of kind among object, array, null
// and other scalars, any difference inside an array), when more than max
// scalars changed, or when either is not JSON that Decode accepts.
//
// A scalar whose text changed but not its value (1.0 for 1) is reported: the
// caller decides what a change of text means.
//
// The common case, a write that changes a few scalars of a value, leaves
// most of the text as it was: a token in the longest common prefix of a and
// b, or at the same place in their longest common suffix, is read from a
// only, as b's is the same text at the same nesting.
func ChangedScalars(a, b []byte, root string, max int) ([][]string, bool) {
	return changedScalars(a, b, root, max, false)
}

// ChangedScalarsOfValid is ChangedScalars for an a known to be JSON that
// Decode accepts (a text AppendShapeKey gave a key is). It does not read
// the text that a and b have in common at their end: that text is a's,
// after what the two have read alike, at the same nesting, so it is as
// valid in b as in a and holds no change. Its answer is ChangedScalars'
// for such an a; for another, it may report a change where ChangedScalars
// reports false.
func ChangedScalarsOfValid(a, b []byte, root string, max int) ([][]string, bool) {
	if len(a) == len(b) && commonPrefix(a, b) == len(a) {
		return nil, true
	}
	return changedScalars(a, b, root, max, true)
}

// Changes holds the paths of the scalars ChangedScalarsTo found changed,
// in its own arrays: a caller's Changes on its stack costs no allocation.
type Changes struct {
	keys [32]string // the paths, one after the other
	ends [16]uint8  // where each path ends in keys
	n    int
}

// Len is the number of paths.
func (c *Changes) Len() int { return c.n }

// Path returns the i'th path, c's own memory.
func (c *Changes) Path(i int) []string {
	start := 0
	if i > 0 {
		start = int(c.ends[i-1])
	}
	return c.keys[start:c.ends[i]]
}

// ChangedScalarsTo is ChangedScalars (ChangedScalarsOfValid when valid)
// with the paths held in c, not copied: their keys may be a's memory, so
// valid while a is unchanged. It also reports false when the paths do not
// fit in c (more than 16, or more than 32 keys in all, roots included).
// What c held before is dropped; when it reports false, c holds no path.
func ChangedScalarsTo(c *Changes, a, b []byte, root string, max int, valid bool) bool {
	// The lockstep adds the paths to c itself: c's 536 bytes are neither
	// zeroed as a whole nor copied in (they were ~250 instructions of a
	// call that reads a one-scalar change in ~2,000). The keys past c.n
	// are never read (see Path).
	c.n = 0
	prefix := commonPrefix(a, b) // once, for the lockstep too
	if valid && len(a) == len(b) && prefix == len(a) {
		return true
	}
	var pathBuf [8]string
	d := lockstep{max: max, valid: valid}
	d.initAt(a, b, prefix)
	if !d.compare(append(pathBuf[:0], root), false, c) || !d.a.atEnd() || !d.b.atEnd() {
		c.n = 0
		return false
	}
	return true
}

// init sets the lockstep to read a and b.
func (d *lockstep) init(a, b []byte) { d.initAt(a, b, commonPrefix(a, b)) }

// initAt is init for a caller that has the length of a and b's longest
// common prefix (commonPrefix) at hand.
func (d *lockstep) initAt(a, b []byte, prefix int) {
	d.a = scanner{b: a, s: unsafe.String(unsafe.SliceData(a), len(a))}
	d.b = scanner{b: b, s: unsafe.String(unsafe.SliceData(b), len(b))}
	d.prefix = prefix
	d.suffix = commonSuffix(a[prefix:], b[prefix:])
}

func changedScalars(a, b []byte, root string, max int, valid bool) ([][]string, bool) {
	// The path is passed down by value, so that its buffer stays on the
	// stack.
	var pathBuf [8]string
	path := append(pathBuf[:0], root)
	// Strings are read from the inputs themselves, not from copies: they live
	// only for this call, and the paths returned are cloned (see scalars).
	d := lockstep{max: max, valid: valid}
	d.init(a, b)
	if !d.compare(path, false, nil) || !d.a.atEnd() || !d.b.atEnd() {
		return nil, false
	}
	return d.changed, true
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := 0
	for len(a) >= 8 && len(b) >= 8 {
		if x := binary.LittleEndian.Uint64(a) ^ binary.LittleEndian.Uint64(b); x != 0 {
			return n + bits.TrailingZeros64(x)/8
		}
		a, b, n = a[8:], b[8:], n+8
	}
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b, n = a[1:], b[1:], n+1
	}
	return n
}

// commonSuffix is the length of the longest common suffix of a and b.
func commonSuffix(a, b []byte) int {
	n := 0
	// Two words a round while they agree: a write's change is mostly
	// near the start of a long common tail (half the loop's instructions).
	for len(a) >= 16 && len(b) >= 16 {
		la, lb := len(a), len(b)
		x := binary.LittleEndian.Uint64(a[la-16:]) ^ binary.LittleEndian.Uint64(b[lb-16:])
		y := binary.LittleEndian.Uint64(a[la-8:]) ^ binary.LittleEndian.Uint64(b[lb-8:])
		if x|y != 0 {
			break
		}
		a, b, n = a[:la-16], b[:lb-16], n+16
	}
	for len(a) >= 8 && len(b) >= 8 {
		// The last byte of a word is its most significant.
		if x := binary.LittleEndian.Uint64(a[len(a)-8:]) ^ binary.LittleEndian.Uint64(b[len(b)-8:]); x != 0 {
			return n + bits.LeadingZeros64(x)/8
		}
		a, b, n = a[:len(a)-8], b[:len(b)-8], n+8
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b, n = a[:len(a)-1], b[:len(b)-1], n+1
	}
	return n
}

// lockstep is the state of ChangedScalars; the path being read is passed
// apart, so that the paths given to the caller do not make its stack buffer
// escape, and so is the Changes that ChangedScalarsTo's paths go to
// (compare's to, nil for ChangedScalars): held in the lockstep, it would
// escape with the paths ChangedScalars allocates.
type lockstep struct {
	a, b    scanner
	changed [][]string
	max     int
	// prefix and suffix are the lengths of the longest common prefix of the
	// two texts and of their longest common suffix after it.
	prefix, suffix int
	// valid: a is known to be JSON that Decode accepts, so the common
	// suffix is not read (see ChangedScalarsOfValid); done: both texts
	// have been skipped to their end that way.
	valid, done bool
}

// skipTail moves both texts to their end, from a place where the rest of
// each is the common suffix (inTail), when a is known valid.
func (d *lockstep) skipTail() {
	d.a.i, d.b.i, d.done = len(d.a.b), len(d.b.b), true
}

// same reports whether b's token from b.i is the one a just read from
// start to a.i, so that reading it again can be skipped: b.i is start and
// the token and the byte after it (which ends a number) lie in the common
// prefix, or both are as far from the end and the token starts in the
// common suffix.
func (d *lockstep) same(start int) bool {
	a, b := &d.a, &d.b
	return b.i == start && a.i < d.prefix || len(a.b)-start == len(b.b)-b.i && start >= len(a.b)-d.suffix
}

// inTail reports whether the rest of b from b.i is the rest of a from a.i:
// both are as far from their end, within the common suffix.
func (d *lockstep) inTail() bool {
	return len(d.a.b)-d.a.i == len(d.b.b)-d.b.i && d.a.i >= len(d.a.b)-d.suffix
}

// finish reads the rest of the object or array being read, after a comma,
// when it is the same text in both (inTail): from a only, as the lockstep
// would read it from both (sameMembers), then moves b past it.
func (d *lockstep) finish(close byte, depth int) bool {
	if d.valid {
		d.skipTail()
		return true
	}
	off := d.b.i - d.a.i
	ok := d.a.sameMembers(close, depth)
	d.b.i = d.a.i + off
	return ok
}

// sameValue reads one value whose path has depth elements as
// lockstep.compare reads it from two identical texts (so with the same
// errors), from p only.
func (p *scanner) sameValue(depth int) bool {
	p.space()
	if p.i >= len(p.b) || depth > maxDepth {
		return false
	}
	switch p.b[p.i] {
	case '{':
		p.i++
		p.space()
		return p.byte('}') || p.sameMembers('}', depth+1)
	case '[':
		p.i++
		p.space()
		return p.byte(']') || p.sameMembers(']', depth)
	case 'n':
		return p.word("null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		// Only an exponent or a long mantissa can be out of range (as
		// scalar parses it): the common short number is not parsed.
		start, ok := p.numberText()
		if text := p.s[start:p.i]; ok && (len(text) > 15 || strings.ContainsAny(text, "eE")) {
			_, _, _, ok = ParseNumber(text)
		}
		return ok
	}
	_, err := p.scalar()
	return err == nil
}

// sameMembers reads the rest of an object (close '}', its members' paths
// of depth elements) or array (close ']', its items' paths of depth
// elements), from a member, through close, as sameValue reads values.
func (p *scanner) sameMembers(close byte, depth int) bool {
	for {
		if close == '}' {
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				return false
			}
			if _, err := p.string(); err != nil {
				return false
			}
			p.space()
			if !p.byte(':') {
				return false
			}
		}
		if !p.sameValue(depth) {
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

// skipSame moves b past the token a read from start to a.i (see same).
func (d *lockstep) skipSame(start int) {
	d.b.i += d.a.i - start
}

func (d *lockstep) compare(path []string, strict bool, to *Changes) bool {
	a, b := &d.a, &d.b
	a.space()
	b.space()
	if a.i >= len(a.b) || b.i >= len(b.b) || len(path) > maxDepth {
		return false
	}
	if d.inTail() {
		if d.valid {
			d.skipTail()
			return true
		}
		off := b.i - a.i
		ok := a.sameValue(len(path))
		b.i = a.i + off
		return ok
	}
	ca, cb := a.b[a.i], b.b[b.i]
	if ca == '{' || cb == '{' || ca == '[' || cb == '[' || ca == 'n' || cb == 'n' {
		if ca != cb {
			return false
		}
		switch ca {
		case '{':
			return d.object(path, strict, to)
		case '[':
			return d.array(path, to)
		}
		return a.word("null") && b.word("null")
	}
	return d.scalars(path, strict, to)
}

// scalars compares two scalars at path, recording a change unless strict
// forbids it or max changes are recorded already. The root, path[0], is
// the caller's, not a slice of an input: it is not cloned.
func (d *lockstep) scalars(path []string, strict bool, to *Changes) bool {
	start := d.a.i
	ta, errA := d.aScalar()
	if errA != nil {
		return false
	}
	if d.same(start) {
		d.skipSame(start)
		return true
	}
	tb, errB := d.b.scalar()
	switch {
	case errB != nil:
		return false
	case ta == tb:
		return true
	case strict || len(d.changed) == d.max || to != nil && to.n == d.max:
		return false
	case to != nil:
		return to.add(path)
	}
	p := make([]string, len(path))
	p[0] = path[0]
	for i, k := range path[1:] {
		p[i+1] = strings.Clone(k) // k may be a slice of an input
	}
	d.changed = append(d.changed, p)
	return true
}

// add appends path to c, reporting false when it does not fit.
func (c *Changes) add(path []string) bool {
	start := 0
	if c.n > 0 {
		start = int(c.ends[c.n-1])
	}
	if c.n == len(c.ends) || len(path) > len(c.keys)-start {
		return false
	}
	copy(c.keys[start:], path)
	c.ends[c.n] = uint8(start + len(path))
	c.n++
	return true
}

// addRooted is add of the path of root and then path.
func (c *Changes) addRooted(root string, path []string) bool {
	start := 0
	if c.n > 0 {
		start = int(c.ends[c.n-1])
	}
	if c.n == len(c.ends) || 1+len(path) > len(c.keys)-start {
		return false
	}
	c.keys[start] = root
	copy(c.keys[start+1:], path)
	c.ends[c.n] = uint8(start + 1 + len(path))
	c.n++
	return true
}

// aScalar reads a scalar from a, as scalar does; a number of an a known to
// be valid (see lockstep.valid) is in range, so only its text is read.
func (d *lockstep) aScalar() (string, error) {
	a := &d.a
	if c := a.b[a.i]; d.valid && (c == '-' || '0' <= c && c <= '9') {
		start, ok := a.numberText()
		if !ok {
			return "", a.errorf("bad number")
		}
		return a.s[start:a.i], nil
	}
	return a.scalar()
}

func (d *lockstep) object(path []string, strict bool, to *Changes) bool {
	a, b := &d.a, &d.b
	a.i++ // {
	b.i++
	a.space()
	b.space()
	endA, endB := a.byte('}'), b.byte('}')
	if endA || endB {
		return endA && endB
	}
	for {
		k, ok := d.key()
		if !ok {
			return false
		}
		ok = d.compare(append(path, k), strict, to)
		if !ok || d.done {
			return ok
		}
		switch d.next() {
		case ',':
			if d.inTail() {
				return d.finish('}', len(path)+1)
			}
		case '}':
			return true
		default:
			return false
		}
	}
}

// key reads the same object key, and the colon after it, from both.
func (d *lockstep) key() (string, bool) {
	a, b := &d.a, &d.b
	a.space()
	b.space()
	if a.i >= len(a.b) || a.b[a.i] != '"' || b.i >= len(b.b) || b.b[b.i] != '"' {
		return "", false
	}
	start := a.i
	ka, errA := a.string()
	if errA != nil {
		return "", false
	}
	if d.same(start) {
		d.skipSame(start)
	} else if kb, errB := b.string(); errB != nil || ka != kb {
		return "", false
	}
	if d.next() != ':' {
		return "", false
	}
	return ka, true
}

// array requires both arrays to be equal item by item.
func (d *lockstep) array(path []string, to *Changes) bool {
	a, b := &d.a, &d.b
	a.i++ // [
	b.i++
	a.space()
	b.space()
	endA, endB := a.byte(']'), b.byte(']')
	if endA || endB {
		return endA && endB
	}
	for {
		if ok := d.compare(path, true, to); !ok || d.done {
			return ok
		}
		switch d.next() {
		case ',':
			if d.inTail() {
				return d.finish(']', len(path))
			}
		case ']':
			return true
		default:
			return false
		}
	}
}

// next reads the same delimiter from both and returns it, or 0 when they
// differ or end.
func (d *lockstep) next() byte {
	a, b := &d.a, &d.b
	a.space()
	b.space()
	if a.i >= len(a.b) || b.i >= len(b.b) || a.b[a.i] != b.b[b.i] {
		return 0
	}
	c := a.b[a.i]
	a.i++
	b.i++
	return c
}

// ChangedScalarsOfShape is ChangedScalarsTo(c, a, b, root, max, true), for
// an a known to be JSON that Decode accepts, when it can tell without the
// lockstep: when a's text is s's up to one of s's scalars outside lists
// (read in a's text against s's, as Reader.RawOfShape reads it), and b is
// a with that scalar replaced by another that is not null, nor was (a
// change of kind, which ChangedScalarsTo refuses). The scalar's place is
// found from the two texts' common prefix, and only the two scalars and
// the segments of s before them are read: b is then valid where a is, and that scalar is its one
// change, at the object keys s holds above it. answered is false, with c
// holding no path, when it cannot tell so, for the caller to call
// ChangedScalarsTo; when answered, ok is ChangedScalarsTo's answer.
//
// A client's writer changes the same field of one object after another
// (the controller benchmark's replicas, bench/split.sh): the lockstep read
// the change in ~1,600 instructions, this in ~500.
func ChangedScalarsOfShape(c *Changes, s *Shape, a, b []byte, root string, max int) (ok, answered bool) {
	c.n = 0
	prefix := commonPrefix(a, b)
	if len(a) == len(b) && prefix == len(a) {
		return true, true
	}
	pa := scanner{b: a}
	i := 0
	for k, seg := range s.segs {
		if len(a)-i < len(seg) || string(a[i:i+len(seg)]) != seg {
			return false, false
		}
		if i += len(seg); k == len(s.segs)-1 || i > prefix || i >= len(a) {
			return false, false // the texts differ outside a's scalars
		}
		start := i
		if i = pa.compactScalar(i, false); i < 0 {
			return false, false
		}
		if prefix > i {
			continue // they differ after this scalar
		}
		// They differ from within or at the end of this scalar: b is a
		// with it replaced when the text after it is b's end (compared
		// whole: cheaper than their common suffix), and what lies between
		// in b one scalar.
		end := len(b) - (len(a) - i) // where b's scalar must end
		if end <= start || string(a[i:]) != string(b[end:]) {
			return false, false
		}
		pb := scanner{b: b}
		if pb.compactScalar(start, true) != end || string(a[start:i]) == "null" || string(b[start:end]) == "null" || max < 1 ||
			!c.addRooted(root, s.paths[k]) {
			return false, false
		}
		return true, true
	}
	return false, false
}
