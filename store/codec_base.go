package store

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// baseValue lets a watch's decoder take from the object the caller holds
// (see WatchUndecoded) the parts of a new value that the change left as
// they were, instead of decoding them again: the value before a change
// and the one after it share most of their bytes (a spec write leaves the
// ownership records and the status as they were), and decoding those bytes
// again was most of the cost of a watch event.
//
// The base is the value the held object was decoded from. What the two
// values have in common is found by comparing bytes, not by decoding the
// base: its first prefix bytes and the new value's, and the base's last
// bytes and the new value's from suffix on. A part of the new value is the
// base's when:
//
//   - it ends within the common prefix: the bytes before it are the same
//     too, so the base reads the same key, at the same place, with the
//     same value (a member of the object or of its metadata);
//   - or it is a member of the object that starts, from the comma before
//     its key, within the common suffix. That comma is the base's too, and
//     a separator of the base's object, not a byte of a string: a string
//     would end at the quote after the comma, and the letter that starts
//     every key of an object's value cannot follow a string. Everything
//     after it is the same, the object's end included, so the member is a
//     member of the base's object with the same value.
//
// Either way the held object's part was decoded from the same bytes at
// the same place, provided the base has each of its keys once (else the
// held object may hold another occurrence than the one that matched); so
// the base must be a value that decodeStored reads (see
// lastValue.decodedWhole), and only the parts whose decoding is a function
// of their bytes alone are taken: Conditions, and the Spec and Status when
// their types have a sideDecoder.
//
// The metadata need no base bytes: metaAsWritten compares the held
// object's Meta with the new value's metadata part by part. A base whose
// bytes are not known (nil) has none in common, and serves for that alone.
type baseValue struct {
	// prefix is the length of the common prefix; suffix is where, in the
	// new value, the common suffix starts.
	prefix, suffix int
	// meta is the held object's Meta (see metaAsWritten); conds its
	// Conditions.
	meta  *Meta
	conds []Condition
	// sides says which of Spec and Status may be taken; specSame and
	// statusSame say that decodeStored found them as they were.
	sides                copies
	specSame, statusSame bool
}

// newBase sets b for decoding value over base, the value the held object
// (whose Meta and Conditions are given) was decoded from.
func (b *baseValue) set(base, value []byte, meta *Meta, conds []Condition, sides copies) {
	p := commonPrefix(base, value)
	*b = baseValue{prefix: p, suffix: len(value) - commonSuffix(base, value), meta: meta, conds: conds, sides: sides}
}

// member reports whether the member of the object whose key is key and
// whose value runs from start to end in value (the bytes being decoded)
// is the base's (see baseValue).
func (b *baseValue) member(value, key []byte, start, end int) bool {
	return end <= b.prefix || b.inSuffix(value, key, start)
}

// inSuffix reports whether the member whose key is key and whose value
// starts at start in value starts, from the comma before it, in the
// common suffix.
func (b *baseValue) inSuffix(value, key []byte, start int) bool {
	// The key's quotes and colon right before start, with nothing in
	// between, and a comma before them.
	k := start - len(key) - 3
	return k-1 >= b.suffix && value[start-1] == ':' && value[start-2] == '"' && value[k] == '"' && value[k-1] == ','
}

// commonPrefix returns the length of the longest common prefix of a and b.
// It compares chunks with bytes.Equal (vectorized) until one differs,
// then that chunk by words.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+chunk <= n && bytes.Equal(a[i:i+chunk], b[i:i+chunk]); i += chunk {
	}
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)>>3
		}
	}
	for ; i < n && a[i] == b[i]; i++ {
	}
	return i
}

// commonSuffix returns the length of the longest common suffix of a and b,
// as commonPrefix does from the end.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+chunk <= n && bytes.Equal(a[len(a)-i-chunk:len(a)-i], b[len(b)-i-chunk:len(b)-i]); i += chunk {
	}
	for ; i+8 <= n; i += 8 {
		if x := binary.BigEndian.Uint64(a[len(a)-i-8:]) ^ binary.BigEndian.Uint64(b[len(b)-i-8:]); x != 0 {
			return i + bits.TrailingZeros64(x)>>3
		}
	}
	for ; i < n && a[len(a)-1-i] == b[len(b)-1-i]; i++ {
	}
	return i
}

// chunk is how many bytes commonPrefix and commonSuffix compare at once.
const chunk = 64
