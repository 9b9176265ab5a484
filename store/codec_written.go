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
func (s *Store[S, T]) decodeWritten(kv kv.KeyValue, scratch *decodeScratch, held *heldObjects[S, T]) (decodedFrom[S, T], bool) {
	if s.ver != nil || s.ownCodec {
		return decodedFrom[S, T]{}, false
	}
	e, ok := s.last.lookup(kv.Key, kv.ModRevision)
	if !ok || e.raw == nil {
		return decodedFrom[S, T]{}, false
	}
	raw := e.raw
	if raw.Version != "" || raw.Preserved != nil || !exactMeta(&raw.Meta) || !exactConditions(raw.Conditions) {
		return decodedFrom[S, T]{}, false
	}
	obj := &Object[S, T]{Meta: decodedClone(raw.Meta), Conditions: nilIfEmpty(slices.Clone(raw.Conditions))}
	obj.Meta.Revision = kv.ModRevision
	if s.checkIdentity(kv.Key, &obj.Meta) != nil {
		return decodedFrom[S, T]{}, false
	}
	d := s.metaDecoder(kv.Key, scratch)
	var like *decodedFrom[S, T]
	if same, ok := held.sameSpec(d.name, &e); ok {
		like = &same
	}
	if !decodeSides(d, obj, raw.Spec, raw.Status, like, copies{spec: true}) {
		return decodedFrom[S, T]{}, false
	}
	return decodedFrom[S, T]{obj: obj, spec: raw.Spec, status: raw.Status}, true
}

// decodedClone returns a copy of m that shares nothing it could modify with
// m, with empty maps and slices nil, as a decode of m's encoding gives them.
func decodedClone(m Meta) Meta {
	m.Labels = nilIfEmptyMap(maps.Clone(m.Labels))
	m.Annotations = nilIfEmptyMap(maps.Clone(m.Annotations))
	m.Owners = nilIfEmpty(slices.Clone(m.Owners))
	m.Finalizers = nilIfEmpty(slices.Clone(m.Finalizers))
	m.Managed = nilIfEmpty(slices.Clone(m.Managed))
	return m
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
// encoding as it is: encoding/json replaces invalid UTF-8.
func exactMeta(m *Meta) bool {
	ok := validUTF8(m.Kind, m.Name, m.UID, m.LastWrite.Manager, string(m.LastWrite.Op), m.LastWrite.Trace) &&
		validUTF8Map(m.Labels) && validUTF8Map(m.Annotations) && validUTF8(m.Finalizers...)
	for _, o := range m.Owners {
		ok = ok && validUTF8(o.Kind, o.Name, o.UID)
	}
	for _, e := range m.Managed {
		ok = ok && validUTF8(e.Manager, e.Operation, e.Subresource, e.Fields)
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

func validUTF8Map(m map[string]string) bool {
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
