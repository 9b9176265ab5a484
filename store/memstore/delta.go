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
//
// It looks in three rings, each only if the one before found nothing that
// no place further out can beat: the places nearSteps away at most, tried
// one by one (a digit); those within nearReach of both starts, through an
// index of v's anchors there (a word); then every place (see resyncFar).
// Trying every place within nearReach one by one, then indexing all of
// v's deltaReach anchors, cost 10,000 instructions per old value of the
// controller-shaped benchmark's objects and 85,000 per value of the fleet
// demo's (BenchmarkEncodeDelta): the history's ageing, which encodes one
// a write once its values outgrow their budget, was 9% of a controller's
// CPU at 1M objects (before the budget grew with the keys' window).
func resync(v, base []byte) (add, skip int) {
	for d := 1; d <= nearSteps; d++ {
		for a := max(0, d-len(base)+deltaAnchor); a <= d && a+deltaAnchor <= len(v); a++ {
			if anchorAt(v, a) == anchorAt(base, d-a) {
				return a, d - a
			}
		}
	}
	var words [nearSlots]uint64
	var first [nearSlots]uint16
	x := anchorIndex{words: words[:], first: first[:]}
	x.addFrom(v, 0, min(nearReach, len(v)-deltaAnchor))
	add, skip = x.best(base, min(nearReach, len(base)-deltaAnchor), len(v), len(base))
	if add+skip <= nearReach {
		return add, skip // any place not searched adds or skips more
	}
	return resyncFar(v, base, add, skip)
}

// resyncFar is resync past nearReach, given the best place found so far.
// A place at the start of either side (an entry one of the two has and
// the other not) bounds how far into v the best one can start, and a
// search of the other side for it is a few instructions: only v's
// anchors up to there are indexed, not all deltaReach of them.
func resyncFar(v, base []byte, add, skip int) (int, int) {
	last := min(deltaReach, len(v)-deltaAnchor) // v's last anchor a place may start at
	if len(v) >= deltaAnchor {
		if s := bytes.Index(base, v[:deltaAnchor]); s >= 0 && s < add+skip {
			add, skip = 0, s
		}
	}
	if len(base) >= deltaAnchor && last >= 0 {
		if a := bytes.Index(v[:last+deltaAnchor], base[:deltaAnchor]); a >= 0 && a < add+skip {
			add, skip = a, 0
		}
	}
	var words [anchorSlots]uint64
	var first [anchorSlots]uint16
	x := anchorIndex{words: words[:], first: first[:]}
	x.addFrom(v, 0, min(last, add+skip))
	return x.best(base, len(base)-deltaAnchor, add, skip)
}

// nearSteps is how many bytes added and skipped together resync tries
// place by place; nearReach, up to how many it finds through an index of
// v's first anchors alone.
const (
	nearSteps = 3
	nearReach = 32
)

// anchorIndex is resync's index of v's anchors: where each first starts.
// An open-addressed table, at most half full, of a power of two slots in
// arrays of the caller's, which zeroes them: the near search's are an
// eighth of the far one's, which most edits never reach.
type anchorIndex struct {
	words []uint64
	first []uint16 // 1 + where words[i] first starts in v; 0 if unused
}

// addFrom indexes v's anchors that start from from to to, in order.
func (x *anchorIndex) addFrom(v []byte, from, to int) {
	words, first, mask, shift := x.words, x.first, x.mask(), x.shift()
	for a := from; a <= to; a++ {
		w := anchorAt(v, a)
		for i := uint(w*fibonacci>>shift) & mask; ; i = (i + 1) & mask {
			if first[i] == 0 {
				words[i], first[i] = w, uint16(a+1)
				break
			}
			if words[i] == w {
				break // an earlier place has it, and adds fewer bytes
			}
		}
	}
}

// best returns the best of (add, skip) and the places of base's anchors
// that start from 0 to last at an indexed anchor of v, reading base from
// its start until no place further on can be better.
func (x *anchorIndex) best(base []byte, last, add, skip int) (int, int) {
	words, first, mask, shift := x.words, x.first, x.mask(), x.shift()
	// Places of base further on add fewer bytes of v, so one at the same
	// total as the best so far is better.
	for s := 0; s <= last && s <= add+skip; s++ {
		w := anchorAt(base, s)
		for i := uint(w*fibonacci>>shift) & mask; first[i] != 0; i = (i + 1) & mask {
			if words[i] == w {
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

// anchorSlots is the size of resyncFar's anchorIndex: a power of two,
// twice the deltaReach+1 anchors it holds at most.
const anchorSlots = 512

// nearSlots is the size of resync's anchorIndex of the nearReach+1
// anchors it holds at most.
const nearSlots = 64

func (x *anchorIndex) mask() uint { return uint(len(x.words) - 1) }

// shift makes an anchor's Fibonacci hash its top bits, as many as index
// a slot: every byte of the anchor stirs them.
func (x *anchorIndex) shift() uint { return uint(64 - bits.Len(x.mask())) }

const fibonacci = 0x9e3779b97f4a7c15

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
