package store

import (
	"slices"
	"unsafe"
)

// A Cache holds one object per name for as long as the name exists, and a
// fleet's objects repeat much of what they hold: their ownership records
// (one manager owns the same fields of every object), their labels, and
// lists and maps of strings of their specs (a selector of a few dozen
// values, a container's arguments). Decoded for a caller that holds them shared and
// read-only (a Cache without a transform: see WatchUndecoded and
// ListReusing), objects of different names share those (labels and
// annotations read as appendMeta writes them): the decoder hands
// out again a list or map it handed out lately when the new one is equal,
// where it would allocate a copy per object (in the controller benchmark,
// at 10,000 objects, 4.8 MB of a 25 MB heap at rest). As with the parts
// the object after a write shares with the one before (see baseValue),
// no one changes either; a caller that does is told by the Cache's
// mutation detector, for every object that shares what it changed.

// sharedValues is what a decoder whose objects are shared (see
// decodeScratch.sharing) remembers of the lists and maps it handed out. It
// is not safe for concurrent use.
type sharedValues struct {
	// managed is a ring of the ownership records handed out lately, the
	// oldest at next once full: a kind's objects mostly hold one or two.
	managed [maxSharedManaged][]ManagedFields
	next    int
	// maps and lists are the spec's and status's maps and lists of
	// strings, by the text they were decoded from: the same text decodes
	// to an equal value. Each holds at most maxSharedTexts, forgotten all
	// at once when full.
	maps  map[string]map[string]string
	lists map[string][]string
	// metaMaps are the labels and annotations, likewise, by a text read
	// as appendMeta writes it (see mapAsWritten): apart from maps, whose
	// texts a general decode reads.
	metaMaps map[string]map[string]string
	// texts holds, for each list and map that lists and maps hold, by its
	// array or map (see sharedAt), the text it was decoded from and its
	// length, and likewise for a held list or map found to be what a text
	// decodes to (sameStrings, sameStringMap, which compare element by
	// element): a held object's list or map (see heldSide) found there is
	// the same as the text at hand when that text is its text, one
	// comparison where sameStrings and sameStringMap compare element by
	// element, a map lookup per entry. A list or map handed out is never
	// modified, so what it was decoded from stays true of it. It holds at
	// most 2*maxSharedTexts, forgotten all at once when full.
	texts map[unsafe.Pointer]sharedText
}

// sharedText is the text a list or map of sharedValues was decoded from,
// and its length.
type sharedText struct {
	text string
	n    int
}

// sharedAt returns the array of a list or the map of a map, which names
// it in sharedValues.texts, and its length; nil for an empty one, whose
// array may be another's (a zero-sized allocation).
type sharedAt[V any] func(V) (unsafe.Pointer, int)

func listAt(l []string) (unsafe.Pointer, int) {
	if len(l) == 0 {
		return nil, 0
	}
	return unsafe.Pointer(unsafe.SliceData(l)), len(l)
}

func mapAt(m map[string]string) (unsafe.Pointer, int) {
	if len(m) == 0 {
		return nil, 0
	}
	return *(*unsafe.Pointer)(unsafe.Pointer(&m)), len(m)
}

// sameText reports whether the value at d.r is spelled as the text that
// the list or map at p, of length n, was decoded from (see
// sharedValues.texts), reading it when it is; false, reading nothing,
// when the decoder's objects are not shared or it knows no such text.
func (d *metaDecoder) sameText(p unsafe.Pointer, n int) bool {
	v := d.sharing()
	if v == nil || v.texts == nil {
		return false
	}
	t, ok := v.texts[p]
	return ok && t.n == n && d.r.Literal(t.text)
}

// maxSharedManaged is how many ownership records sharedValues keeps.
const maxSharedManaged = 4

// maxSharedTexts bounds each of sharedValues' maps of texts.
const maxSharedTexts = 256

// sharing returns what d remembers of the values it handed out, or nil
// when its objects are not shared.
func (d *metaDecoder) sharing() *sharedValues {
	if d.scratch == nil {
		return nil
	}
	return d.scratch.sharing
}

// managedList returns a list of ownership records equal to list that v
// handed out lately, or else list itself, remembered, when own says that
// it is the caller's to give away, or else a copy of it, remembered. An
// empty list is nil, as a decode of its encoding gives it.
func (v *sharedValues) managedList(list []ManagedFields, own bool) []ManagedFields {
	if len(list) == 0 {
		return nil
	}
	for _, m := range v.managed {
		if len(m) == len(list) && (unsafe.SliceData(m) == unsafe.SliceData(list) || slices.Equal(m, list)) {
			return m
		}
	}
	if !own {
		list = slices.Clone(list)
	}
	v.managed[v.next] = list
	v.next = (v.next + 1) % maxSharedManaged
	return list
}

// sharedByText decodes the value at d.r with decode, or, when byText holds
// the value its text decoded to, reads it and returns that value. at,
// when not nil, names a value it adds to byText in texts (see
// sharedValues.texts).
func sharedByText[V any](d *metaDecoder, byText *map[string]V, decode func(*metaDecoder) (V, bool), at sharedAt[V]) (V, bool) {
	start := d.r
	text, ok := d.r.Raw()
	if ok {
		if v, in := (*byText)[string(text)]; in {
			return v, true
		}
	}
	d.r = start
	v, ok := decode(d)
	if !ok || d.r.Pos()-start.Pos() != len(text) {
		return v, ok
	}
	if len(*byText) >= maxSharedTexts {
		clear(*byText)
	}
	if *byText == nil {
		*byText = map[string]V{}
	}
	key := string(text)
	(*byText)[key] = v
	if at != nil {
		p, n := at(v)
		d.scratch.sharing.keepText(p, n, key)
	}
	return v, true
}

// keepText remembers text as one that decodes to the list or map at p
// (nil: none), of length n (see sharedValues.texts): the text it was
// decoded from, or one found to decode to what it holds.
func (v *sharedValues) keepText(p unsafe.Pointer, n int, text string) {
	if p == nil {
		return
	}
	if len(v.texts) >= 2*maxSharedTexts {
		clear(v.texts)
	}
	if v.texts == nil {
		v.texts = map[unsafe.Pointer]sharedText{}
	}
	v.texts[p] = sharedText{text: text, n: n}
}
