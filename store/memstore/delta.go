package memstore

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// A delta spells a value as edits of a base value, the key's next version,
// from which it mostly differs in a few places (a counter, a timestamp, a
// condition). It is a sequence of edits, each three uvarints and some
// bytes: copy n bytes of base at the cursor, skip s bytes of base, then
// add the a literal bytes that follow.

// deltaAnchor is how many equal bytes in a row end an edit: fewer, and
// repeated JSON punctuation would end edits in the wrong place (the delta
// stays correct, only longer).
const deltaAnchor = 8 // resync compares it as a uint64

// deltaReach is how many bytes of the value an edit adds at most before
// the rest of the value is taken as one literal.
const deltaReach = 256

// newDelta returns the delta that spells v from base in a slice of its own
// length: the history keeps it for long, and most deltas are a few dozen
// bytes, which appending to nil would allocate three or four times.
func newDelta(v, base []byte) []byte {
	var buf [256]byte
	d := encodeDelta(buf[:0], v, base)
	out := make([]byte, len(d))
	copy(out, d)
	return out
}

// encodeDelta appends to dst the delta that spells v from base.
func encodeDelta(dst, v, base []byte) []byte {
	i, j := 0, 0
	for i < len(v) {
		n := commonPrefix(v[i:], base[j:])
		i += n
		j += n
		add, skip := len(v)-i, len(base)-j // no anchor: the rest is literal
		if add > 0 {
			add, skip = resync(v[i:], base[j:])
		}
		dst = binary.AppendUvarint(dst, uint64(n))
		dst = binary.AppendUvarint(dst, uint64(skip))
		dst = binary.AppendUvarint(dst, uint64(add))
		dst = append(dst, v[i:i+add]...)
		i += add
		j += skip
	}
	return dst
}

// resync returns where v and base agree again after they differ at their
// first bytes: after add bytes of v (to take as literal) and skip bytes of
// base, deltaAnchor bytes of both are equal. Of the places within
// deltaReach bytes of v it picks the one with the fewest bytes added and
// skipped together, so that a common word further on does not make it
// skip over what the two still share; without one, v's rest is literal.
func resync(v, base []byte) (add, skip int) {
	// Most edits are a few bytes (a digit, a word): try those places
	// first, fewest bytes first, before searching base. The deltaAnchor
	// (8) bytes are compared as one word.
	for d := 1; d <= 32; d++ {
		for a := max(0, d-len(base)+deltaAnchor); a <= d && a+deltaAnchor <= len(v); a++ {
			if binary.LittleEndian.Uint64(v[a:]) == binary.LittleEndian.Uint64(base[d-a:]) {
				return a, d - a
			}
		}
	}
	add, skip = len(v), len(base)
	for a := 0; a <= min(deltaReach, len(v)-deltaAnchor) && a < add+skip; a++ {
		// Only a place that beats the best so far is worth finding.
		within := base[:min(len(base), add+skip-a+deltaAnchor-1)]
		if s := bytes.Index(within, v[a:a+deltaAnchor]); s >= 0 && a+s < add+skip {
			add, skip = a, s
		}
	}
	return add, skip
}

// commonPrefix is the length of the longest common prefix of a and b,
// compared a word at a time.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for ; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// applyDelta appends to dst the value that d spells from base. It reports
// false if d does not fit base, which a delta made by encodeDelta from
// this base always does.
func applyDelta(dst, d, base []byte) ([]byte, bool) {
	j := 0
	for len(d) > 0 {
		var e [3]uint64
		for k := range e {
			x, w := binary.Uvarint(d)
			if w <= 0 {
				return dst, false
			}
			e[k], d = x, d[w:]
		}
		n, skip, add := e[0], e[1], e[2]
		if n > uint64(len(base)-j) || skip > uint64(len(base)-j)-n || add > uint64(len(d)) {
			return dst, false
		}
		dst = append(dst, base[j:j+int(n)]...)
		j += int(n + skip)
		dst = append(dst, d[:add]...)
		d = d[add:]
	}
	return dst, true
}
