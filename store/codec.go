package store

import (
	"encoding/binary"

	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/store/kv"
	"reflect"

	"encoding/json"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"unsafe"
)

// The stored value of an object is the encoding/json encoding of Object
// (Meta.Revision is not part of it: it is the key's ModRevision). The store
// reads its own values as rawObject, so it can rewrite one half of an object
// (Meta and Spec, or Status and Conditions) and copy the other half through
// byte for byte without knowing S and T.
//
// A versioned kind's value also has its version and what the hub holds
// that its version cannot (see Versions and versions_codec.go).
type rawObject struct {
	Version    string          `json:"version,omitempty"`
	Meta       Meta            `json:"metadata"`
	Spec       json.RawMessage `json:"spec"`
	Status     json.RawMessage `json:"status"`
	Conditions []Condition     `json:"conditions,omitempty"`
	Preserved  json.RawMessage `json:"preserved,omitempty"`

	// stored is, for a versioned Store, the value as stored, when Spec and
	// Status are at the served version (see Store.served).
	stored storedSides
	// shape is the shape key of Spec as the read of a write computed it
	// while slicing Spec (see specKey).
	shape knownShape
	// head is the text of Meta up to its last write in the value raw was
	// read from or written as, when known (see storedHead).
	head storedHead
}

// knownShape is the shape key (jsonscan.AppendShapeKey) of the JSON text
// of, when key is not nil: each as its first byte and length (shapeOf),
// two words where two slices took six, so that rawObject fits its size
// class (TestRawObjectFitsItsSizeClass). of is only compared with a Spec's
// first byte and length (specKey); key is read back capped at its length.
type knownShape struct {
	of, key       *byte
	ofLen, keyLen uint32
}

// shapeOf is the knownShape of key for the text of: none (zero) when key
// is nil, or either is longer than a knownShape holds.
func shapeOf(of, key []byte) knownShape {
	if key == nil || len(of) > math.MaxUint32 || len(key) > math.MaxUint32 {
		return knownShape{}
	}
	return knownShape{of: unsafe.SliceData(of), key: unsafe.SliceData(key), ofLen: uint32(len(of)), keyLen: uint32(len(key))}
}

// specKey returns the shape key of raw.Spec that the read which decoded raw
// computed (Store.getRaw), or nil. It holds only for the very bytes it was
// computed from: a copy of raw whose Spec was replaced (the next value of a
// write) has none, so that no key outlives the text it describes.
func (raw *rawObject) specKey() []byte {
	k := &raw.shape
	if k.key == nil || int(k.ofLen) != len(raw.Spec) || k.ofLen == 0 || k.of != unsafe.SliceData(raw.Spec) {
		return nil
	}
	return unsafe.Slice(k.key, k.keyLen)
}

// legacyMetaKey is the key under which values written before the metadata
// key was renamed hold Meta. Every decoder reads it as it reads "metadata"
// (stored data keeps working); encoders write "metadata" only, so an old
// value takes the new form on its next write.
const legacyMetaKey = "meta"

// The decoders read a value into the object the embedded pointer points at
// and, in the same pass, Meta from the legacy key too: Legacy points at the
// same Meta.
type (
	legacyObject[S, T any] struct {
		*Object[S, T]
		Legacy  *Meta   `json:"meta"`
		Version *string `json:"version"`
	}
	legacyRaw struct {
		*rawObject
		Legacy *Meta `json:"meta"`
	}
)

// decodeMeta decodes the Meta and Conditions of a stored object value without
// knowing its Spec and Status types. Meta.Revision is zero: it is not part of
// the value (take it from the KV's ModRevision). A value that is not an
// encoded object gives an error wrapping ErrInvalid. The project's raw
// readers outside this package call storeaccess.DecodeMeta, which it wraps.
func decodeMeta(value []byte) (Meta, []Condition, error) {
	m, conds, err := storeaccess.DecodeMeta[Meta, Condition](value)
	if err != nil {
		return Meta{}, nil, fmt.Errorf("%w: decoding object meta: %v", ErrInvalid, err)
	}
	return m, conds, nil
}

// decodeObject decodes a stored value into a typed object whose Revision is
// the KV's ModRevision. It reads the value the fast way (decodeObjectFast,
// with like and cp) when it can, with d's strings, and with encoding/json
// alone otherwise. It returns the object with the bytes of its Spec and
// Status, when it read them the fast way, for a later call's like.
func decodeObject[S, T any](kv kv.KeyValue, d *metaDecoder, like *decodedFrom[S, T], cp copies) (decodedFrom[S, T], error) {
	obj := new(Object[S, T])
	from, ok := decodeObjectFast(kv.Value, obj, d, like, cp)
	if !ok {
		if d.otherVersion {
			// The conversion decodes into obj.
			return decodedFrom[S, T]{obj: obj}, errOtherVersion
		}
		obj = new(Object[S, T])
		var version string
		err := json.Unmarshal(kv.Value, &legacyObject[S, T]{obj, &obj.Meta, &version})
		if d.versionOf(version) != d.version {
			return decodedFrom[S, T]{}, errOtherVersion
		}
		if err != nil {
			return decodedFrom[S, T]{}, fmt.Errorf("%w: decoding %q: %v", ErrInvalid, kv.Key, err)
		}
		from = decodedFrom[S, T]{obj: obj}
	}
	obj.Meta.Revision = kv.ModRevision
	return from, nil
}

// decodeRawJSON decodes a stored value into raw with encoding/json alone.
func decodeRawJSON(value []byte, raw *rawObject) error {
	return json.Unmarshal(value, &legacyRaw{raw, &raw.Meta})
}

// decodeRaw decodes a stored value with Spec and Status left encoded.
func decodeRaw(kv kv.KeyValue, d *metaDecoder) (*rawObject, error) {
	raw := new(rawObject)
	if !decodeRawFast(kv.Value, raw, d) {
		raw = new(rawObject)
		if err := decodeRawJSON(kv.Value, raw); err != nil {
			return nil, fmt.Errorf("%w: decoding %q: %v", ErrInvalid, kv.Key, err)
		}
	}
	raw.Meta.Revision = kv.ModRevision
	return raw, nil
}

// encode returns the stored value of raw. It is byte for byte what
// json.Marshal of the equivalent Object gives, assembled from the parts so
// that already encoded Spec and Status are not encoded again, and Meta and
// Conditions are written by appendMeta and appendConditions (encoding/json's
// reflection was most of the cost of a write's encoding) unless those
// decline, when encoding/json writes them.
//
// The value is assembled in a pooled buffer and returned in one allocation
// of its exact length (its capacity; made and copied, which the compiler
// makes one unzeroed allocation, where an append to nil went through
// growslice and rounded the capacity up): a Backend keeps it for as long as it is the stored
// value (memstore without a copy, see kv.Write.Owned), and a buffer sized
// by the hint held ~20% of slack (704 bytes for a 575-byte value).
func (raw *rawObject) encode() ([]byte, error) {
	val, _, err := raw.encodeOver(nil)
	return val, err
}

// encodeOver is encode for a write of raw computed from cur (nil: none),
// which copies the text of cur's metadata up to its last write from the
// value cur was read from or written as where raw's are the same (see
// storedHead), rather than writing it again. It also returns the length
// of that text in the value (0 when the value has no such head, see
// storedHead), for the caller to give raw the head of its own value.
//
// A value whose length lengthOver tells is appended to an allocation of
// that length, with no pooled buffer and no copy; should the length be
// another (a string left to encoding/json), it is copied to one of its
// own, so that the value always has its exact length.
func (raw *rawObject) encodeOver(cur *rawObject) ([]byte, int, error) {
	text := raw.headOver(cur)
	if n := raw.lengthOver(text); n > 0 {
		b, head, err := raw.appendSized(make([]byte, 0, n), text, n)
		if err != nil {
			return nil, 0, err
		}
		if len(b) != cap(b) {
			b = append(make([]byte, 0, len(b)), b...)
		}
		return b, head, nil
	}
	bp := encodeBuffers.Get().(*[]byte)
	b, head, err := raw.appendTo((*bp)[:0], text)
	var out []byte
	if err == nil {
		out = make([]byte, len(b)) // with the copy, one makeslicecopy (see encode)
		copy(out, b)
	}
	if cap(b) <= maxPooledEncode {
		*bp = b[:0]
		encodeBuffers.Put(bp)
	}
	return out, head, err
}

// encodeBuffers are encode's scratch buffers; one over maxPooledEncode is
// dropped, not pooled.
var encodeBuffers = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledEncode = 64 << 10

// headOver returns the head of cur's value when it is raw's (see
// storedHead), for raw's value to copy; nil for none.
func (raw *rawObject) headOver(cur *rawObject) []byte {
	if raw.Version != "" {
		return nil // a versioned value starts with its version
	}
	return cur.headFor(&raw.Meta)
}

// lengthOver is the length of raw's value with text for its head
// (headOver), when appendTo writes the rest as it is, plain strings and
// nothing left to encoding/json, and there is no part whose length is
// known only once written (conditions, preserved fields); else 0, as for
// no text.
func (raw *rawObject) lengthOver(text []byte) int {
	if text == nil || len(raw.Conditions) > 0 || len(raw.Preserved) > 0 {
		return 0
	}
	m := &raw.Meta
	n := len(text) + len(`,"lastWrite":{"manager":"","op":""}`) + len(m.LastWrite.Manager) + len(m.LastWrite.Op)
	if m.LastWrite.Trace != "" {
		n += len(`,"trace":""`) + len(m.LastWrite.Trace)
	}
	n += len(`,"generation":`) + decimalLen(m.Generation)
	if m.StatusGeneration != 0 {
		n += len(`,"statusGeneration":`) + decimalLen(m.StatusGeneration)
	}
	return n + len(`}`) + len(`,"spec":`) + len(orNull(raw.Spec)) + len(`,"status":`) + len(orNull(raw.Status)) + len(`}`)
}

// decimalLen is the length of strconv.AppendInt's text of v in base 10.
func decimalLen(v int64) int {
	n, u := 1, uint64(v)
	if v < 0 {
		n, u = 2, -u
	}
	for ; u >= 10; u /= 10 {
		n++
	}
	return n
}

// appendTo appends the stored value of raw to b (see encodeOver), with
// text for its head, the head of the value raw was computed from
// (headOver; nil for none), and reports the length of its head (0 for
// none: see storedHead).
func (raw *rawObject) appendTo(b, text []byte) ([]byte, int, error) {
	return raw.appendSized(b, text, raw.sizeHint(text))
}

// sizeHint is about the length of raw's value with text for its head
// (see appendTo), its length when lengthOver tells it. The metadata are
// rarely more than a few hundred bytes: one growth at most, with an empty
// buffer. A head copied is its length, and what follows it the last
// write's and the generations' (metaSizeHint's loops over the records and
// the maps were a tenth of appendTo).
func (raw *rawObject) sizeHint(text []byte) int {
	if n := raw.lengthOver(text); n > 0 {
		return n
	}
	meta := len(text) + 96 + len(raw.Meta.LastWrite.Manager) + len(raw.Meta.LastWrite.Trace)
	if text == nil {
		meta = metaSizeHint(&raw.Meta)
	}
	return len(raw.Version) + len(orNull(raw.Spec)) + len(orNull(raw.Status)) + len(raw.Preserved) + meta + 192*len(raw.Conditions) + 80
}

// appendSized is appendTo growing b for hint bytes first.
func (raw *rawObject) appendSized(b, text []byte, hint int) ([]byte, int, error) {
	spec, status := orNull(raw.Spec), orNull(raw.Status)
	b = slices.Grow(b, hint)
	start, head := len(b), 0
	ok := true
	if raw.Version != "" {
		b, ok = appendMetaHead(appendVersionOpen(b, raw.Version), &raw.Meta)
	} else if text != nil {
		b = append(b, text...)
		head = len(b) - start
	} else {
		b, ok = appendMetaHead(append(b, `{"metadata":`...), &raw.Meta)
		head = len(b) - start
	}
	if ok {
		b, ok = appendMetaTail(b, &raw.Meta)
	}
	if !ok {
		var err error
		if b, err = raw.appendMetaJSON(b[:start]); err != nil {
			return nil, 0, err
		}
		head = 0
	}
	b = append(append(b, `,"spec":`...), spec...)
	b = append(append(b, `,"status":`...), status...)
	if len(raw.Conditions) > 0 || len(raw.Preserved) > 0 {
		var err error
		if b, err = raw.appendRest(b); err != nil {
			return nil, 0, err
		}
	}
	return append(b, '}'), head, nil
}

// appendVersionOpen appends the opening of the value of an object at
// version (a name that needs no escaping: NewVersions checks it), up to its
// metadata. Apart from appendTo, which most Stores run without a version,
// so that its code is not theirs, as for appendMetaJSON and appendRest.
//
//go:noinline
func appendVersionOpen(b []byte, version string) []byte {
	return append(append(append(b, `{"version":"`...), version...), `","metadata":`...)
}

// appendMetaJSON appends the opening of raw's value and its metadata as
// encoding/json writes them, for metadata appendMeta leaves to it.
//
//go:noinline
func (raw *rawObject) appendMetaJSON(b []byte) ([]byte, error) {
	if raw.Version != "" {
		b = appendVersionOpen(b, raw.Version)
	} else {
		b = append(b, `{"metadata":`...)
	}
	meta, err := marshalMeta(raw.Meta)
	if err != nil {
		return nil, err
	}
	return append(b, meta...), nil
}

// appendRest appends the conditions and the preserved fields of raw's
// value, those it has.
//
//go:noinline
func (raw *rawObject) appendRest(b []byte) ([]byte, error) {
	if len(raw.Conditions) > 0 {
		b = append(b, `,"conditions":`...)
		if out, ok := appendConditions(b, raw.Conditions); ok {
			b = out
		} else {
			conds, err := json.Marshal(raw.Conditions)
			if err != nil {
				return nil, fmt.Errorf("%w: encoding conditions: %v", ErrInvalid, err)
			}
			b = append(b, conds...)
		}
	}
	if len(raw.Preserved) > 0 {
		b = append(append(b, `,"preserved":`...), raw.Preserved...)
	}
	return b, nil
}

// marshalMeta is encoding/json's encoding of m, for metadata appendMeta
// leaves to it. It takes a copy: passing &raw.Meta to json.Marshal made
// every rawObject that appendTo encodes escape, the next value a write
// computes on its stack (Writer.update's next := *cur) included.
//
//go:noinline
func marshalMeta(m Meta) ([]byte, error) {
	b, err := json.Marshal(&m)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding meta: %v", ErrInvalid, err)
	}
	return b, nil
}

// metaSizeHint is about the length of m encoded.
func metaSizeHint(m *Meta) int {
	n := 160 + len(m.Kind) + len(m.Name) + len(m.UID) + len(m.LastWrite.Manager) + len(m.LastWrite.Trace)
	for _, e := range m.Managed {
		n += 60 + len(e.Manager) + len(e.Fields)
	}
	for k, v := range m.Labels {
		n += 6 + len(k) + len(v)
	}
	for k, v := range m.Annotations {
		n += 6 + len(k) + len(v)
	}
	return n + 64*len(m.Owners) + 16*len(m.Finalizers)
}

// appendMeta appends m as json.Marshal encodes it, or reports false
// (having appended something) for what it leaves to encoding/json: a
// string that encoding/json would escape.
//
// Not shared with appendSpecDoc (managed_codecs.go) by design: this writes
// the stored bytes of every field, map keys sorted, as encoding/json would;
// that writes only the spec side's ownership paths, leaves null, in any order.
func appendMeta(b []byte, m *Meta) ([]byte, bool) {
	b, ok := appendMetaHead(b, m)
	if !ok {
		return b, false
	}
	return appendMetaTail(b, m)
}

// appendPlain appends s as a JSON string if it needs no escaping (see
// plainJSONString); else it appends nothing and clears *ok, and the caller
// encodes the value the general way. It is not inlined: the metadata's
// dozen strings were each an inlined copy of it in appendMetaHead (5.9 KB
// of code, the most instruction-cache misses of the write path's
// functions), now a call; the members' names before them stay inlined
// appends of constants, a few stores each.
//
//go:noinline
func appendPlain(b []byte, s string, ok *bool) []byte {
	if !plainJSONString(s) {
		*ok = false
		return b
	}
	return append(append(append(b, '"'), s...), '"')
}

// appendMetaHead appends what appendMeta writes before the last write:
// from the opening brace to the ownership records (see storedHead).
func appendMetaHead(b []byte, m *Meta) ([]byte, bool) {
	ok := true
	b = appendMetaIdentity(b, m, &ok)
	if len(m.Managed) > 0 {
		b = appendManaged(append(b, `,"managed":`...), m.Managed, &ok)
	}
	return b, ok
}

// appendMetaIdentity is appendMetaHead's part before the ownership
// records: from the opening brace to the lifecycle (see
// appendMetaLifecycle). It clears *ok for a string that needs escaping.
func appendMetaIdentity(b []byte, m *Meta, ok *bool) []byte {
	b = appendPlain(append(b, `{"kind":`...), m.Kind, ok)
	b = appendPlain(append(b, `,"name":`...), m.Name, ok)
	return appendMetaIdentityRest(b, m, ok)
}

// appendMetaIdentityRest is appendMetaIdentity's part after the kind and
// the name: from the UID on.
func appendMetaIdentityRest(b []byte, m *Meta, ok *bool) []byte {
	b = appendPlain(append(b, `,"uid":`...), m.UID, ok)
	var plain bool
	b, plain = appendStringMap(b, `,"labels":{`, m.Labels)
	*ok = *ok && plain
	b, plain = appendStringMap(b, `,"annotations":{`, m.Annotations)
	*ok = *ok && plain
	if len(m.Owners) > 0 || len(m.Finalizers) > 0 || m.DeletionRequested {
		b = appendMetaLifecycle(b, m, ok)
	}
	return b
}

// appendManaged appends the ownership records list, the value of the
// metadata's "managed" member (not empty: appendMetaHead leaves an empty
// one out). It clears *ok for a string that needs escaping.
func appendManaged(b []byte, list []ManagedFields, ok *bool) []byte {
	b = append(b, '[')
	for i, e := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendPlain(append(b, `{"manager":`...), e.Manager, ok)
		b = appendPlain(append(b, `,"operation":`...), e.Operation, ok)
		if e.Subresource != "" {
			b = appendPlain(append(b, `,"subresource":`...), e.Subresource, ok)
		}
		b = append(appendPlain(append(b, `,"fields":`...), e.Fields, ok), '}')
	}
	return append(b, ']')
}

// appendMetaLifecycle is appendMetaHead's part for the owners, the
// finalizers and a requested deletion, which most objects do not have:
// apart, it is not code of every write's path.
//
//go:noinline
func appendMetaLifecycle(b []byte, m *Meta, ok *bool) []byte {
	if len(m.Owners) > 0 {
		b = append(b, `,"owners":[`...)
		for i, o := range m.Owners {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendPlain(append(b, `{"kind":`...), o.Kind, ok)
			b = appendPlain(append(b, `,"name":`...), o.Name, ok)
			b = appendPlain(append(b, `,"uid":`...), o.UID, ok)
			if o.Controller {
				b = append(b, `,"controller":true`...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(m.Finalizers) > 0 {
		b = append(b, `,"finalizers":[`...)
		for i, f := range m.Finalizers {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendPlain(b, f, ok)
		}
		b = append(b, ']')
	}
	if m.DeletionRequested {
		b = append(b, `,"deletionRequested":true`...)
	}
	return b
}

// appendMetaTail appends the rest of what appendMeta writes, from the
// last write on.
func appendMetaTail(b []byte, m *Meta) ([]byte, bool) {
	ok := true
	b = appendLastWrite(append(b, `,"lastWrite":`...), &m.LastWrite, &ok)
	return appendMetaEnd(b, m), ok
}

// appendLastWrite appends w, the value of the metadata's "lastWrite"
// member. It clears *ok for a string that needs escaping, having appended
// nothing when it is the manager or the operation. Those two, which every
// write stamps, are written in one run of appends around one check each,
// not two appendPlain calls (their calls and quotes were most of the
// cost of the few bytes they write).
func appendLastWrite(b []byte, w *LastWrite, ok *bool) []byte {
	if !plainJSONString(w.Manager) || !plainJSONString(string(w.Op)) {
		*ok = false
		return b
	}
	b = append(append(b, `{"manager":"`...), w.Manager...)
	b = append(append(append(b, `","op":"`...), w.Op...), '"')
	if w.Trace != "" {
		b = appendPlain(append(b, `,"trace":`...), w.Trace, ok)
	}
	return append(b, '}')
}

// appendMetaEnd appends what appendMeta writes after the last write: the
// generations and the closing brace.
func appendMetaEnd(b []byte, m *Meta) []byte {
	b = strconv.AppendInt(append(b, `,"generation":`...), m.Generation, 10)
	if m.StatusGeneration != 0 {
		b = strconv.AppendInt(append(b, `,"statusGeneration":`...), m.StatusGeneration, 10)
	}
	return append(b, '}')
}

// appendStringMap appends m, if it has entries, as the member that name
// opens, keys sorted as encoding/json orders them, or reports false for a
// string encoding/json would escape (as appendMeta does).
func appendStringMap(b []byte, name string, m map[string]string) ([]byte, bool) {
	if len(m) == 0 {
		return b, true
	}
	b = append(b, name...)
	var arr [16]string
	keys := arr[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	ok := true
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		v := m[k]
		if !plainJSONString(k) || !plainJSONString(v) {
			ok = false
			continue
		}
		b = append(append(append(append(append(b, '"'), k...), `":"`...), v...), '"')
	}
	return append(b, '}'), ok
}

// appendConditions appends conds as json.Marshal encodes them, or reports
// false (having appended something) for what it leaves to encoding/json: a
// string that encoding/json would escape, a time it cannot encode.
func appendConditions(b []byte, conds []Condition) ([]byte, bool) {
	ok := true
	str := func(b []byte, s string) []byte { return appendPlain(b, s, &ok) }
	b = append(b, '[')
	for i, c := range conds {
		if i > 0 {
			b = append(b, ',')
		}
		b = str(append(b, `{"type":`...), c.Type)
		b = str(append(b, `,"status":`...), string(c.Status))
		if c.Reason != "" {
			b = str(append(b, `,"reason":`...), c.Reason)
		}
		if c.Message != "" {
			b = str(append(b, `,"message":`...), c.Message)
		}
		// What encoding/json writes for a time.Time: its MarshalJSON,
		// which is compact and has nothing to escape.
		t, err := c.LastTransitionTime.MarshalJSON()
		if err != nil {
			return b, false
		}
		b = append(append(b, `,"lastTransitionTime":`...), t...)
		if c.ObservedGeneration != 0 {
			b = strconv.AppendInt(append(b, `,"observedGeneration":`...), c.ObservedGeneration, 10)
		}
		b = append(b, '}')
	}
	return append(b, ']'), ok
}

// plainJSONString reports whether encoding/json writes s as it is between
// quotes: printable ASCII, none of which it escapes (it escapes <, > and &
// for HTML).
//
// It reads eight bytes at a time (it was a tenth of encoding an object's
// metadata a byte at a time): in a word x, (v - 1 per byte) & ^v & 0x80
// per byte is nonzero exactly when some byte of v is 0, and (x - n per
// byte) & ^x & 0x80 per byte exactly when some byte of x is below n
// (n <= 0x80); a byte of x equal to c is a 0 in x ^ c per byte (see
// plainJSONWord). The bytes
// after the last whole word are read in the word that ends the string, and
// a string shorter than a word a byte at a time, through a table (a byte
// loop over the comparisons was half of its cost).
func plainJSONString(s string) bool {
	// Words are loaded whole (binary.LittleEndian: one load each, where
	// a word assembled from its bytes was eight), and a string of 4 to 7
	// bytes is one word of two overlapping halves: a byte read twice was
	// checked twice.
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	switch {
	case len(b) >= 8:
		for i := 0; i+8 <= len(b); i += 8 {
			if !plainJSONWord(binary.LittleEndian.Uint64(b[i:])) {
				return false
			}
		}
		// The last bytes, in a word that ends the string: bytes it reads
		// again were plain.
		return len(b)%8 == 0 || plainJSONWord(binary.LittleEndian.Uint64(b[len(b)-8:]))
	case len(b) >= 4:
		return plainJSONWord(uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[len(b)-4:]))<<32)
	}
	for _, c := range b {
		if !plainJSONByte[c] {
			return false
		}
	}
	return true
}

// plainJSONWord reports whether each byte of the word x is plain (see
// plainJSONString). A byte is 0x7f or above when it or it plus 1 has its
// high bit set (adding 1 to each byte carries into the next only from a
// byte whose high bit is set); < and > are the bytes that are 0x3e once
// bit 1 is set, quote and & those that are 0x26 once bit 2 is.
func plainJSONWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	control := (x - 0x20*ones) &^ x
	high := x | (x + ones)
	backslash := x ^ '\\'*ones
	angle := (x | 0x02*ones) ^ '>'*ones
	quoteAmp := (x | 0x04*ones) ^ '&'*ones
	zeros := (backslash-ones)&^backslash | (angle-ones)&^angle | (quoteAmp-ones)&^quoteAmp
	return (control|high|zeros)&highs == 0
}

// plainJSONByte holds, for each byte, whether plainJSONString allows it.
var plainJSONByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// catchEncode, deferred, turns a panic of the user's encoding code into
// *err, an ErrInvalid naming what was encoded.
func catchEncode(what string, err *error) {
	if v := recover(); v != nil {
		*err = fmt.Errorf("%w: encoding %s: %w", ErrInvalid, what, &guard.Panic{Value: v, Stack: debug.Stack()})
	}
}

func orNull(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}

// encodeJSON encodes a Spec or Status value, reporting failures as
// ErrInvalid, a panic of the value's own MarshalJSON included, and a value
// nested too deep to store (see maxJSONDepth): a write, maybe on a Loop's
// worker, fails rather than crashes.
func encodeJSON(what string, v any) (b []byte, err error) {
	if b, ok := encodeSide(v); ok {
		return b, nil // no code of the user's ran
	}
	if err := checkJSONDepth("the value", reflect.ValueOf(v), 1); err != nil {
		return nil, fmt.Errorf("%w: encoding %s: %v", ErrInvalid, what, err)
	}
	defer catchEncode(what, &err)
	b, err = json.Marshal(addressable(v))
	if err != nil {
		return nil, fmt.Errorf("%w: encoding %s: %v", ErrInvalid, what, err)
	}
	return b, nil
}

// encodeJSONAt is encodeJSON of *v. A V that a sideEncoder encodes is read
// where it is: boxing a copy of it in an interface to call encodeJSON was an
// allocation of its size, on every Update. An interface type has no
// sideEncoder: encodeJSON encodes its dynamic value.
func encodeJSONAt[V any](what string, v *V) ([]byte, error) {
	return encodeJSONWith(what, v, sideEncoderOf(reflect.TypeFor[V]()))
}

// encodeJSONWith is encodeJSONAt with enc, the sideEncoderOf V (nil for
// none), looked up by the caller once: a Store keeps its Spec's (the
// lookup, in a sync.Map, was ~350 instructions of every Update).
func encodeJSONWith[V any](what string, v *V, enc sideEncoder) ([]byte, error) {
	if enc != nil {
		if b, ok := encodeWith(enc, reflect.ValueOf(v).Elem()); ok {
			return b, nil // no code of the user's ran
		}
	}
	return encodeJSON(what, *v)
}

// addressable returns a pointer to a copy of v, so that encoding/json
// calls the MarshalJSON and MarshalText methods with pointer receivers of
// v and its fields, as it does for the fields of an Object encoded through
// a pointer, and as decoding calls UnmarshalJSON: a type with pointer
// receivers round-trips.
func addressable(v any) any {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Type().Implements(jsonMarshaler) {
		return v // nothing to address: its own MarshalJSON encodes it all
	}
	p := reflect.New(rv.Type())
	p.Elem().Set(rv)
	return p.Interface()
}
