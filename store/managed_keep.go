package store

import (
	"slices"
	"strings"

	"github.com/steady-go/steady/diff"
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
// Why the record is then what ownership.Update gives: the changed paths are
// scalar leaves whose maps have the same keys before and after, and lists are
// unchanged, so the object's shape, hence its Codec, is the same. Every
// entry of the side is a pure bitmap of that Codec ("~hash bits", no "|" part),
// so its members are nodes of the object; a changed leaf that the manager's
// Update entry holds is such a node, so no atomic map lies above it (the Codec
// does not descend into atomic values) and Update's changed set is exactly
// these leaves. The manager's Update entry already holds them (Union changes
// nothing), every other entry holds none of them and, as a leaf node has no
// nodes below it, nothing below them (Without changes nothing), nothing was
// removed, and no entry is added or dropped. One difference remains: lists
// the write did not touch are not re-validated (a keyed list with duplicate
// items, possible only in a value written around the store or under an older
// schema, fails ownership.Update even when unchanged).

// decodedSide is one side's ownership record as stored.
type decodedSide struct {
	managed ownership.Managed
	// canonical reports that every entry of the side decoded to a non-empty
	// set from a pure bitmap and that Meta.Managed lists spec-side entries
	// before status-side ones, as setManaged writes them.
	canonical bool
}

// decodeSide decodes one side's entries of meta.Managed relative to tree.
func (sc schemas) decodeSide(meta *Meta, side string, tree map[string]any) decodedSide {
	var codec *ownership.Codec
	out := decodedSide{canonical: true}
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
			codec = ownership.NewCodec(tree, sc.of(side))
		}
		set, err := codec.Decode(e.Fields)
		if err != nil || set.Empty() {
			out.canonical = false
			continue // see the comment at the top of managed.go
		}
		if !strings.HasPrefix(e.Fields, "~") || strings.IndexByte(e.Fields, '|') >= 0 {
			out.canonical = false
		}
		out.managed = append(out.managed, ownership.Entry{Manager: e.Manager, Operation: ownership.Operation(e.Operation), Set: set})
	}
	return out
}

// maxKeptChanges bounds the changed leaves keepManaged checks one by one;
// a write changing more goes the general way.
const maxKeptChanges = 16

// keepManaged reports whether an ordinary write by manager of one side, from
// cur (whose side tree is oldTree and record dec) to next, leaves that side's
// ownership record exactly as stored. See the comment at the top of the file.
func keepManaged(cur, next *rawObject, side, manager string, oldTree map[string]any, dec decodedSide) bool {
	if !dec.canonical {
		return false
	}
	var oldVal any
	var newRaw []byte
	var root string
	if side == statusSide {
		if !conditionsEqual(cur.Conditions, next.Conditions) {
			return false
		}
		oldVal, newRaw, root = oldTree["status"], orNull(next.Status), "status"
	} else {
		if !userMetaEqual(&cur.Meta, &next.Meta) {
			return false
		}
		oldVal, newRaw, root = oldTree["spec"], orNull(next.Spec), "spec"
	}
	var pathBuf [8]string
	var keyBuf [32]string
	d := leafDiff{p: treeParser{b: newRaw, s: string(newRaw)}, path: append(pathBuf[:0], root), keys: keyBuf[:0]}
	if !d.compare(oldVal, false) {
		return false
	}
	if d.p.space(); d.p.i != len(d.p.b) {
		return false
	}
	for _, fields := range d.changed {
		p := make(diff.Path, len(fields))
		for i, f := range fields {
			p[i] = diff.Element{Kind: diff.FieldElem, Name: f}
		}
		mine := false
		for _, e := range dec.managed {
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

// maxKeyScan bounds the maps leafDiff compares, as it checks keys for
// repeats by scanning; bigger maps go the general way.
const maxKeyScan = 64

// leafDiff compares a decoded tree with a JSON value, collecting the paths
// of scalar leaves whose value changed. It gives up (compare returns false)
// on any change of shape: a map key added or removed, a change of kind (map,
// list, null, other scalar), or any change inside a list.
type leafDiff struct {
	p       treeParser
	path    []string
	changed [][]string
	keys    []string // the keys read of the objects being compared
}

func (d *leafDiff) compare(old any, strict bool) bool {
	p := &d.p
	p.space()
	if p.i >= len(p.b) {
		return false
	}
	c := p.b[p.i]
	switch o := old.(type) {
	case map[string]any:
		return c == '{' && d.object(o, strict)
	case []any:
		return c == '[' && d.array(o)
	case nil:
		if c != 'n' {
			return false
		}
		_, err := p.literal("null", nil)
		return err == nil
	}
	var same bool
	switch {
	case c == '"':
		v, err := p.string()
		if err != nil {
			return false
		}
		o, ok := old.(string)
		same = ok && o == v
	case c == 't' || c == 'f':
		v, word := c == 't', "false"
		if v {
			word = "true"
		}
		if _, err := p.literal(word, nil); err != nil {
			return false
		}
		o, ok := old.(bool)
		same = ok && o == v
	case c == '-' || '0' <= c && c <= '9':
		n, f, isInt, err := p.numberParts()
		if err != nil {
			return false
		}
		if isInt {
			o, ok := old.(int64)
			same = ok && o == n
		} else {
			o, ok := old.(float64)
			same = ok && o == f
		}
	default:
		return false // null, map or list where a scalar was
	}
	if same {
		return true
	}
	if strict || len(d.changed) == maxKeptChanges {
		return false
	}
	d.changed = append(d.changed, append([]string(nil), d.path...))
	return true
}

func (d *leafDiff) object(old map[string]any, strict bool) bool {
	p := &d.p
	p.i++ // {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return len(old) == 0
	}
	mark := len(d.keys)
	ok := d.fields(old, strict, mark)
	d.keys = d.keys[:mark]
	return ok
}

// fields compares the members of an object whose '{' was read, collecting
// their keys from mark on in d.keys.
func (d *leafDiff) fields(old map[string]any, strict bool, mark int) bool {
	p := &d.p
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return false
		}
		k, err := p.string()
		if err != nil {
			return false
		}
		ov, ok := old[k]
		if !ok || len(old) > maxKeyScan || slices.Contains(d.keys[mark:], k) {
			return false // a new key, a repeated one, or too many to check
		}
		d.keys = append(d.keys, k)
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return false
		}
		p.i++
		d.path = append(d.path, k)
		ok = d.compare(ov, strict)
		d.path = d.path[:len(d.path)-1]
		if !ok {
			return false
		}
		p.space()
		if p.i >= len(p.b) {
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			// As many distinct keys as old has, all of them old's.
			return len(d.keys)-mark == len(old)
		default:
			return false
		}
	}
}

// array requires the JSON list to equal old item by item.
func (d *leafDiff) array(old []any) bool {
	p := &d.p
	p.i++ // [
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return len(old) == 0
	}
	for i := 0; ; i++ {
		if i >= len(old) || !d.compare(old[i], true) {
			return false
		}
		p.space()
		if p.i >= len(p.b) {
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return i+1 == len(old)
		default:
			return false
		}
	}
}
