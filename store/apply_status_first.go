package store

import (
	"bytes"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/jsonscan"
	"github.com/steady-go/steady/ownership"
)

// A controller's first status apply to an object, before it owns anything
// there, is the status write of nearly every event once a controller has
// more objects than events (the controller benchmark at 100k and 1M
// objects); its later applies, of new values to the fields it owns, are
// the status write of nearly every event below that (BenchmarkEventToReconcile,
// and the controller benchmark at 10k objects). For their usual shape, a
// status of type T whose JSON is an object of a few scalar fields, applied
// alone over a stored status of scalar fields that it names all of,
// flatStatusApply gives the object mergeStatus would store, read from the
// two JSON texts alone: no tree is decoded, no merge walked.
//
// Why it is mergeStatus's object, for a first apply: ownership.Apply of
// {"status": applied} over the stored status side, for a manager with no
// entry there, sets every applied field to its applied value (each a
// scalar leaf; none is null), and keeps the stored fields the config does
// not name: here none. So the merged status is the applied one, which
// mergeStatus then stores as its own encoding, and the conditions are the
// stored ones. Apply conflicts with, or takes a field from, another entry
// only at a changed path where that entry has a node; the stored status's
// fields are scalars, so a node there is a member (Set.Has), and a field
// the stored status lacks has none in a canonical record (nodes of the
// object's own). So when no other entry owns an applied field, no entry
// loses anything, and the record is the stored entries, then manager's new
// Apply entry, whose set is every applied field: every status field of the
// new object. Its text depends only on the Codec of the new object's side,
// which is remembered by shape (codecOf), so the text is remembered with
// it.
//
// And for a later apply (see ownStatusApply): when manager's Apply entry
// owns exactly the applied fields and no other entry owns any of them, the
// merge removes nothing (manager gives up no field), conflicts with no one
// and takes nothing, so the merged status is again the applied one and
// every entry keeps its set: the record is the stored one, kept as stored
// while the new status has the stored one's shape (setManagedOver). It
// changes nothing when each applied value equals the stored one.
//
// Fast path, kept by BenchmarkApplyStatusFirst (and ...FirstObserved) and
// BenchmarkApplyStatusOwnField; TestApplyStatusFlatMatchesTheMerge
// cross-checks it against the merge.

// maxFirstFields bounds the applied status fields flatStatusApply takes.
const maxFirstFields = 16

// flatStatusApply returns the object mergeStatus returns for manager's
// apply of status JSON applied, with no conditions, over cur, and what is
// known of its sides as mergeStatus gives them; or false for mergeStatus
// to decide (see above). A nil object with true means nothing changes.
// known, when not nil, is cur's status side as decodeSideOf gives it (what
// the Store's memory knows of it, see lastValues.put).
func (w *Writer[S, T]) flatStatusApply(cur *rawObject, applied []byte, known *decodedSide) (*rawObject, decodedSides, bool, error) {
	others, mine, ok := w.statusEntries(cur)
	if !ok {
		return nil, decodedSides{}, false, nil
	}
	// The applied fields' keys and values, then the stored status's, each
	// in a quarter of arr.
	const n = maxFirstFields
	var arr [4 * n][]byte
	a, ok := flatFields(flatObject{arr[0:0:n], arr[n : n : 2*n]}, applied, nil)
	if !ok || len(a.keys) == 0 || w.manager == "" {
		return nil, decodedSides{}, false, nil
	}
	stored, ok := flatFields(flatObject{arr[2*n : 2*n : 3*n], arr[3*n : 3*n : 4*n]}, orNull(cur.Status), a.keys)
	if !ok {
		return nil, decodedSides{}, false, nil
	}
	if mine {
		return w.ownStatusApply(cur, applied, a, stored, known)
	}
	return w.firstStatusApply(cur, applied, a, others)
}

// statusEntries counts cur's status-side entries of managers other than
// w's, and says whether w's manager has one; ok is false when that one is
// not a single Apply entry, which flatStatusApply leaves to the merge.
func (w *Writer[S, T]) statusEntries(cur *rawObject) (others int, mine, ok bool) {
	for _, e := range cur.Meta.Managed {
		if e.Subresource != statusSide {
			continue
		}
		if e.Manager == w.manager {
			if mine || e.Operation != string(ownership.OpApply) {
				return 0, false, false
			}
			mine = true
			continue
		}
		others++
	}
	return others, mine, true
}

// firstStatusApply is flatStatusApply's first apply by w's manager, of
// the status fields of a, over cur with others status-side entries of
// other managers (see above).
func (w *Writer[S, T]) firstStatusApply(cur *rawObject, applied []byte, a flatObject, others int) (*rawObject, decodedSides, bool, error) {
	keys := a.keys
	sc := w.s.schemas
	// With no status-side entry, the record written is cur's, then the
	// new entry, and the status side is the new entry alone: remembered
	// (firstRecord), they are not encoded, decoded or copied again. (One
	// beside another manager's status-side entry is taken here only over
	// conditions, which the record remembered has none of.)
	reuse := others == 0 && len(cur.Conditions) == 0 && !slices.ContainsFunc(a.vals, parsedInShapeKey)
	if m := w.s.firstRecord.Load(); reuse && m != nil && m.holds(w.manager, cur.Meta.Managed, keys) {
		next, err := w.appliedStatus(cur, applied)
		if err != nil {
			return nil, decodedSides{}, false, err
		}
		next.Meta.Managed = m.managed
		return next, decodedSides{status: m.dec}, true, nil
	}
	var managed ownership.Managed
	if others > 0 {
		dec, _ := sc.decodeSideOf(cur, statusSide, nil)
		if !dec.canonical || len(dec.managed) != others || ownsAny(dec.managed, keys, -1) {
			return nil, decodedSides{}, false, nil
		}
		managed = slices.Grow(dec.managed[:len(dec.managed):len(dec.managed)], 1)
	}
	next, err := w.appliedStatus(cur, applied)
	if err != nil {
		return nil, decodedSides{}, false, err
	}
	codec, err := sc.codecOf(next, statusSide, nil)
	if err != nil {
		return nil, decodedSides{}, false, err
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
	// The status side's record, decoded as the change judge decodes the
	// write's event (decodeSideManaged: the same status text, so the same
	// Codec), which then takes it from the write (see writing), as the
	// memory does. The sets decoded come from the Codec's memo: a
	// controller's first applies write the same record object after object.
	dec, _ := sc.decodeSideWith(&next.Meta, statusSide, func() (*ownership.Codec, error) { return codec, nil }, sc.codecs.decodeNodes)
	var sides decodedSides
	if dec.canonical {
		sides.status = &dec
	}
	if reuse && dec.canonical {
		w.s.firstRecord.Store(newFirstRecord(w.manager, cur.Meta.Managed, keys, next.Meta.Managed, &dec))
	}
	return next, sides, true, nil
}

// firstRecord is what a manager's first status apply with no status-side
// entry before it (firstStatusApply) wrote of the ownership record, with
// what that depends on besides a status and conditions whose shapes have
// no number that the shape key parses (parsedInShapeKey): the manager,
// the stored record (spec-side entries only) and the applied status's
// keys, in order, joined as ownedFields joins them; the status shape key
// of the object written holds only those keys, and its conditions are
// none. managed, the record written, is the Store's own copy, never
// modified, which the writes that take it hand on only as copies (to the
// memory of values, see lastValues.wroteGiven; to a dry run's result,
// dryRun.dryMeta; TestFirstStatusApplyRecordOutlivesACallersChanges), and
// dec is its status side decoded, which writes may share as the memory's
// values do (see lastValues.put). A controller's first applies
// over a fleet of objects a user created write the same record object
// after object, each object's stored record equal to the last one's.
// from is a copy too: the record of a cur decoded for the write may be
// the array of a scratch space that the next decode reuses.
type firstRecord struct {
	manager string
	keys    string
	from    []ManagedFields
	managed []ManagedFields
	dec     *decodedSide
}

// newFirstRecord is the firstRecord of manager's first apply of the
// status fields of keys over the record from, which wrote managed, whose
// status side decoded to dec. It copies from and managed.
func newFirstRecord(manager string, from []ManagedFields, keys [][]byte, managed []ManagedFields, dec *decodedSide) *firstRecord {
	var b strings.Builder
	for _, k := range keys {
		b.Write(k)
		b.WriteByte(0)
	}
	return &firstRecord{manager: manager, keys: b.String(), from: slices.Clone(from), managed: slices.Clip(slices.Clone(managed)), dec: dec}
}

// holds reports whether m is the record of manager's first apply of the
// status fields of keys over the record from (see firstRecord).
func (m *firstRecord) holds(manager string, from []ManagedFields, keys [][]byte) bool {
	if m.manager != manager || len(from) != len(m.from) || !joinedKeys(m.keys, keys) {
		return false
	}
	return slices.Equal(from, m.from)
}

// ownStatusApply is flatStatusApply's later apply, by a manager with an
// Apply entry on the status side, of the fields of a over the stored
// status's (see above), with cur's status side when known (not nil).
func (w *Writer[S, T]) ownStatusApply(cur *rawObject, applied []byte, a, stored flatObject, known *decodedSide) (*rawObject, decodedSides, bool, error) {
	sc := w.s.schemas
	var curCodec *ownership.Codec // cur's, once needed
	dec := known
	if dec == nil {
		if dec, curCodec = w.flatStatusSideOf(cur, stored); dec == nil {
			return nil, decodedSides{}, false, nil
		}
	}
	if !dec.canonical {
		return nil, decodedSides{}, false, nil
	}
	i := dec.managed.Find(w.manager, ownership.OpApply)
	if i < 0 || ownsAny(dec.managed, a.keys, i) || !ownsExactlyKnown(&w.s.ownedFields, dec.managed[i].Set, a.keys) {
		return nil, decodedSides{}, false, nil
	}
	if sameFields(a, stored) {
		return nil, decodedSides{}, true, nil
	}
	next, err := w.appliedStatus(cur, applied)
	if err != nil {
		return nil, decodedSides{}, false, err
	}
	// The record is kept while the new status has the stored one's shape
	// (codecOf's key, see sideShapeKey): the same keys in the same order,
	// the same conditions, each keyed; then the shape's Codec is cur's.
	if !sameShape(a, stored) || !conditionsKeyed(next.Conditions) {
		var err error
		if curCodec == nil {
			curCodec, err = sc.codecOf(cur, statusSide, nil)
		}
		codec, nextErr := sc.codecOf(next, statusSide, nil)
		if err != nil || nextErr != nil || codec != curCodec {
			return nil, decodedSides{}, false, nil // a new shape: the merge encodes the record
		}
	}
	return next, decodedSides{status: dec}, true, nil
}

// flatStatusSideOf is decodeSideOf of cur's status side, whose stored
// status is the flat object stored (flatFields), and its Codec; nil when
// the side has no entries. The side of a status with no conditions and
// a shape key (see sameShape) is remembered (Store.statusSide), and given
// again for a later cur whose status has the same keys, in the same order,
// and no conditions, and whose record has the same status-side entries,
// in the same order among the spec-side ones: the same Codec (the status
// side's shape key holds no more), the same entries decoded against it,
// and whether the side is canonical follows. A controller's status write
// to an object whose side the Store no longer remembers (flat out at 10k
// objects, seven in ten) decodes none then: its records are alike object
// after object. A decodedSide is never modified once made, so writes may
// share it, as the memory's values do (see lastValues.put).
func (w *Writer[S, T]) flatStatusSideOf(cur *rawObject, stored flatObject) (*decodedSide, *ownership.Codec) {
	flat := len(cur.Conditions) == 0 && len(stored.keys) > 0 && !slices.ContainsFunc(stored.vals, parsedInShapeKey)
	if m := w.s.statusSide.Load(); flat && m != nil && joinedKeys(m.keys, stored.keys) && m.sameEntries(cur.Meta.Managed) {
		return m.dec, m.codec
	}
	d, codec := w.s.schemas.decodeSideOf(cur, statusSide, nil)
	if codec == nil {
		return nil, nil
	}
	if flat {
		w.s.statusSide.Store(newKnownStatusSide(stored.keys, cur.Meta.Managed, &d, codec))
	}
	return &d, codec
}

// knownStatusSide is a status side decoded (flatStatusSideOf) with what
// it depends on besides a status with no conditions: the keys of the
// stored status, joined as ownedFields joins them, and the status-side
// entries of the record, in order, with whether a spec-side entry came
// after one of them (see decodeSideInto's canonical).
type knownStatusSide struct {
	keys     string
	entries  []ManagedFields
	disorder bool
	dec      *decodedSide
	codec    *ownership.Codec
}

// newKnownStatusSide is the knownStatusSide of dec, decoded with codec
// from the record managed of a status of those keys; it copies the keys.
func newKnownStatusSide(keys [][]byte, managed []ManagedFields, dec *decodedSide, codec *ownership.Codec) *knownStatusSide {
	var b strings.Builder
	for _, k := range keys {
		b.Write(k)
		b.WriteByte(0)
	}
	m := &knownStatusSide{keys: b.String(), dec: dec, codec: codec}
	for _, e := range managed {
		switch {
		case e.Subresource == statusSide:
			m.entries = append(m.entries, e)
		case len(m.entries) > 0:
			m.disorder = true
		}
	}
	return m
}

// sameEntries reports whether managed holds m's status-side entries, in
// order, with a spec-side entry after one of them exactly when m's did.
func (m *knownStatusSide) sameEntries(managed []ManagedFields) bool {
	n, disorder := 0, false
	for i := range managed {
		e := &managed[i]
		if e.Subresource != statusSide {
			disorder = disorder || n > 0
			continue
		}
		if n == len(m.entries) || m.entries[n] != *e {
			return false
		}
		n++
	}
	return n == len(m.entries) && disorder == m.disorder
}

// appliedStatus is cur with status applied, cur's conditions and the
// status apply's LastWrite and StatusGeneration; its record is cur's.
func (w *Writer[S, T]) appliedStatus(cur *rawObject, applied []byte) (*rawObject, error) {
	var conds []Condition
	if len(cur.Conditions) > 0 {
		conds = slices.Clone(cur.Conditions)
	}
	if err := validateConditions(conds); err != nil {
		return nil, err
	}
	next := *cur
	next.Status, next.Conditions = applied, conds
	next.Meta.LastWrite = LastWrite{Manager: w.manager, Op: ownership.OpApplyStatus}
	next.Meta.StatusGeneration++
	return &next, nil
}

// flatObject is a flat JSON object's fields as flatFields reads them:
// keys[i] holds vals[i], the value's text.
type flatObject struct{ keys, vals [][]byte }

// flatFields appends to o the fields of JSON object b, and reports
// whether b is an object of at most maxFirstFields fields, each a scalar
// with a plain key, none twice; with names, each key must be one of them,
// and null values are allowed.
func flatFields(o flatObject, b []byte, names [][]byte) (flatObject, bool) {
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
		if len(o.keys) == maxFirstFields || slices.ContainsFunc(o.keys, func(k []byte) bool { return bytes.Equal(k, key) }) {
			return false
		}
		if names != nil && !slices.ContainsFunc(names, func(k []byte) bool { return bytes.Equal(k, key) }) {
			return false
		}
		v, ok := r.Raw()
		o.keys, o.vals = append(o.keys, key), append(o.vals, v)
		return ok
	})
	return o, ok && r.End()
}

// ownsAny reports whether an entry, but the one at skip, owns the status
// field of a key.
func ownsAny(managed ownership.Managed, keys [][]byte, skip int) bool {
	p := diff.Path{{Kind: diff.FieldElem, Name: statusSide}, {Kind: diff.FieldElem}}
	for _, k := range keys {
		p[1].Name = viewString(k)
		for i, e := range managed {
			if i != skip && e.Set.Has(p) {
				return true
			}
		}
	}
	return false
}

// viewString is k as a string that shares its bytes, for a path that
// Set.Has only reads (it keeps nothing of it): a key of flatFields, from a
// JSON text nothing modifies while it is read. A copy (string(k)) was an
// allocation per key, as the path escapes into Has.
func viewString(k []byte) string { return unsafe.String(unsafe.SliceData(k), len(k)) }

// ownsExactly reports whether set's members are the status fields of keys
// (keys are distinct: flatFields).
func ownsExactly(set *ownership.Set, keys [][]byte) bool {
	if set.Len() != len(keys) {
		return false
	}
	p := diff.Path{{Kind: diff.FieldElem, Name: statusSide}, {Kind: diff.FieldElem}}
	for _, k := range keys {
		p[1].Name = viewString(k)
		if !set.Has(p) {
			return false
		}
	}
	return true
}

// ownedFields is a set found to own exactly the status fields of keys,
// joined (each followed by a NUL: flatFields' keys are plain, with none).
type ownedFields struct {
	set  *ownership.Set
	keys string
}

// ownsExactlyKnown is ownsExactly, answered from last, the last set and
// keys it found owned, when it holds set and keys: no walk of the set per
// key. A Set is immutable, and held in last its address is not reused: the
// answer stands for as long as it is kept. A controller's later applies
// ask it of the same set object after object (its record's set, decoded
// once per Codec: see firstStatusApply); each Store keeps its own last
// (Store.ownedFields).
func ownsExactlyKnown(last *atomic.Pointer[ownedFields], set *ownership.Set, keys [][]byte) bool {
	if m := last.Load(); m != nil && m.set == set && joinedKeys(m.keys, keys) {
		return true
	}
	if !ownsExactly(set, keys) {
		return false
	}
	var b strings.Builder
	for _, k := range keys {
		b.Write(k)
		b.WriteByte(0)
	}
	last.Store(&ownedFields{set: set, keys: b.String()})
	return true
}

// joinedKeys reports whether joined is keys, each followed by a NUL.
func joinedKeys(joined string, keys [][]byte) bool {
	for _, k := range keys {
		if len(joined) <= len(k) || joined[len(k)] != 0 || joined[:len(k)] != string(k) {
			return false
		}
		joined = joined[len(k)+1:]
	}
	return joined == ""
}

// sameFields reports whether two flat objects (flatFields) hold the same
// fields with equal values, as their decoded trees compare: a value whose
// text differs is decoded (1.0 and 1 differ there, as in treeEqual).
func sameFields(a, b flatObject) bool {
	if len(a.keys) != len(b.keys) {
		return false
	}
	for i, k := range a.keys {
		j := slices.IndexFunc(b.keys, func(l []byte) bool { return bytes.Equal(k, l) })
		if j < 0 || !sameScalar(a.vals[i], b.vals[j]) {
			return false
		}
	}
	return true
}

// sameShape reports whether two flat objects (flatFields) have the same
// shape key (jsonscan.AppendShapeKey), each a key: the same keys in the
// same order, and no number the key parses (a long one, or one with an
// exponent, which may be out of range and give none).
func sameShape(a, b flatObject) bool {
	if len(a.keys) != len(b.keys) {
		return false
	}
	for i, k := range a.keys {
		if !bytes.Equal(k, b.keys[i]) || parsedInShapeKey(a.vals[i]) || parsedInShapeKey(b.vals[i]) {
			return false
		}
	}
	return true
}

// parsedInShapeKey reports whether jsonscan.AppendShapeKey parses scalar v
// to check its range: a number of more than 15 bytes or with an exponent.
func parsedInShapeKey(v []byte) bool {
	if len(v) == 0 || v[0] != '-' && (v[0] < '0' || '9' < v[0]) {
		return false // not a number
	}
	return len(v) > 15 || bytes.IndexByte(v, 'e') >= 0 || bytes.IndexByte(v, 'E') >= 0
}

// sameScalar reports whether two JSON scalars decode to equal values.
func sameScalar(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	// Two integers written as encoding/json writes an int64, each text
	// one value: different texts (the usual change of a status field, a
	// count) are different values, with nothing to parse.
	if canonicalInt(a) && canonicalInt(b) {
		return false
	}
	// Two integers as a tree holds them (int64: jsonscan.Number) are
	// compared unboxed.
	if x, ok := treeInt(a); ok {
		if y, ok := treeInt(b); ok {
			return x == y
		}
	}
	x, errA := jsonscan.Decode(a)
	y, errB := jsonscan.Decode(b)
	return errA == nil && errB == nil && treeEqual(x, y)
}

// canonicalInt reports whether b is an integer as encoding/json writes an
// int64 of up to 18 digits (no sign but a minus, no leading zero, no -0):
// the one text of its value, which fits an int64.
func canonicalInt(b []byte) bool {
	digits := b
	if len(b) > 0 && b[0] == '-' {
		digits = b[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || digits[0] == '0' && (len(digits) > 1 || len(b) > 1) {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
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

// treeInt returns the int64 a tree holds for number text b, or false when
// it holds something else there (jsonscan.Number): a float64, or the text
// of an integer not written as encoding/json writes an int64 (-0, 1e3).
func treeInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 || b[0] != '-' && (b[0] < '0' || b[0] > '9') {
		return 0, false
	}
	n, _, isInt, ok := jsonscan.ParseNumber(string(b))
	return n, ok && isInt && (n != 0 || len(b) == 1) && jsonscan.IsNumber(string(b))
}
