package store

import (
	"bytes"
	"maps"
	"slices"
	"unsafe"
)

// A write changes an object's metadata from its last write on (the last
// write, the generations) and, mostly, nothing before it: the kind, name,
// UID, labels, annotations, owners, finalizers and ownership records,
// most of the metadata's bytes (each record's fields text, the UID) and of
// the cost of writing them (appendMeta checks every string for what
// encoding/json would escape). So a write whose object has the same
// metadata up to its last write as the value it was computed from copies
// that value's text of them (its head) instead of writing them again. The
// value written is the same, byte for byte, because the head is what
// appendTo writes for those metadata: the Store's own encoding (appendTo,
// decodeRawAs) is, and so is a text metaAsWritten read, which reads only
// what encoding/json writes.

// storedHead is the head of a stored value (`{"metadata":{"kind":` to
// just before `,"lastWrite":`), as appendTo writes it for the metadata of
// the rawObject that holds it, which was read from or written as that
// value (immutable: the Backend's, or the Store's own encoding). text is
// nil when it is not known: a value at a version, whose head is not the
// metadata's alone, or metadata that are not laid out as appendMeta writes
// them. It describes the Meta of the rawObject it was given to as that
// Meta was then; nothing changes a rawObject's metadata before its last
// write afterwards (a write computes a copy, next := *cur, which it gives
// the head of its own value, see Writer.putKeeping).
//
// It holds the text's first byte and length, not a slice: its capacity,
// always its length, would be a third word of every rawObject (see
// rawObject's size class, TestRawObjectFitsItsSizeClass).
type storedHead struct {
	p *byte
	n int
}

// headText is the storedHead of text (nil: not known); text() gives text
// back, capped at its length.
func headText(text []byte) storedHead {
	return storedHead{p: unsafe.SliceData(text), n: len(text)}
}

// text is the head's text, capped at its length; nil when not known.
func (h storedHead) text() []byte { return unsafe.Slice(h.p, h.n) }

// headFor returns the head of cur's value for a write of m, nil when it
// has none or it is not m's: m differs from cur's metadata before the last
// write. cur may be nil.
func (cur *rawObject) headFor(m *Meta) []byte {
	if cur == nil || cur.head.p == nil || cur.Version != "" || !sameHead(m, &cur.Meta) {
		return nil
	}
	return cur.head.text()
}

// sameHead reports whether appendMetaHead writes the same for a and b:
// their fields before the last write are equal, an empty map or list
// being the same as none.
func sameHead(a, b *Meta) bool {
	return a.Kind == b.Kind && a.Name == b.Name && a.UID == b.UID && a.DeletionRequested == b.DeletionRequested &&
		sameMetaMap(a.Labels, b.Labels) && sameMetaMap(a.Annotations, b.Annotations) &&
		sameList(a.Managed, b.Managed) && sameList(a.Owners, b.Owners) && sameList(a.Finalizers, b.Finalizers)
}

// sameList reports whether a and b hold the same elements, without looking
// at them when they are the same elements of the same array (a write's
// lists are its base's, or new: nothing changes an element in place).
func sameList[E comparable](a, b []E) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.SliceData(a) == unsafe.SliceData(b) || equalList(a, b))
}

// equalList is slices.Equal, for sameList's lists that it must look at.
// Not inlined, nor equalMap: inlined five times into sameHead, their loops
// spread its quick checks, which a write's metadata mostly pass (the same
// or empty lists and maps), over 1.7 KB of code.
//
//go:noinline
func equalList[E comparable](a, b []E) bool { return slices.Equal(a, b) }

// equalMap is maps.Equal, for sameMetaMap's maps that it must look at.
//
//go:noinline
func equalMap(a, b map[string]string) bool { return maps.Equal(a, b) }

// sameMetaMap reports whether a and b hold the same entries, without
// looking at them when they are the same map.
func sameMetaMap(a, b map[string]string) bool {
	return len(a) == len(b) && (len(a) == 0 || sharedMap(a, b) || equalMap(a, b))
}

// headOf returns the head of value, whose metadata d read as appendMeta
// writes them (metaAsWritten, see metaDecoder.headEnd) as the value's first
// member: none otherwise.
func (d *metaDecoder) headOf(value []byte) storedHead {
	const open = `{"metadata":{`
	if d.headEnd <= len(open) || d.headEnd > len(value) || !bytes.HasPrefix(value, []byte(open)) {
		return storedHead{}
	}
	return headText(value[:d.headEnd])
}
