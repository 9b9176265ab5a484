package store

import (
	"bytes"
	"slices"

	"github.com/steady-go/steady/internal/jsonscan"
	"github.com/steady-go/steady/store/kv"
)

// A read-modify-write (Get, then an Update of what it returned) reads the
// object twice: the write reads the stored value again, for its
// precondition and for what it keeps as stored (the ownership records, the
// status, the conditions). A Store without its memory of values
// (WithLastValues(0)) remembers nothing of the first read, but the caller
// hands its result back: obj.Meta is the Meta that read decoded, unless
// the caller changed it since. So the write's read encodes that Meta as the
// store writes metadata (appendMeta; the text of its ownership records and
// last write, most of its bytes, as the read's decoders remember it, see
// appendMetaKnown) and, when the stored value starts with exactly that
// text, takes the Meta from it instead of decoding the metadata again, the
// most costly part of the value to decode. The Spec,
// Status and Conditions are read as decodeRaw reads them.
//
// Nothing of the caller's is kept beyond the write: the caller's Meta is a
// guess that the stored bytes confirm or refute, never a memory; a Store
// that remembers values takes a copy of it. Why it gives the Meta the
// general decoder gives: appendMeta writes a Meta whose strings are all
// plain (no escapes, see plainJSONString) as the member-by-member text of
// its fields, each string between quotes as it is, and metaAsWritten reads
// that very text back field for field; the only fields whose value the text
// does not fix are the empty maps and lists, which it omits and a decode
// gives as nil, and Revision, which is not part of the text. So equal text
// means an equal Meta once those are made nil and Revision is the key's
// ModRevision.

// decodeRawAs is decodeRaw with shape for a value that is expected to hold
// read as its metadata (see above). It reports false, having read nothing
// into any result, when the value does not start with exactly that
// metadata or is not laid out as the store writes it (encode), for the
// caller to decode it the general way, which also names what is wrong.
//
// name is the name of the object kv holds, a valid name (ValidateName):
// the write checked it, and built the key from it.
func (s *Store[S, T]) decodeRawAs(kv kv.KeyValue, name string, read *Meta) (*rawObject, bool) {
	return s.decodeRawAsIn(kv, name, read, nil)
}

// decodeRawAsIn is decodeRawAs with held, when not nil, the scratch space
// an Update of a Store without a memory of values holds for its write
// (see updateRead): it decodes with it, and into its rawObject rather
// than a new one (416 bytes), as nothing keeps the object read past the
// write. The object is valid until held is given back.
func (s *Store[S, T]) decodeRawAsIn(kv kv.KeyValue, name string, read *Meta, held *decodeScratch) (*rawObject, bool) {
	if read == nil || s.ver != nil {
		return nil, false // a versioned value starts with its version
	}
	m := *read
	m.Kind, m.Name, m.Revision = s.kind, name, 0
	m.Labels, m.Annotations = nilIfEmptyMap(m.Labels), nilIfEmptyMap(m.Annotations)
	m.Owners, m.Finalizers, m.Managed = nilIfEmpty(m.Owners), nilIfEmpty(m.Finalizers), nilIfEmpty(m.Managed)
	scratch := held
	if scratch == nil {
		scratch = s.borrowScratch()
		defer s.giveBack(scratch)
	}
	bp := encodeBuffers.Get().(*[]byte)
	head, headEnd, ok := appendMetaKnown((*bp)[:0], &m, scratch)
	head = append(head, `,"spec":`...)
	same := ok && bytes.HasPrefix(kv.Value, head)
	if cap(head) <= maxPooledEncode {
		*bp = head[:0]
		encodeBuffers.Put(bp)
	}
	if !same {
		return nil, false
	}
	d := s.metaDecoder(kv.Key, scratch)
	d.specShape = true
	d.r = jsonscan.NewReader(kv.Value[len(head):])
	var raw *rawObject
	if held != nil {
		raw = &held.raw
		*raw = rawObject{Meta: m}
	} else {
		raw = &rawObject{Meta: m}
	}
	if s.last != nil {
		// The write remembers what it read (see lastValues.wroteGiven),
		// and its result shares what it left as it was: neither may be
		// the caller's maps and slices, which the caller may edit in place
		// for its next write.
		raw.Meta = m.clone()
	}
	spec, keyOwn, ok := s.readSpecLike(d, &raw.Meta)
	if !ok || !d.r.Literal(`,"status":`) {
		return nil, false
	}
	status, ok := d.r.Raw()
	if ok && d.r.Literal(`,"conditions":`) {
		raw.Conditions, ok = d.conditions()
	}
	if !ok || !d.r.Literal(`}`) || !d.r.End() {
		return nil, false
	}
	raw.Spec, raw.Status = spec, status
	if s.last != nil {
		raw.ownSides(d.specKey)
	} else {
		raw.shareSides(d.specKey, keyOwn)
	}
	// The value's head is appendMetaHead's of raw.Meta: the write copies it
	// where it leaves it as it is.
	raw.head = headText(kv.Value[:headEnd])
	raw.Meta.Revision = kv.ModRevision
	return raw, true
}

// readSpecLike is d.readSpec, for a d that computes the shape key
// (specShape), of a spec likely to have the shape of the spec of the last
// write that kept its record (keptWrite.spec): a client's writer changes
// the same fields of one object after another, objects of one shape. It
// reads a spec of that shape comparing its text with the shape key's
// (jsonscan.Reader.RawOfShape: ~500 instructions on the controller
// benchmark's spec, against ~2,800 for RawShape), and takes that key;
// any other spec it reads with readSpec. keyOwn reports that d.specKey
// is then immutable memory of its own (the Shape's), not d's scratch.
func (s *Store[S, T]) readSpecLike(d *metaDecoder, m *Meta) (spec []byte, keyOwn, ok bool) {
	if k := s.schemas.codecs.lastKept(); k != nil && k.spec != nil && hasRelative(m.Managed, specSide) {
		if spec, ok := d.r.RawOfShape(k.spec); ok {
			d.specKey = k.spec.Key()
			return spec, true, true
		}
	}
	spec, ok = d.readSpec(m)
	return spec, false, ok
}

// appendMetaKnown appends the opening of a value whose metadata are m and
// m itself, as appendTo does (appendMeta after `{"metadata":`), for m of
// a kind the Store's (validateKind) and a valid name (ValidateName): their
// letters, digits, dots, dashes and underscores are plain JSON (see
// plainJSONString), written as they are without a look. It reports the
// length of b once the head is appended (see storedHead). The text of m's ownership
// records and of its last write is the text the decoders' scratch space
// sc remembers for them (textMemo), when it remembers m's: a Get of the
// object read them, most likely, and the caller handed them back as they
// were. That text is what encoding/json writes for them, byte for byte, as
// every text metaAsWritten reads is, and so appendMeta's where appendMeta
// writes them: appendManaged and appendLastWrite need not write them again,
// checking each of their strings (most of the metadata's bytes) for what
// encoding/json escapes. (A string with a DEL byte, which appendPlain
// leaves to encoding/json and encoding/json writes as it is, is the one
// text appendMetaKnown takes where appendMeta reports false.)
func appendMetaKnown(b []byte, m *Meta, sc *decodeScratch) ([]byte, int, bool) {
	ok := true
	b = append(append(append(append(b, `{"metadata":{"kind":"`...), m.Kind...), `","name":"`...), m.Name...)
	b = appendMetaIdentityRest(append(b, '"'), m, &ok)
	if len(m.Managed) > 0 {
		b = append(b, `,"managed":`...)
		if text := memoText(&sc.managed, m.Managed); text != nil {
			b = append(b, text...)
		} else {
			b = appendManaged(b, m.Managed, &ok)
		}
	}
	headEnd := len(b)
	b = append(b, `,"lastWrite":`...)
	if text := memoText(&sc.writes, []LastWrite{m.LastWrite}); text != nil {
		b = append(b, text...)
	} else {
		b = appendLastWrite(b, &m.LastWrite, &ok)
	}
	return appendMetaEnd(b, m), headEnd, ok
}

// memoText returns the text m remembers of items, nil when it remembers
// none. It leaves m as it is.
func memoText[E comparable](m *textMemo[E], items []E) []byte {
	for i := range m.text {
		if len(m.text[i]) > 0 && slices.Equal(m.items[i], items) {
			return m.text[i]
		}
	}
	return nil
}
