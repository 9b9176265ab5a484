package store

import (
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/steady-go/steady/internal/jsonscan"
	"github.com/steady-go/steady/ownership"
)

// Judging a change decodes the ownership record of both states of the
// object (FieldChanges), and the Codec it decodes with depends only on the
// side's shape: which fields, map keys and list items exist. A controller's
// objects mostly share one shape per side (a status of the same fields, a
// spec whose lists and maps differ from object to object is the exception),
// so the Store keeps the Codecs of the shapes it last decoded with, keyed by
// a text of the shape read from the side's JSON without building its tree.
// Equal keys mean trees of equal shape, hence equal Codecs; a shape the key
// cannot tell (a key with escapes) is decoded the general way. The records
// repeat too (one manager owns the same fields of every object), so the
// Store also keeps the sets a remembered Codec decoded, by their text: Sets
// are immutable and may be shared. Writes use the same Codecs, for the
// record they merge into and the one they encode: a controller's status
// apply to one object after another decodes and encodes against one shape.

// maxCodecs bounds the shapes a Store remembers; when full, it forgets them
// all (one controller's objects use few).
const maxCodecs = 64

// maxDecodedSets bounds the decoded sets a Store remembers, likewise.
const maxDecodedSets = 256

// codecCache holds the Codecs of recently decoded shapes. It is safe for
// concurrent use; a nil cache remembers nothing.
type codecCache struct {
	mu     sync.Mutex
	codecs map[string]*ownership.Codec
	sets   map[decodedKey]*ownership.Set
	// fields holds the texts of first status applies' sets, by Codec and
	// the status fields applied (see statusFields).
	fields map[*ownership.Codec]map[string]string
	// kept is the last write keepManaged kept the record of (see keptWrite).
	kept atomic.Pointer[keptWrite]
	// keptSeen is the hash of the inputs of the last write keep was
	// given (see keep).
	keptSeen atomic.Uint64
}

type decodedKey struct {
	codec *ownership.Codec
	text  string
}

// decodeNodes is codec.DecodeNodes(text), remembered when it succeeds.
func (c *codecCache) decodeNodes(codec *ownership.Codec, text string) (*ownership.Set, bool) {
	if c == nil {
		return codec.DecodeNodes(text)
	}
	key := decodedKey{codec, text}
	c.mu.Lock()
	set, ok := c.sets[key]
	c.mu.Unlock()
	if ok {
		return set, true
	}
	if set, ok = codec.DecodeNodes(text); !ok {
		return set, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.sets) >= maxDecodedSets {
		clear(c.sets)
	}
	if c.sets == nil {
		c.sets = map[decodedKey]*ownership.Set{}
	}
	c.sets[key] = set
	return set, true
}

func (c *codecCache) get(key []byte) *ownership.Codec {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.codecs[string(key)]
}

func (c *codecCache) put(key []byte, codec *ownership.Codec) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.codecs) >= maxCodecs {
		clear(c.codecs)
	}
	if c.codecs == nil {
		c.codecs = map[string]*ownership.Codec{}
	}
	c.codecs[string(key)] = codec
}

// sideShapeKey appends to buf the key of the shape of one side of raw, or
// reports false when it has none (see the comment at the top of the file).
// The key is the side, the shape key of its JSON (jsonscan.AppendShapeKey)
// and the shape of the rest of the side's tree: the conditions' or the
// metadata's.
func sideShapeKey(buf []byte, raw *rawObject, side string) ([]byte, bool) {
	var ok bool
	if side == statusSide {
		buf = append(buf, 's')
		if buf, ok = jsonscan.AppendShapeKey(buf, orNull(raw.Status)); !ok {
			return buf, false
		}
		return appendConditionsShape(buf, raw.Conditions)
	}
	mark := len(buf)
	if buf, ok = jsonscan.AppendShapeKey(append(buf, 'p'), orNull(raw.Spec)); !ok {
		return buf[:mark], false
	}
	return appendMetaShape(buf, &raw.Meta), true
}

// specShapeKey is sideShapeKey of the spec side of an object of metadata m
// whose spec's shape key (jsonscan.AppendShapeKey) is spec.
func specShapeKey(buf, spec []byte, m *Meta) []byte {
	return appendMetaShape(append(append(buf, 'p'), spec...), m)
}

// appendConditionsShape appends to buf, after a 0, a key of the shape of
// the conditions' part of the status-side tree: each condition's type (its
// identity in the list, keyed by type) and which of the fields encoding/json
// may leave out it has. Values are leaves, which a Codec does not read, so
// a condition's message, time or generation changing leaves the key as it
// is. It appends nothing for no conditions, and reports false for a time
// encoding/json cannot encode (as statusTreeOf would fail).
func appendConditionsShape(buf []byte, conds []Condition) ([]byte, bool) {
	if len(conds) == 0 {
		return buf, true
	}
	buf = binary.AppendUvarint(append(buf, 0, 'c'), uint64(len(conds)))
	if !conditionsKeyed(conds) {
		return buf, false
	}
	for _, c := range conds {
		set := byte('0')
		if c.Reason != "" {
			set |= 1
		}
		if c.Message != "" {
			set |= 2
		}
		if c.ObservedGeneration != 0 {
			set |= 4
		}
		buf = append(binary.AppendUvarint(buf, uint64(len(c.Type))), c.Type...)
		buf = append(buf, set)
	}
	return buf, true
}

// conditionsKeyed reports whether appendConditionsShape keys conds: each
// time is one encoding/json can encode.
func conditionsKeyed(conds []Condition) bool {
	for _, c := range conds {
		if y := c.LastTransitionTime.Year(); y < 0 || y > 9999 {
			return false
		}
	}
	return true
}

// hasMetaShape reports whether m has a part of the spec-side tree's
// shape, for appendMetaShape to append: labels, annotations, owners or
// finalizers.
func hasMetaShape(m *Meta) bool {
	return len(m.Labels)|len(m.Annotations)|len(m.Owners)|len(m.Finalizers) != 0
}

// appendMetaShape appends to buf, after a 0, a key of the shape of m's
// part of the spec-side tree (metaTree(m, true)): the label and annotation
// keys, sorted, and the owners and finalizers in full. Each part is a tag,
// a count and its strings, each string its length and bytes, so no two
// keys run together. It appends nothing when m has none of them. Unlike
// encoding metaTree, it allocates nothing for up to 32 labels and 32
// annotations.
func appendMetaShape(buf []byte, m *Meta) []byte {
	if !hasMetaShape(m) {
		return buf
	}
	buf = append(buf, 0)
	str := func(buf []byte, s string) []byte {
		return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
	}
	var arr [32]string
	for _, kv := range [...]struct {
		tag byte
		m   map[string]string
	}{{'l', m.Labels}, {'a', m.Annotations}} {
		if len(kv.m) == 0 {
			continue
		}
		keys := arr[:0]
		for k := range kv.m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf = binary.AppendUvarint(append(buf, kv.tag), uint64(len(keys)))
		for _, k := range keys {
			buf = str(buf, k)
		}
	}
	if len(m.Owners) > 0 {
		buf = binary.AppendUvarint(append(buf, 'o'), uint64(len(m.Owners)))
		for _, o := range m.Owners {
			buf = str(str(str(buf, o.Kind), o.Name), o.UID)
			c := byte('0')
			if o.Controller {
				c = '1'
			}
			buf = append(buf, c)
		}
	}
	if len(m.Finalizers) > 0 {
		buf = binary.AppendUvarint(append(buf, 'f'), uint64(len(m.Finalizers)))
		for _, f := range m.Finalizers {
			buf = str(buf, f)
		}
	}
	return buf
}

// codecOf returns the Codec of one side of raw, remembered by shape. tree,
// when not nil, is that side's tree (or its shape), which a shape not
// remembered is read from; else it is decoded from raw.
func (sc schemas) codecOf(raw *rawObject, side string, tree map[string]any) (*ownership.Codec, error) {
	var arr [256]byte
	key, keyed := codecKey(arr[:0], raw, side)
	return sc.codecByKey(raw, side, tree, key, keyed)
}

// codecKey appends to buf the key codecOf remembers the Codec of one side
// of raw by, or reports false when the side has none (sideShapeKey).
func codecKey(buf []byte, raw *rawObject, side string) ([]byte, bool) {
	if k := raw.specKey(); k != nil && side != statusSide {
		return specShapeKey(buf, k, &raw.Meta), true
	}
	return sideShapeKey(buf, raw, side)
}

// codecByKey is codecOf for a caller that computed the side's key
// (codecKey) already.
func (sc schemas) codecByKey(raw *rawObject, side string, tree map[string]any, key []byte, keyed bool) (*ownership.Codec, error) {
	if keyed {
		if c := sc.codecs.get(key); c != nil {
			return c, nil
		}
	}
	var c *ownership.Codec
	if tree != nil {
		c = ownership.NewCodec(tree, sc.of(side))
	} else {
		var err error
		if c, err = sideCodec(raw, side, sc.of(side)); err != nil {
			return nil, err
		}
	}
	if keyed {
		sc.codecs.put(key, c)
	}
	return c, nil
}

// decodeManagedOf is decodeManaged for the stored raw, with the Codec and
// the decoded sets remembered by shape and text: a controller's writes
// decode the same record against the same shape object after object.
func (sc schemas) decodeManagedOf(raw *rawObject, side string, tree map[string]any) ownership.Managed {
	d, _ := sc.decodeSideOf(raw, side, tree)
	return d.managed
}

// decodeSideOf is decodeManagedOf with the decoded side whole, and the
// Codec it decoded with (nil when the side has no entries).
func (sc schemas) decodeSideOf(raw *rawObject, side string, tree map[string]any) (decodedSide, *ownership.Codec) {
	var codec *ownership.Codec
	d, _ := sc.decodeSideWith(&raw.Meta, side, func() (c *ownership.Codec, err error) {
		c, err = sc.codecOf(raw, side, tree)
		codec = c
		return c, err
	}, sc.codecs.decodeNodes)
	return d, codec
}

// setManagedOver is setManagedOf for next written over cur, whose side
// decoded to dec with curCodec (decodeSideOf). When managed is dec's
// record, dec is canonical and next's side has cur's shape (the same
// remembered Codec), encoding managed would give cur's record again (as in
// keepManaged), so next keeps cur's record as stored: a controller's
// status apply of new values to the fields it owns encodes nothing. kept
// reports that case, in which dec is next's side too, as decodeSide gives
// it against next's shape (the same Codec, the same record).
func (sc schemas) setManagedOver(cur, next *rawObject, side string, managed ownership.Managed, dec decodedSide, curCodec *ownership.Codec) (kept bool, err error) {
	if len(managed) == 0 {
		sc.setManagedWith(&next.Meta, side, nil, nil)
		return false, nil
	}
	codec, err := sc.codecOf(next, side, nil)
	if err != nil {
		return false, err
	}
	if codec == curCodec && dec.canonical && managed.Equal(dec.managed) {
		next.Meta.Managed = cur.Meta.Managed
		return true, nil
	}
	sc.setManagedWith(&next.Meta, side, managed, codec)
	return false, nil
}

// setManagedOf is setManaged for next, the object about to be stored, with
// its side's Codec remembered by shape: tree (that side's tree, or nil) is
// read only for a shape not remembered.
func (sc schemas) setManagedOf(next *rawObject, side string, managed ownership.Managed, tree map[string]any) error {
	var codec *ownership.Codec
	if len(managed) > 0 {
		var err error
		if codec, err = sc.codecOf(next, side, tree); err != nil {
			return err
		}
	}
	sc.setManagedWith(&next.Meta, side, managed, codec)
	return nil
}

// sideCodec returns the Codec of one side of raw, read from the side's
// JSON (ownership.NewCodecJSON) without building the side's tree: the
// spec, or the status, with the rest of that side's tree (the metadata's
// part, or the conditions) written around it. Where that text would not
// say what the tree holds (a string that is not plain ASCII), or does not
// decode, the Codec is made from the tree, which decodes it or says why not.
func sideCodec(raw *rawObject, side string, schema *ownership.Schema) (*ownership.Codec, error) {
	var doc []byte
	ok := false
	if side == statusSide {
		doc = make([]byte, 0, len(raw.Status)+64*len(raw.Conditions)+32)
		doc, ok = appendStatusDoc(doc, raw)
	} else {
		doc = make([]byte, 0, len(raw.Spec)+256)
		doc, ok = appendSpecDoc(doc, raw)
	}
	if ok {
		if c, err := ownership.NewCodecJSON(doc, schema); err == nil {
			return c, nil
		}
	}
	tree, err := sideTreeOf(raw, side, true)
	if err != nil {
		return nil, err
	}
	return ownership.NewCodec(tree, schema), nil
}

// appendSpecDoc appends the spec-side document of raw, in the shape
// specTreeOf gives it: {"metadata":{labels, annotations, owners,
// finalizers},"spec":...}, values that are leaves of the tree null. It
// reports false for a string that is not plain ASCII.
//
// Not shared with appendMeta (codec.go) by design: this document names only
// the paths ownership tracks, leaves null, keys unsorted, never stored; that
// one is the stored metadata byte for byte as encoding/json writes it.
func appendSpecDoc(doc []byte, raw *rawObject) ([]byte, bool) {
	m := &raw.Meta
	doc = append(doc, '{')
	if len(m.Labels) > 0 || len(m.Annotations) > 0 || len(m.Owners) > 0 || len(m.Finalizers) > 0 {
		doc = append(doc, `"metadata":{`...)
		ok := true
		for _, kv := range [...]struct {
			name string
			m    map[string]string
		}{{"labels", m.Labels}, {"annotations", m.Annotations}} {
			if len(kv.m) == 0 {
				continue
			}
			doc = append(append(append(doc, '"'), kv.name...), `":{`...)
			for k := range kv.m {
				doc, ok = appendPlainString(doc, k, ok)
				doc = append(doc, ":null,"...)
			}
			doc[len(doc)-1] = '}'
			doc = append(doc, ',')
		}
		if len(m.Owners) > 0 {
			doc = append(doc, `"owners":[`...)
			for _, o := range m.Owners {
				doc = append(doc, `{"kind":`...)
				doc, ok = appendPlainString(doc, o.Kind, ok)
				doc = append(doc, `,"name":`...)
				doc, ok = appendPlainString(doc, o.Name, ok)
				doc = append(doc, `,"uid":`...)
				doc, ok = appendPlainString(doc, o.UID, ok)
				if o.Controller {
					doc = append(doc, `,"controller":true`...)
				}
				doc = append(doc, "},"...)
			}
			doc[len(doc)-1] = ']'
			doc = append(doc, ',')
		}
		if len(m.Finalizers) > 0 {
			doc = append(doc, `"finalizers":[`...)
			for _, f := range m.Finalizers {
				doc, ok = appendPlainString(doc, f, ok)
				doc = append(doc, ',')
			}
			doc[len(doc)-1] = ']'
			doc = append(doc, ',')
		}
		doc[len(doc)-1] = '}'
		doc = append(doc, ',')
		if !ok {
			return doc, false
		}
	}
	doc = append(append(doc, `"spec":`...), orNull(raw.Spec)...)
	return append(doc, '}'), true
}

// appendStatusDoc appends the status-side document of raw, in the shape
// statusTreeOf gives it: {"conditions":[...],"status":...}, each
// condition's fields but its type null. It reports false for a type that
// is not plain ASCII and for a time that does not encode.
func appendStatusDoc(doc []byte, raw *rawObject) ([]byte, bool) {
	doc = append(doc, '{')
	ok := true
	if len(raw.Conditions) > 0 {
		doc = append(doc, `"conditions":[`...)
		for _, c := range raw.Conditions {
			if y := c.LastTransitionTime.Year(); y < 0 || y > 9999 {
				return doc, false
			}
			doc = append(doc, `{"type":`...)
			doc, ok = appendPlainString(doc, c.Type, ok)
			doc = append(doc, `,"status":null,"lastTransitionTime":null`...)
			if c.Reason != "" {
				doc = append(doc, `,"reason":null`...)
			}
			if c.Message != "" {
				doc = append(doc, `,"message":null`...)
			}
			if c.ObservedGeneration != 0 {
				doc = append(doc, `,"observedGeneration":null`...)
			}
			doc = append(doc, "},"...)
		}
		doc[len(doc)-1] = ']'
		doc = append(doc, ',')
	}
	doc = append(append(doc, `"status":`...), orNull(raw.Status)...)
	return append(doc, '}'), ok
}

// appendPlainString appends s quoted, and ok and whether s is plain:
// printable ASCII without a quote or a backslash, so that its JSON is s
// between quotes.
func appendPlainString(doc []byte, s string, ok bool) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			ok = false
		}
	}
	return append(append(append(doc, '"'), s...), '"'), ok
}
