package memstore

import "encoding/binary"

// A delta spells a value as edits of a base value, the key's next version,
// from which it mostly differs in a few places (a counter, a timestamp, a
// condition). It is a sequence of edits, each three uvarints and some
// bytes: copy n bytes of base at the cursor, skip s bytes of base, then
// add the a literal bytes that follow.

// deltaAnchor is how many equal bytes in a row end an edit: fewer, and
// repeated JSON punctuation would end edits in the wrong place (the delta
// stays correct, only longer).
const deltaAnchor = 8

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
// skipped together (the fewest added of those), so that a common word
// further on does not make it skip over what the two still share; without
// one, v's rest is literal.
func resync(v, base []byte) (add, skip int) {
	// Most edits are a few bytes (a digit, a word): try those places
	// first, fewest bytes first, before reading base.
	for d := 1; d <= 32; d++ {
		for a := max(0, d-len(base)+deltaAnchor); a <= d && a+deltaAnchor <= len(v); a++ {
			if anchorAt(v, a) == anchorAt(base, d-a) {
				return a, d - a
			}
		}
	}
	return resyncFar(v, base)
}

// resyncFar is resync for an edit longer than its first loop tries (a
// manager's record or a condition added or dropped). It indexes the
// anchors v may resume at, then reads base's once each, from its start, until
// no place further on can be better: one pass over each side instead of a
// search of base for each of v's deltaReach places, which made these edits
// cost tens of microseconds.
func resyncFar(v, base []byte) (add, skip int) {
	var anchors [anchorSlots]uint64
	var first [anchorSlots]uint16 // 1 + where anchors[i] first starts in v; 0 if unused
	for a := 0; a <= min(deltaReach, len(v)-deltaAnchor); a++ {
		w := anchorAt(v, a)
		for i := anchorSlot(w); ; i = (i + 1) % anchorSlots {
			if first[i] == 0 {
				anchors[i], first[i] = w, uint16(a+1)
				break
			}
			if anchors[i] == w {
				break // an earlier place has it, and adds fewer bytes
			}
		}
	}
	add, skip = len(v), len(base)
	// Places of base further on add fewer bytes of v, so one at the same
	// total as the best so far is better.
	for s := 0; s+deltaAnchor <= len(base) && s <= add+skip; s++ {
		w := anchorAt(base, s)
		for i := anchorSlot(w); first[i] != 0; i = (i + 1) % anchorSlots {
			if anchors[i] == w {
				if a := int(first[i]) - 1; a+s <= add+skip {
					add, skip = a, s
				}
				break
			}
		}
	}
	return add, skip
}

// anchorAt returns the deltaAnchor bytes of b at i as one word, to compare
// in one instruction.
func anchorAt(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i : i+deltaAnchor]) }

// The anchor is one word.
var _ = [1]struct{}{}[deltaAnchor-8]

// anchorSlots is the size of resyncFar's table of anchors: a power of two,
// twice the deltaReach+1 anchors it holds at most.
const anchorSlots = 512

func anchorSlot(w uint64) uint { return uint((w*0x9e3779b97f4a7c15)>>32) % anchorSlots }

// commonPrefix returns how many bytes a and b share at their start,
// comparing a word at a time: most of a value is copied from its base.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+8 <= n && anchorAt(a, i) == anchorAt(b, i) {
		i += 8
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
