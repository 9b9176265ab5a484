package store

import (
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/steady-go/steady/store/kv"
)

// decodeWritten decodes kv, the value of a watch event, from what the Store
// remembers of it at kv's revision (see WithLastValues) instead of from its
// bytes, when it remembers it decoded: a value the Store wrote itself,
// whose event (a Loop's status write, say) would otherwise decode again the
// metadata and conditions the write just encoded. A key's ModRevision names
// one value for good, so the remembered value at that revision is kv's.
//
// It reports false, and the caller decodes kv's bytes, unless the result is
// exactly what decoding them gives: a kind without versions whose types
// run no code of their own as they decode, a value with nothing preserved,
// strings that encoding/json writes as they are (valid UTF-8), condition
// times that come back as they went (UTC), and Spec and Status that decode
// (or a Spec it takes from an object held, see WatchUndecoded). Empty maps
// and slices come back nil, as the encoding omits them.
//
// Of the maps and slices of Meta, those equal to the ones of the object
// held for the value before (at prev, see WatchUndecoded) are that
// object's, memory shared: they are what decoding gives (valid UTF-8,
// having been decoded), so they need no check and no copy.
//
// mem is what the Store remembers of kv.Key, looked up once for the event
// (see rememberedOnce); nil looks it up.
func (s *Store[S, T]) decodeWritten(kv kv.KeyValue, prev int64, mem *rememberedOnce, scratch *decodeScratch, held *heldObjects[S, T]) (decodedFrom[S, T], bool) {
	if s.ver != nil || s.ownCodec {
		return decodedFrom[S, T]{}, false
	}
	if mem == nil {
		mem = &rememberedOnce{key: kv.Key}
	}
	e, ok := mem.at(s.last, kv.ModRevision)
	if !ok || e.raw == nil {
		return decodedFrom[S, T]{}, false
	}
	raw := e.raw
	d := s.metaDecoder(kv.Key, scratch) // its name is the key's, cut once
	// The Store's kind and the names it writes are ASCII (validateKind,
	// ValidateName): a Meta that names them needs no check of those. Its
	// name passed ValidateName when it was written or read, so the key's,
	// equal to it, needs no second pass either.
	if s.sameIdentity(d.name, &raw.Meta) != nil {
		return decodedFrom[S, T]{}, false
	}
	var same metaSame
	if h := held.at(d.name, prev); h != nil {
		same = sameAsHeld(&raw.Meta, &h.Meta)
	}
	var valid *LastWrite // see decodeScratch.validWrite
	if scratch != nil {
		valid = &scratch.validWrite
	}
	if raw.Version != "" || raw.Preserved != nil || !exactMeta(&raw.Meta, same, valid) || !exactConditions(raw.Conditions) {
		return decodedFrom[S, T]{}, false
	}
	if scratch != nil && scratch.sharing != nil && same.managed == nil {
		// The held object's records differ (a first status write adds its
		// manager's): those of another object may not (see sharedValues).
		same.managed = scratch.sharing.managedList(raw.Meta.Managed, false)
	}
	obj := &Object[S, T]{Meta: decodedClone(raw.Meta, same), Conditions: nilIfEmpty(slices.Clone(raw.Conditions))}
	obj.Meta.Revision = kv.ModRevision
	var like *decodedFrom[S, T]
	if same, ok := held.sameSpec(d.name, &e); ok {
		like = &same
	}
	if !decodeSides(d, obj, raw.Spec, raw.Status, like, copies{spec: true}) {
		return decodedFrom[S, T]{}, false
	}
	return decodedFrom[S, T]{obj: obj, spec: raw.Spec, status: raw.Status}, true
}

// metaSame holds, for each of a Meta's maps and slices, the held object's
// when it is equal and not empty (see sameAsHeld), else nil; managed may
// instead be an equal list the decoder's objects share (see sharedValues).
type metaSame struct {
	labels, annotations map[string]string
	owners              []OwnerRef
	finalizers          []string
	managed             []ManagedFields
	// uid: the UID is the held object's.
	uid bool
}

// sameAsHeld returns the maps and slices of h, a held object's Meta, that
// m has equal (see metaSame).
func sameAsHeld(m, h *Meta) (same metaSame) {
	same.uid = m.UID == h.UID
	if len(m.Labels) > 0 && maps.Equal(m.Labels, h.Labels) {
		same.labels = h.Labels
	}
	if len(m.Annotations) > 0 && maps.Equal(m.Annotations, h.Annotations) {
		same.annotations = h.Annotations
	}
	if len(m.Owners) > 0 && slices.Equal(m.Owners, h.Owners) {
		same.owners = h.Owners
	}
	if len(m.Finalizers) > 0 && slices.Equal(m.Finalizers, h.Finalizers) {
		same.finalizers = h.Finalizers
	}
	if len(m.Managed) > 0 && slices.Equal(m.Managed, h.Managed) {
		same.managed = h.Managed
	}
	return same
}

// at returns the object held for name at rev, nil when there is none (or
// h is nil).
func (h *heldObjects[S, T]) at(name string, rev int64) *Object[S, T] {
	if h == nil || rev == 0 {
		return nil
	}
	return h.held(name, rev)
}

// decodedClone returns a copy of m that shares nothing it could modify with
// m, with empty maps and slices nil, as a decode of m's encoding gives them;
// those in same are the held object's (see metaSame).
func decodedClone(m Meta, same metaSame) Meta {
	m.Labels = heldMap(same.labels, m.Labels)
	m.Annotations = heldMap(same.annotations, m.Annotations)
	m.Owners = heldSlice(same.owners, m.Owners)
	m.Finalizers = heldSlice(same.finalizers, m.Finalizers)
	m.Managed = heldSlice(same.managed, m.Managed)
	return m
}

// heldMap and heldSlice return held when it is not nil, else a copy of v,
// nil when empty.
func heldMap(held, v map[string]string) map[string]string {
	if held != nil {
		return held
	}
	return nilIfEmptyMap(maps.Clone(v))
}

func heldSlice[E any](held, v []E) []E {
	if held != nil {
		return held
	}
	return nilIfEmpty(slices.Clone(v))
}

func nilIfEmpty[E any](s []E) []E {
	if len(s) == 0 {
		return nil
	}
	return s
}

func nilIfEmptyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// exactMeta reports whether every string of m comes back from its
// encoding as it is: encoding/json replaces invalid UTF-8. Those of the
// maps and slices in same, decoded, are, and so are Kind and Name, the
// Store's and its key's (checkIdentity came first). valid, when not nil,
// is a last write whose strings are valid UTF-8, found so before: one
// equal to it needs no second look (a Store's status writes, whose events
// come one after another, have one writer and one operation), and one
// found valid takes its place.
func exactMeta(m *Meta, same metaSame, valid *LastWrite) bool {
	ok := (same.uid || utf8.ValidString(m.UID)) && validWrite(&m.LastWrite, valid) &&
		(same.labels != nil || validUTF8Map(m.Labels)) && (same.annotations != nil || validUTF8Map(m.Annotations)) &&
		(same.finalizers != nil || validUTF8(m.Finalizers...))
	if same.owners == nil {
		for _, o := range m.Owners {
			ok = ok && validUTF8(o.Kind, o.Name, o.UID)
		}
	}
	if same.managed == nil {
		for _, e := range m.Managed {
			ok = ok && validUTF8(e.Manager, e.Operation, e.Subresource, e.Fields)
		}
	}
	return ok
}

func validUTF8(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// validWrite reports whether w's strings are valid UTF-8, without a look
// when w is *valid, which it becomes (see exactMeta).
func validWrite(w, valid *LastWrite) bool {
	if valid != nil && *w == *valid {
		return true
	}
	if !validUTF8(w.Manager, string(w.Op), w.Trace) {
		return false
	}
	if valid != nil {
		*valid = *w
	}
	return true
}

func validUTF8Map(m map[string]string) bool {
	if len(m) == 0 {
		return true // no range: it costs an iterator's set-up even so
	}
	for k, v := range m {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return false
		}
	}
	return true
}

// exactConditions reports whether conds come back from their encoding as
// they are: valid UTF-8, and times in UTC (a time in another location
// decodes with a fixed offset, or as Local; one with a monotonic reading,
// time.Now's, is Local).
func exactConditions(conds []Condition) bool {
	for i := range conds {
		c := &conds[i]
		t := c.LastTransitionTime
		if !validUTF8(c.Type, string(c.Status), c.Reason, c.Message) || t.Location() != time.UTC {
			return false
		}
	}
	return true
}
