package store

import (
	"bytes"
	"slices"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/jsonscan"
	"github.com/steady-go/steady/ownership"
)

// A controller's first status apply to an object, before it owns anything
// there, is the status write of nearly every event once a controller has
// more objects than events (the controller benchmark at 100k and 1M
// objects). For its usual shape, a status of type T whose JSON is an
// object of a few scalar fields, applied alone over a stored status of
// scalar fields that it names all of, firstStatusApply gives the object
// mergeStatus would store, read from the two JSON texts alone: no tree is
// decoded, no merge walked.
//
// Why it is mergeStatus's object: ownership.Apply of {"status": applied}
// over the stored status side, for a manager with no entry there, sets
// every applied field to its applied value (each a scalar leaf; none is
// null), and keeps the stored fields the config does not name: here none.
// So the merged status is the applied one, which mergeStatus then stores
// as its own encoding, and the conditions are the stored ones. Apply
// conflicts with, or takes a field from, another entry only at a changed
// path where that entry has a node; the stored status's fields are
// scalars, so a node there is a member (Set.Has), and a field the stored
// status lacks has none in a canonical record (nodes of the object's own).
// So when no other entry owns an applied field, no entry loses anything,
// and the record is the stored entries, then manager's new Apply entry,
// whose set is every applied field: every status field of the new object.
// Its text depends only on the Codec of the new object's side, which is
// remembered by shape (codecOf), so the text is remembered with it.
//
// Fast path, kept by BenchmarkApplyStatusFirst;
// TestApplyStatusFirstMatchesTheMerge cross-checks it against the merge.

// maxFirstFields bounds the applied status fields firstStatusApply takes.
const maxFirstFields = 16

// firstStatusApply returns the object mergeStatus returns for manager's
// apply of status JSON applied, with no conditions, over cur, or false
// for mergeStatus to decide (see above).
func (w *Writer[S, T]) firstStatusApply(cur *rawObject, applied []byte) (*rawObject, bool, error) {
	others := 0
	for _, e := range cur.Meta.Managed {
		if e.Subresource != statusSide {
			continue
		}
		if e.Manager == w.manager {
			return nil, false, nil
		}
		others++
	}
	var arr [maxFirstFields][]byte
	keys, ok := flatFields(arr[:0], applied, nil)
	if !ok || len(keys) == 0 || w.manager == "" {
		return nil, false, nil
	}
	if _, ok := flatFields(arr[len(keys):len(keys)], orNull(cur.Status), keys); !ok {
		return nil, false, nil
	}
	sc := w.s.schemas
	var managed ownership.Managed
	if others > 0 {
		dec, _ := sc.decodeSideOf(cur, statusSide, nil)
		if !dec.canonical || len(dec.managed) != others || ownsAny(dec.managed, keys) {
			return nil, false, nil
		}
		managed = slices.Grow(dec.managed[:len(dec.managed):len(dec.managed)], 1)
	}
	var conds []Condition
	if len(cur.Conditions) > 0 {
		conds = slices.Clone(cur.Conditions)
	}
	if err := validateConditions(conds); err != nil {
		return nil, false, err
	}
	next := *cur
	next.Status, next.Conditions = applied, conds
	next.Meta.LastWrite = LastWrite{Manager: w.manager, Op: ownership.OpApplyStatus}
	next.Meta.StatusGeneration++
	codec, err := sc.codecOf(&next, statusSide, nil)
	if err != nil {
		return nil, false, err
	}
	// The record as setManagedWith writes it, the new entry last. With no
	// status-side entries, cur's are the spec side's, in order.
	entry := ManagedFields{Manager: w.manager, Operation: string(ownership.OpApply), Subresource: statusSide,
		Fields: sc.codecs.statusFields(codec, keys)}
	if others > 0 {
		sc.setManagedWith(&next.Meta, statusSide, managed, codec)
		next.Meta.Managed = append(next.Meta.Managed, entry)
	} else {
		next.Meta.Managed = append(slices.Clip(cur.Meta.Managed), entry)
	}
	return &next, true, nil
}

// flatFields appends to keys the keys of JSON object b, and reports
// whether b is an object of at most maxFirstFields fields, each a scalar
// with a plain key, none twice; with names, each key must be one of them,
// and null values are allowed.
func flatFields(keys [][]byte, b []byte, names [][]byte) ([][]byte, bool) {
	r := jsonscan.NewReader(b)
	ok := r.Object(func(key []byte) bool {
		switch r.Next() {
		case '{', '[':
			return false
		case 'n':
			if names == nil {
				return false // applies nothing: the merge's
			}
		}
		if len(keys) == maxFirstFields || slices.ContainsFunc(keys, func(k []byte) bool { return bytes.Equal(k, key) }) {
			return false
		}
		if names != nil && !slices.ContainsFunc(names, func(k []byte) bool { return bytes.Equal(k, key) }) {
			return false
		}
		keys = append(keys, key)
		_, ok := r.Raw()
		return ok
	})
	return keys, ok && r.End()
}

// ownsAny reports whether an entry owns the status field of a key.
func ownsAny(managed ownership.Managed, keys [][]byte) bool {
	p := diff.Path{{Kind: diff.FieldElem, Name: statusSide}, {Kind: diff.FieldElem}}
	for _, k := range keys {
		p[1].Name = string(k)
		for _, e := range managed {
			if e.Set.Has(p) {
				return true
			}
		}
	}
	return false
}

// statusFields returns codec's encoding of the set of the status fields
// named by keys, remembered by codec and keys: a controller's first
// applies to one object after another encode the same set against the
// same shape.
func (c *codecCache) statusFields(codec *ownership.Codec, keys [][]byte) string {
	var arr [256]byte
	id := arr[:0]
	for _, k := range keys {
		id = append(append(id, k...), 0) // keys are plain ASCII: no NUL
	}
	if c != nil {
		c.mu.Lock()
		text, ok := c.fields[codec][string(id)]
		c.mu.Unlock()
		if ok {
			return text
		}
	}
	paths := make([]diff.Path, len(keys))
	for i, k := range keys {
		paths[i] = diff.Path{{Kind: diff.FieldElem, Name: statusSide}, {Kind: diff.FieldElem, Name: string(k)}}
	}
	text := codec.Encode(ownership.MustNewSet(paths...))
	if c == nil {
		return text
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.fields) >= maxCodecs {
		clear(c.fields)
	}
	if c.fields == nil {
		c.fields = map[*ownership.Codec]map[string]string{}
	}
	if c.fields[codec] == nil {
		c.fields[codec] = map[string]string{}
	}
	byKeys := c.fields[codec]
	if len(byKeys) >= maxDecodedSets {
		clear(byKeys)
	}
	byKeys[string(id)] = text
	return text
}
