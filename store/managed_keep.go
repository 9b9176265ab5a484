package store

import (
	"slices"

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
	if !changedScalars(&changed, cur, oldRaw, newRaw, root) {
		return false, nil
	}
	if changed.Len() == 0 && len(cur.Meta.Managed) == 0 {
		return true, nil
	}
	if known != nil {
		return known.canonical && ownsAll(known.managed, &changed, manager), known
	}
	// Decoded on the stack: only a record kept for the Store's memory
	// leaves it.
	var buf [4]ownership.Entry
	d, err := sc.decodeSideInto(buf[:0], &cur.Meta, side, func() (*ownership.Codec, error) { return sc.codecOf(cur, side, nil) }, sc.codecs.decodeNodes)
	switch {
	case err != nil:
		return false, nil // the general way reports it
	case !d.canonical || !ownsAll(d.managed, &changed, manager):
		return false, nil
	case !sc.remember:
		return true, nil
	}
	kept := decodedSide{canonical: true}
	if len(d.managed) > 0 {
		kept.managed = slices.Clone(d.managed)
	}
	return true, &kept
}

// changedScalars is jsonscan.ChangedScalarsTo of one side of cur and next,
// whose encoded values are oldRaw and newRaw: false also for changes whose
// paths do not fit in c, which the general way records. A spec that the
// read of cur gave a shape key is JSON that Decode accepts
// (jsonscan.AppendShapeKey), so the text it shares with next at the end is
// not read again.
func changedScalars(c *jsonscan.Changes, cur *rawObject, oldRaw, newRaw []byte, root string) bool {
	valid := root == "spec" && cur.specKey() != nil
	return jsonscan.ChangedScalarsTo(c, oldRaw, newRaw, root, maxKeptChanges, valid)
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
