package store

import (
	"bytes"

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
// store writes metadata (appendMeta) and, when the stored value starts with
// exactly that text, takes the Meta from it instead of decoding the
// metadata again, the most costly part of the value to decode. The Spec,
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
func (s *Store[S, T]) decodeRawAs(kv kv.KeyValue, read *Meta) (*rawObject, bool) {
	name, ok := s.nameOf(kv.Key)
	if read == nil || s.ver != nil || !ok {
		return nil, false // a versioned value starts with its version
	}
	m := *read
	m.Kind, m.Name, m.Revision = s.kind, name, 0
	m.Labels, m.Annotations = nilIfEmptyMap(m.Labels), nilIfEmptyMap(m.Annotations)
	m.Owners, m.Finalizers, m.Managed = nilIfEmpty(m.Owners), nilIfEmpty(m.Finalizers), nilIfEmpty(m.Managed)
	bp := encodeBuffers.Get().(*[]byte)
	head, ok := appendMetaHead(append((*bp)[:0], `{"metadata":`...), &m)
	headEnd := len(head)
	if ok {
		head, ok = appendMetaTail(head, &m)
	}
	head = append(head, `,"spec":`...)
	same := ok && bytes.HasPrefix(kv.Value, head)
	if cap(head) <= maxPooledEncode {
		*bp = head[:0]
		encodeBuffers.Put(bp)
	}
	if !same {
		return nil, false
	}
	scratch := s.borrowScratch()
	defer s.giveBack(scratch)
	d := s.metaDecoder(kv.Key, scratch)
	d.specShape = true
	d.r = jsonscan.NewReader(kv.Value[len(head):])
	raw := &rawObject{Meta: m}
	if s.last != nil {
		// The write remembers what it read (see lastValues.wroteGiven),
		// and its result shares what it left as it was: neither may be
		// the caller's maps and slices, which the caller may edit in place
		// for its next write.
		raw.Meta = m.clone()
	}
	spec, ok := d.readSpec(&raw.Meta)
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
	raw.ownSides(d.specKey)
	// The value's head is appendMetaHead's of raw.Meta: the write copies it
	// where it leaves it as it is.
	raw.head = storedHead{text: kv.Value[:headEnd:headEnd]}
	raw.Meta.Revision = kv.ModRevision
	return raw, true
}
