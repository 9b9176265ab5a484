package store

import (
	"slices"

	"github.com/steady-go/steady/internal/jsonscan"
)

// Metadata as the store writes them (appendMeta) are read here without a
// call per member: each fixed part of the text is one jsonscan
// Reader.Literal, each string one Reader.Plain. That is most of what
// decoding an object's metadata costs (the ownership records are most of
// their bytes), and a watch, a Get and the read of a write all do it.
//
// A watch event's metadata are mostly those of the object held for the
// value before it (see baseValue.meta): another writer's spec update
// changes the generation and the last write, and leaves the records as
// they were. So each string that is the held one's text is the held one,
// and a list or a map whose every element is the held one's is the held
// list or map, memory shared as baseValue shares it (the held object is
// read-only): the records then cost one comparison per string and no
// allocation. It needs no bytes of the value before: the held object's
// own parts, compared with what they would be written as, say whether
// they are the same.

// metaAsWritten decodes m, as meta does, from metadata spelled exactly as
// appendMeta writes them, taking from held (nil: none) what is the same.
// For any other text (white space, keys in another order or spelling, a
// string that is not plain ASCII or that encoding/json escapes (<, >, &),
// an empty list, map, subresource or trace, a zero status generation, -0)
// it reports false, with m and d.r partly read; meta then reads the
// metadata the general way. So both give the same Meta for the texts it
// reads, and a text it reads is byte for byte what encoding/json, and so
// appendTo, writes for the Meta it gives (see storedHead).
func (d *metaDecoder) metaAsWritten(m *Meta, held *Meta) bool {
	r := &d.r
	if held != nil && d.baseHead(m, held) {
		return d.writeAsWritten(m, &held.LastWrite)
	}
	var none Meta
	h := held
	if h == nil {
		h = &none
	}
	ok := r.Literal(`{"kind":`) && d.plainAs(&m.Kind, h.Kind) &&
		r.Literal(`,"name":`) && d.plainAs(&m.Name, h.Name) &&
		r.Literal(`,"uid":`) && d.plainAs(&m.UID, h.UID) &&
		d.tagsAsWritten(m, h)
	if ok && r.Literal(`,"deletionRequested":true`) {
		m.DeletionRequested = true
	}
	if ok && r.Literal(`,"managed":`) {
		m.Managed, ok = d.managedAsWrittenList(h.Managed)
	}
	return ok && d.writeAsWritten(m, &h.LastWrite)
}

// baseHead reads the head of the metadata (see storedHead) when it is the
// base's, byte for byte, at the same place: the first member of the
// value, from the metadata's opening brace to their last write. The
// fields it holds are then held's (the held object's, decoded from the
// base) with no look at their text: what the write left byte for byte as
// it was, as the Status of a spec write is (see baseValue). It costs one
// comparison, where reading them was a token and a comparison per
// string. It reports false, having read nothing, when the base's head is
// not known or the value's differs.
func (d *metaDecoder) baseHead(m *Meta, held *Meta) bool {
	const open = len(`{"metadata":`)
	b := d.base
	if b == nil || len(b.head) <= open || d.r.Pos() != open || !d.r.LiteralBytes(b.head[open:]) {
		return false
	}
	m.Kind, m.Name, m.UID, m.DeletionRequested = held.Kind, held.Name, held.UID, held.DeletionRequested
	// appendMeta leaves empty maps and lists out, which decode as nil.
	m.Labels, m.Annotations = nilIfEmptyMap(held.Labels), nilIfEmptyMap(held.Annotations)
	m.Owners, m.Finalizers, m.Managed = nilIfEmpty(held.Owners), nilIfEmpty(held.Finalizers), nilIfEmpty(held.Managed)
	return true
}

// managedAsWrittenList reads the ownership records as listAsWritten does,
// or, when their text is one the scratch space remembers (see textMemo),
// takes what it decoded to.
func (d *metaDecoder) managedAsWrittenList(held []ManagedFields) ([]ManagedFields, bool) {
	if d.scratch == nil {
		return listAsWritten(d, held, (*metaDecoder).managedAsWritten)
	}
	memo := &d.scratch.managed
	if items, ok := memo.read(&d.r); ok {
		switch {
		case slices.Equal(items, held):
			return held, true
		case d.scratch.sharing != nil:
			return d.scratch.sharing.managedList(items, false), true
		}
		return append(make([]ManagedFields, 0, len(items)), items...), true
	}
	start := d.r.Pos()
	list, ok := listAsWritten(d, held, (*metaDecoder).managedAsWritten)
	if ok {
		memo.keep(d.r.Since(start), list)
		if d.scratch.sharing != nil && !sharedSlice(list, held) {
			list = d.scratch.sharing.managedList(list, true)
		}
	}
	return list, ok
}

// textMemo remembers the last two texts of a part of the metadata (the
// ownership records, the last write) that a decoder read as appendMeta
// writes them, with what each decoded to: those repeat from one value to
// the next (the records of a kind's objects are mostly the same, as are its
// writers), and reading a text again is a comparison of its bytes, where
// decoding it was a token and a string comparison per field. A text
// decodes to the same value wherever it is read (the decoders read left
// to right, and each text is a whole value), so what the memo gives is
// what decoding gives. Its slices are its own, never handed out.
type textMemo[E comparable] struct {
	text  [2][]byte
	items [2][]E
}

// read reads at r a text the memo holds, most recent first, returning
// what it decoded to; it reads nothing when it holds none that comes next.
func (m *textMemo[E]) read(r *jsonscan.Reader) ([]E, bool) {
	for i := range m.text {
		if len(m.text[i]) > 0 && r.LiteralBytes(m.text[i]) {
			if i > 0 {
				m.text[0], m.text[i] = m.text[i], m.text[0]
				m.items[0], m.items[i] = m.items[i], m.items[0]
			}
			return m.items[0], true
		}
	}
	return nil, false
}

// keep remembers text, the whole text of a value that decoded to items,
// in place of the least recent, copying both into the memo's own memory.
func (m *textMemo[E]) keep(text []byte, items []E) {
	last := len(m.text) - 1
	oldText, oldItems := m.text[last], m.items[last]
	copy(m.text[1:], m.text[:last])
	copy(m.items[1:], m.items[:last])
	m.text[0], m.items[0] = append(oldText[:0], text...), append(oldItems[:0], items...)
}

// tagsAsWritten reads the labels, annotations, owners and finalizers that
// follow the UID, each optional, as appendMeta writes them (see
// metaAsWritten).
func (d *metaDecoder) tagsAsWritten(m *Meta, h *Meta) bool {
	r, ok := &d.r, true
	if r.Literal(`,"labels":`) {
		m.Labels, ok = d.mapAsWritten(h.Labels)
	}
	if ok && r.Literal(`,"annotations":`) {
		m.Annotations, ok = d.mapAsWritten(h.Annotations)
	}
	if ok && r.Literal(`,"owners":`) {
		m.Owners, ok = listAsWritten(d, h.Owners, (*metaDecoder).ownerAsWritten)
	}
	if ok && r.Literal(`,"finalizers":`) {
		m.Finalizers, ok = listAsWritten(d, h.Finalizers, (*metaDecoder).finalizerAsWritten)
	}
	return ok
}

// writeAsWritten reads the rest of the metadata as appendMeta writes them,
// from the last write on (see metaAsWritten).
func (d *metaDecoder) writeAsWritten(m *Meta, held *LastWrite) bool {
	r := &d.r
	d.headEnd = r.Pos()
	if !r.Literal(`,"lastWrite":`) || !d.lastWriteAsWritten(&m.LastWrite, held) || !r.Literal(`,"generation":`) {
		return false
	}
	var ok bool
	if m.Generation, ok = d.int64AsWritten(); ok && r.Literal(`,"statusGeneration":`) {
		m.StatusGeneration, ok = d.int64AsWritten()
		ok = ok && m.StatusGeneration != 0 // appendMeta leaves 0 out
	}
	return ok && r.Literal(`}`)
}

// int64AsWritten reads an int64 as strconv.AppendInt writes it: no white
// space before it, not -0.
func (d *metaDecoder) int64AsWritten() (int64, bool) {
	start := d.r.Pos()
	n, ok := d.r.Int64()
	text := d.r.Since(start)
	return n, ok && (text[0] == '-' && n != 0 || text[0] >= '0' && text[0] <= '9')
}

// lastWriteAsWritten reads the last write as appendMeta writes it into
// *w, or, when its text is one the scratch space remembers (see
// textMemo), takes what it decoded to. A write with a trace (one per
// write) is not remembered.
func (d *metaDecoder) lastWriteAsWritten(w *LastWrite, held *LastWrite) bool {
	r := &d.r
	var memo *textMemo[LastWrite]
	if d.scratch != nil {
		memo = &d.scratch.writes
		if items, ok := memo.read(r); ok {
			*w = items[0]
			return true
		}
	}
	start := r.Pos()
	ok := r.Literal(`{"manager":`) && d.plainAs(&w.Manager, held.Manager) &&
		r.Literal(`,"op":`) && d.plainAs((*string)(&w.Op), string(held.Op))
	if ok && r.Literal(`,"trace":`) {
		ok = d.plainAs(&w.Trace, held.Trace) && w.Trace != "" // appendMeta leaves "" out
	}
	if !ok || !r.Literal(`}`) {
		return false
	}
	if memo != nil && w.Trace == "" {
		memo.keep(r.Since(start), []LastWrite{*w})
	}
	return true
}

// plainAs reads a string encoding/json writes as it is
// (Reader.PlainStrict) into *s: held when it is held's text, else what str
// gives.
func (d *metaDecoder) plainAs(s *string, held string) bool {
	b, ok := d.r.PlainStrict()
	if !ok {
		return false
	}
	if string(b) == held {
		*s = held
	} else {
		*s = d.str(b)
	}
	return true
}

// listAsWritten reads a non-empty list as appendMeta writes it, each
// element with elem, given the held list's element at its index (zero past
// its end). It returns held itself when the list has as many elements and
// each is held's, else a new slice of the list's length.
func listAsWritten[E comparable](d *metaDecoder, held []E, elem func(*metaDecoder, E) (E, bool)) ([]E, bool) {
	r := &d.r
	if !r.Literal(`[`) {
		return nil, false
	}
	var first [4]E
	items, same := first[:0], true
	for i := 0; ; i++ {
		var h E
		if i < len(held) {
			h = held[i]
		}
		e, ok := elem(d, h)
		if !ok {
			return nil, false
		}
		items = append(items, e)
		same = same && i < len(held) && e == h
		if r.Literal(`]`) {
			break
		}
		if !r.Literal(`,`) {
			return nil, false
		}
	}
	if same && len(items) == len(held) {
		return held, true
	}
	return append(make([]E, 0, len(items)), items...), true
}

func (d *metaDecoder) managedAsWritten(held ManagedFields) (f ManagedFields, ok bool) {
	r := &d.r
	ok = r.Literal(`{"manager":`) && d.plainAs(&f.Manager, held.Manager) &&
		r.Literal(`,"operation":`) && d.plainAs(&f.Operation, held.Operation)
	if ok && r.Literal(`,"subresource":`) {
		ok = d.plainAs(&f.Subresource, held.Subresource) && f.Subresource != "" // appendMeta leaves "" out
	}
	ok = ok && r.Literal(`,"fields":`) && d.plainAs(&f.Fields, held.Fields) && r.Literal(`}`)
	return f, ok
}

func (d *metaDecoder) ownerAsWritten(held OwnerRef) (o OwnerRef, ok bool) {
	r := &d.r
	ok = r.Literal(`{"kind":`) && d.plainAs(&o.Kind, held.Kind) &&
		r.Literal(`,"name":`) && d.plainAs(&o.Name, held.Name) &&
		r.Literal(`,"uid":`) && d.plainAs(&o.UID, held.UID)
	if ok && r.Literal(`,"controller":true`) {
		o.Controller = true
	}
	ok = ok && r.Literal(`}`)
	return o, ok
}

func (d *metaDecoder) finalizerAsWritten(held string) (s string, ok bool) {
	ok = d.plainAs(&s, held)
	return s, ok
}

// mapAsWritten reads a map of strings as appendStringMap writes it, keys
// in increasing order (so none repeats): held itself when it has the same
// entries, else a new map.
func (d *metaDecoder) mapAsWritten(held map[string]string) (map[string]string, bool) {
	start := d.r
	if len(held) > 0 && d.sameMap(held) {
		return held, true
	}
	d.r = start
	if v := d.sharing(); v != nil {
		return sharedByText(d, &v.metaMaps, (*metaDecoder).newMapAsWritten, nil)
	}
	return d.newMapAsWritten()
}

// newMapAsWritten reads a map as mapAsWritten does, into a new map.
func (d *metaDecoder) newMapAsWritten() (map[string]string, bool) {
	out := map[string]string{}
	ok := d.entriesAsWritten(func(k, v []byte) {
		out[d.str(k)] = d.str(v)
	})
	return out, ok
}

// sameMap reads a map as mapAsWritten does, reporting whether its entries
// are held's (false too for anything mapAsWritten does not read).
func (d *metaDecoder) sameMap(held map[string]string) bool {
	n, same := 0, true
	ok := d.entriesAsWritten(func(k, v []byte) {
		hv, in := held[string(k)]
		same = same && in && hv == string(v)
		n++
	})
	return ok && same && n == len(held)
}

// entriesAsWritten reads a non-empty map of strings as appendStringMap
// writes it (it leaves an empty one out), keys in increasing order,
// calling f with each key and value.
func (d *metaDecoder) entriesAsWritten(f func(k, v []byte)) bool {
	r := &d.r
	if !r.Literal(`{`) {
		return false
	}
	var prev []byte
	for i := 0; ; i++ {
		k, ok := r.PlainStrict()
		if !ok || i > 0 && string(k) <= string(prev) || !r.Literal(`:`) {
			return false
		}
		v, ok := r.PlainStrict()
		if !ok {
			return false
		}
		f(k, v)
		if r.Literal(`}`) {
			return true
		}
		if !r.Literal(`,`) {
			return false
		}
		prev = k
	}
}
