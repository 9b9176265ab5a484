package store

import (
	"bytes"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/jsonscan"
	"github.com/steady-go/steady/ownership"
)

// The common ordinary write changes a few values that its manager already
// owns alone: a controller bumping the replicas it set, a status writer
// updating its counters. ownership.Update would then return the stored
// record unchanged, and re-encoding it would give the stored text again. For
// that case recordUpdate keeps Meta.Managed as stored, without building the
// new side's tree, running ownership.Update or encoding anything. keepManaged
// decides it conservatively: anything it is not sure about (a field or list
// item added or removed, a change inside a list, a change of metadata or
// conditions, a changed field the manager does not own alone through its
// Update entry, an ownership record that is not in the store's own canonical
// form) goes the general way.
//
// The stored and the new value of the side are compared token by token
// (both are encoding/json output; jsonscan.ChangedScalars), which finds the
// scalar leaves whose text changed without building either tree; only the
// shape of the stored side is then built (decodeShape), for the Codec that
// decodes the record.
//
// Why the record is then what ownership.Update gives: the recorded paths R
// are scalar leaves in maps with the same keys, in the same order, before and
// after, and lists are unchanged byte for byte, so the object's shape, hence
// its Codec, is the same, and the leaves Update finds changed are a subset C
// of R (a leaf whose text changed but not its value, 1.0 for 1, is in R
// only). Every entry of the side decodes to nodes of that Codec's object
// only (ownership.Codec.DecodeNodes); a changed leaf that the manager's
// Update entry holds is such a node, so no atomic map lies above it (the Codec
// does not descend into atomic values) and Update's changed set is exactly
// C. The manager's Update entry already holds all of R (Union changes
// nothing), every other entry holds none of R and, as a leaf node has no
// nodes below it, nothing below them (Without changes nothing), nothing was
// removed, and no entry is added or dropped. One difference remains: lists
// the write did not touch are not re-validated (a keyed list with duplicate
// items, possible only in a value written around the store or under an older
// schema, fails ownership.Update even when unchanged).

// decodedSide is one side's ownership record as stored.
type decodedSide struct {
	managed ownership.Managed
	// canonical reports that every entry of the side decoded to a non-empty
	// set of the object's own nodes (ownership.Codec.DecodeNodes) and that Meta.Managed lists spec-side entries
	// before status-side ones, as setManaged writes them.
	canonical bool
}

// decodeSide decodes one side's entries of meta.Managed relative to tree.
func (sc schemas) decodeSide(meta *Meta, side string, tree map[string]any) decodedSide {
	d, _ := sc.decodeSideWith(meta, side, func() (*ownership.Codec, error) { return ownership.NewCodec(tree, sc.of(side)), nil }, (*ownership.Codec).DecodeNodes)
	return d
}

// decodeSideWith is decodeSide with the side's Codec made by newCodec, when
// the side has entries, and entries decoded by decodeNodes, which is
// ownership.Codec.DecodeNodes or gives what it gives. If newCodec fails, err
// is its error.
func (sc schemas) decodeSideWith(meta *Meta, side string, newCodec func() (*ownership.Codec, error),
	decodeNodes func(*ownership.Codec, string) (*ownership.Set, bool)) (out decodedSide, err error) {
	return sc.decodeSideInto(nil, meta, side, newCodec, decodeNodes)
}

// decodeSideInto is decodeSideWith appending the entries to buf.
func (sc schemas) decodeSideInto(buf ownership.Managed, meta *Meta, side string, newCodec func() (*ownership.Codec, error),
	decodeNodes func(*ownership.Codec, string) (*ownership.Set, bool)) (out decodedSide, err error) {
	var codec *ownership.Codec
	out = decodedSide{managed: buf, canonical: true}
	seenStatus := false
	for _, e := range meta.Managed {
		if e.Subresource == statusSide {
			seenStatus = true
		} else if seenStatus {
			out.canonical = false // a spec-side entry after a status-side one
		}
		if e.Subresource != side {
			continue
		}
		if codec == nil {
			if codec, err = newCodec(); err != nil {
				return decodedSide{}, err
			}
		}
		set, nodesOnly := decodeNodes(codec, e.Fields)
		if !nodesOnly {
			out.canonical = false
			var derr error
			if set, derr = codec.Decode(e.Fields); derr != nil || set.Empty() {
				continue // see the comment at the top of managed.go
			}
		}
		out.managed = append(out.managed, ownership.Entry{Manager: e.Manager, Operation: ownership.Operation(e.Operation), Set: set})
	}
	return out, nil
}

// maxKeptChanges bounds the changed leaves keepManaged checks one by one;
// a write changing more goes the general way.
const maxKeptChanges = 16

// keepManaged reports whether an ordinary write by manager of one side, from
// cur to next, leaves that side's ownership record exactly as stored. See the
// comment at the top of the file. known, when not nil, is the side's record
// decoded against cur's shape, as decodeSide gives it; when keepManaged
// reports true, dec is that record (or nil if it needed none, or decoded it
// for a Store that does not remember values), which then holds for next
// too, as next has cur's shape and record on that side.
func (sc schemas) keepManaged(cur, next *rawObject, side, manager string, known *decodedSide) (keep bool, dec *decodedSide) {
	oldRaw, newRaw, root, ok := sideValues(cur, next, side)
	if !ok {
		return false, nil
	}
	var changed jsonscan.Changes // on the stack, with the paths' keys
	k := sc.codecs.lastKept()
	if !changedScalars(&changed, cur, oldRaw, newRaw, root, k.specShape()) {
		return false, nil
	}
	if changed.Len() == 0 && len(cur.Meta.Managed) == 0 {
		return true, nil
	}
	if known != nil {
		return known.canonical && ownsAll(known.managed, &changed, manager), known
	}
	if k != nil && k.keyOf(cur, side) && k.same(manager, cur.Meta.Managed, &changed) {
		return true, k.decoded(sc.remember)
	}
	var arr [256]byte
	key, keyed := codecKey(arr[:0], cur, side)
	// Decoded on the stack: only a record kept for the Store's memory
	// leaves it.
	var buf [4]ownership.Entry
	d, err := sc.decodeSideInto(buf[:0], &cur.Meta, side, func() (*ownership.Codec, error) { return sc.codecByKey(cur, side, nil, key, keyed) }, sc.codecs.decodeNodes)
	switch {
	case err != nil:
		return false, nil // the general way reports it
	case !d.canonical || !ownsAll(d.managed, &changed, manager):
		return false, nil
	}
	if keyed {
		var spec []byte
		if side == specSide {
			spec = cur.specKey()
		}
		sc.codecs.keep(key, manager, cur.Meta.Managed, &changed, d.managed, spec)
	}
	if !sc.remember {
		return true, nil
	}
	kept := decodedSide{canonical: true}
	if len(d.managed) > 0 {
		kept.managed = slices.Clone(d.managed)
	}
	return true, &kept
}

// keptWrite is a write that keepManaged found to keep its side's record,
// by what decided it: the Codec of the stored side (by its key, codecKey,
// which names the side), the stored record (all of Meta.Managed: its order
// is part of being canonical), the changed leaves and the manager. Another
// write of equal inputs keeps the record too, without decoding it again:
// the decision is a function of them alone, as equal keys give equal
// Codecs, which decode equal texts to equal sets. A client's writer
// changes the same fields of one object after another, objects of one
// shape whose records have one text (BenchmarkUpdateSpecOther: ~1,800
// instructions to decode the record and check it per Update, against ~600
// to build the key and compare). A Store keeps the last one
// (codecCache.kept): it is immutable, and shared.
type keptWrite struct {
	manager string
	key     []byte
	managed []ManagedFields
	changed [][]string
	// dec is the side's record as decodeSideInto gave it, canonical.
	dec ownership.Managed
	// spec is the shape of the stored spec, for a write of the spec side
	// whose read computed it (rawObject.specKey), else nil: the likely
	// shape of the next such write's stored spec (see readSpecLike).
	spec *jsonscan.Shape
}

// keyOf reports whether k's key is codecKey of cur's side. A spec side
// whose read gave it a shape key, of metadata without a shape of their
// own (no labels, annotations, owners or finalizers, see appendMetaShape),
// has the key 'p' and the spec's shape key (specShapeKey), compared where
// it is; any other key is built to be compared.
func (k *keptWrite) keyOf(cur *rawObject, side string) bool {
	if spec := cur.specKey(); spec != nil && side != statusSide && !hasMetaShape(&cur.Meta) {
		return len(k.key) == 1+len(spec) && k.key[0] == 'p' && bytes.Equal(k.key[1:], spec)
	}
	var arr [256]byte
	key, keyed := codecKey(arr[:0], cur, side)
	return keyed && bytes.Equal(k.key, key)
}

// same reports whether a write of those inputs, whose side has k's key
// (keyOf), is the one k describes.
func (k *keptWrite) same(manager string, managed []ManagedFields, changed *jsonscan.Changes) bool {
	if k.manager != manager || len(k.changed) != changed.Len() || !slices.Equal(k.managed, managed) {
		return false
	}
	for i, p := range k.changed {
		if !slices.Equal(p, changed.Path(i)) {
			return false
		}
	}
	return true
}

// decoded is what keepManaged returns for k's write: the record decoded,
// as the caller's own copy, for a Store that remembers values (remember),
// else nil.
func (k *keptWrite) decoded(remember bool) *decodedSide {
	if !remember {
		return nil
	}
	kept := decodedSide{canonical: true}
	if len(k.dec) > 0 {
		kept.managed = slices.Clone(k.dec)
	}
	return &kept
}

// lastKept returns the last write keepManaged kept the record of, or nil.
func (c *codecCache) lastKept() *keptWrite {
	if c == nil {
		return nil
	}
	return c.kept.Load()
}

// keep remembers a write that keeps its side's record (see keptWrite),
// copying what it is given: the changed paths' keys may be the stored
// value's memory, and dec the caller's stack. spec is the stored spec's
// shape key, when the read computed it (nil for none, and on the status
// side). It remembers only a write
// whose inputs are those of the write it was last given (by their hash,
// keptHash): a Store whose writes keep records of ever-changing inputs
// would otherwise pay for the copies on every one.
func (c *codecCache) keep(key []byte, manager string, managed []ManagedFields, changed *jsonscan.Changes, dec ownership.Managed, spec []byte) {
	if c == nil {
		return
	}
	if h := keptHash(key, manager, managed, changed); c.keptSeen.Swap(h) != h {
		return
	}
	k := &keptWrite{manager: manager, key: bytes.Clone(key), managed: slices.Clone(managed), dec: slices.Clone(dec)}
	k.changed = make([][]string, changed.Len())
	for i := range k.changed {
		p := slices.Clone(changed.Path(i))
		for j := range p {
			p[j] = strings.Clone(p[j])
		}
		k.changed[i] = p
	}
	if spec != nil {
		k.spec, _ = jsonscan.NewShape(spec)
	}
	c.kept.Store(k)
}

// changedScalars is jsonscan.ChangedScalarsTo of one side of cur and next,
// whose encoded values are oldRaw and newRaw: false also for changes whose
// paths do not fit in c, which the general way records. A spec that the
// read of cur gave a shape key is JSON that Decode accepts
// (jsonscan.AppendShapeKey), so the text it shares with next at the end is
// not read again; and when spec, the shape of the last kept write's spec
// (nil for none), tells the one scalar of it that changed
// (jsonscan.ChangedScalarsOfShape), nothing else is read.
func changedScalars(c *jsonscan.Changes, cur *rawObject, oldRaw, newRaw []byte, root string, spec *jsonscan.Shape) bool {
	valid := root == "spec" && cur.specKey() != nil
	if valid && spec != nil {
		if ok, answered := jsonscan.ChangedScalarsOfShape(c, spec, oldRaw, newRaw, root, maxKeptChanges); answered {
			return ok
		}
	}
	return jsonscan.ChangedScalarsTo(c, oldRaw, newRaw, root, maxKeptChanges, valid)
}

// specShape is k's spec, nil for a nil k.
func (k *keptWrite) specShape() *jsonscan.Shape {
	if k == nil {
		return nil
	}
	return k.spec
}

// sideValues returns the encoded values of one side of cur and next, and
// the side's root field, when nothing else the side's record covers
// (conditions, or the caller-written metadata) differs between them.
func sideValues(cur, next *rawObject, side string) (oldRaw, newRaw []byte, root string, ok bool) {
	if side == statusSide {
		ok = conditionsEqual(cur.Conditions, next.Conditions)
		return orNull(cur.Status), orNull(next.Status), "status", ok
	}
	ok = userMetaEqual(&cur.Meta, &next.Meta)
	return orNull(cur.Spec), orNull(next.Spec), "spec", ok
}

// ownsAll reports whether manager, by its updates, owns each of the changed
// fields (each a path of field names), and no one else does.
func ownsAll(managed ownership.Managed, changed *jsonscan.Changes, manager string) bool {
	var buf [8]diff.Element // a changed leaf's path, on the stack when short
	for i := range changed.Len() {
		fields := changed.Path(i)
		p := buf[:0]
		for _, f := range fields {
			p = append(p, diff.Element{Kind: diff.FieldElem, Name: f})
		}
		mine := false
		for _, e := range managed {
			has := e.Set.Has(p)
			if e.Manager == manager && e.Operation == ownership.OpUpdate {
				if !has {
					return false
				}
				mine = true
			} else if has {
				return false
			}
		}
		if !mine {
			return false
		}
	}
	return true
}

// keptSeed seeds keptHash.
var keptSeed = maphash.MakeSeed()

// keptHash is a hash of a kept write's inputs (see keptWrite): equal
// inputs hash equal. A collision costs a copy, never a decision: same
// compares the inputs themselves.
func keptHash(key []byte, manager string, managed []ManagedFields, changed *jsonscan.Changes) uint64 {
	var h maphash.Hash
	h.SetSeed(keptSeed)
	str := func(s string) {
		_, _ = h.WriteString(s)
		_ = h.WriteByte(0)
	}
	str(manager)
	_, _ = h.Write(key)
	for _, e := range managed {
		str(e.Manager)
		str(e.Operation)
		str(e.Subresource)
		str(e.Fields)
	}
	for i := range changed.Len() {
		_ = h.WriteByte(1)
		for _, f := range changed.Path(i) {
			str(f)
		}
	}
	return h.Sum64()
}
