package store

import (
	"bytes"
	"unsafe"
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
// base: the base's first bytes and the new value's (the common prefix),
// and the base's last bytes and the new value's (the common suffix). A
// part of the new value is the base's when:
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
	// base is the value the held object was decoded from (nil: not
	// known). It is compared with the new value only as far as a part
	// asks (samePrefix, sameSuffix): a change to the metadata, which most
	// writes make, ends the common prefix before the spec, and the sides
	// are most of the common suffix, so a scan of the whole common prefix
	// and suffix up front compared the metadata's bytes for no part that
	// could be taken, and the sides' bytes in short chunks, where a part's
	// check is one comparison of its own bytes that stops at the first
	// block that differs.
	base []byte
	// What the comparisons found so far, so that bytes found the same
	// are not compared again, nor a part past a difference found: the new
	// value's first sameTo bytes are the base's first ones and its first
	// diffTo are not (past the value: not known), its bytes from sameFrom
	// on are the base's last ones and from diffFrom on are not (-1: not
	// known).
	sameTo, diffTo, sameFrom, diffFrom int
	// head is the base's head (see storedHead), when known: its first
	// bytes, the text of its metadata up to their last write, which the
	// held object's Meta holds decoded (see metaAsWritten).
	head []byte
	// meta is the held object's Meta (see metaAsWritten); conds its
	// Conditions.
	meta  *Meta
	conds []Condition
	// sides says which of Spec and Status may be taken; specSame and
	// statusSame say that decodeStored found them as they were.
	sides                copies
	specSame, statusSame bool
	// specAsHeld, when not 0, says that the value's spec is byte for byte
	// the text the held object's Spec was decoded from, and its length,
	// as the memory knows of the Store's own write (see overOwn):
	// decodeStored then takes it with no look at it.
	specAsHeld int
}

// set sets b for decoding value over base, the value the held object
// (whose Meta and Conditions are given) was decoded from.
func (b *baseValue) set(base, value []byte, meta *Meta, conds []Condition, sides copies) {
	*b = baseValue{base: base, diffTo: len(value) + 1, sameFrom: len(value), diffFrom: -1, meta: meta, conds: conds, sides: sides}
}

// withHead gives b head, the head of its base (see storedHead; nil for
// none), when it is the first bytes of the base itself: a head described
// another value would say nothing of this one.
func (b *baseValue) withHead(head []byte) {
	if len(head) > 0 && len(head) <= len(b.base) && unsafe.SliceData(head) == unsafe.SliceData(b.base) {
		b.head = head
	}
}

// overOwn gives b, set for decoding value over no base bytes, what the
// memory knows of own, the Store's own write remembered at value's
// revision without its decoded value, against prev, the revision of the
// value the held object was decoded from: a head (own's) that is the
// head of that value byte for byte (lastValue.headAs), for baseHead to
// compare with value's, and, when value is own's value byte for byte and
// the Spec may be taken, that its spec is the text the held object's Spec
// was decoded from (lastValue.sameSpecAs), of own's spec length. A controller's status write
// leaves both as they were, and its event mostly comes after more than
// maxDecoded later own writes when a cache lags behind its Loop.
func (b *baseValue) overOwn(own *lastValue, value []byte, prev int64) {
	if own.headAs == prev {
		b.head = baseHeadOf(own)
	}
	if own.sameSpecAs == prev && own.specLen > 0 && b.sides.spec && sameBytes(own.value, value) {
		b.specAsHeld = own.specLen
	}
}

// member reports whether the member of the object whose key is key and
// whose value runs from start to end in value (the bytes being decoded)
// is the base's (see baseValue).
func (b *baseValue) member(value, key []byte, start, end int) bool {
	return b.inSuffix(value, key, start) || b.samePrefix(value, end)
}

// inSuffix reports whether the member whose key is key and whose value
// starts at start in value starts, from the comma before it, in the
// common suffix.
func (b *baseValue) inSuffix(value, key []byte, start int) bool {
	// The key's quotes and colon right before start, with nothing in
	// between, and a comma before them.
	k := start - len(key) - 3
	return k >= 1 && value[start-1] == ':' && value[start-2] == '"' && value[k] == '"' && value[k-1] == ',' && b.sameSuffix(value, k-1)
}

// samePrefix reports whether the first end bytes of value, the bytes
// being decoded, are the base's first ones: whether a part that ends at
// end is within the common prefix.
func (b *baseValue) samePrefix(value []byte, end int) bool {
	switch {
	case end <= b.sameTo:
		return true
	case end >= b.diffTo || end > len(b.base):
		return false
	}
	if bytes.Equal(b.base[b.sameTo:end], value[b.sameTo:end]) {
		b.sameTo = end
		return true
	}
	b.diffTo = end
	return false
}

// sameSuffix reports whether the bytes of value from from on are the
// base's last ones: whether from is within the common suffix.
func (b *baseValue) sameSuffix(value []byte, from int) bool {
	switch {
	case from >= b.sameFrom:
		return true
	case from <= b.diffFrom || len(value)-from > len(b.base):
		return false
	}
	off := len(b.base) - len(value) // the base's index of a byte of the suffix
	if bytes.Equal(b.base[from+off:b.sameFrom+off], value[from:b.sameFrom]) {
		b.sameFrom = from
		return true
	}
	b.diffFrom = from
	return false
}
