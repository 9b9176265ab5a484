package ownership

import (
	"strconv"
	"strings"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/pathname"
)

// Element kinds inside a Set, ordered as diff orders them.
const (
	elemField = uint8(diff.FieldElem)
	elemKey   = uint8(diff.KeyElem)
	elemValue = uint8(diff.ValueElem)
)

// Set is an immutable set of field paths: the fields one manager owns.
//
// A path is in the set (a member) when the manager owns it: a scalar, an
// atomic list or map, an empty map, a list item of a keyed list or set (the
// item's existence), or any other node an Update claimed. Interior maps are
// members only where an Update created them (as are keyed lists and sets)
// or a write emptied them of an Apply entry's fields; otherwise they exist
// only as prefixes of members.
//
// The set is a trie laid out in one slice: the root first, then, depth
// first, each node's children as one contiguous sorted block, reserved
// before any of them is expanded. Lookups are binary searches, and equal
// sets have identical layouts. Element names share memory with the tree or encoding they were
// built from. The zero value and nil are the empty set. A Set is never
// modified after it is built, so it is safe for concurrent use and may be
// shared between Managed values.
type Set struct {
	nodes []node // nodes[0] is the root; empty for the empty set
}

// pelem is a path element in the set's (kind, name) form.
type pelem struct {
	kind uint8
	name string
}

// node is one element of the trie. name is the field name for fields, the
// text between the brackets for keyed items (`name="x",port=80`) and the
// canonical scalar for set items (`"a"`, `80`).
type node struct {
	name   string
	kind   uint8
	member bool
	lo, hi int32 // children are nodes[lo:hi]
}

// Len returns the number of member paths.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	n := 0
	for i := range s.nodes {
		if s.nodes[i].member {
			n++
		}
	}
	return n
}

// Empty reports whether the set has no members.
func (s *Set) Empty() bool { return s == nil || len(s.nodes) == 0 }

// child returns the index of i's child (kind, name), or -1. i < 0 gives -1.
func (s *Set) child(i int32, kind uint8, name string) int32 {
	return childOf(s, i, kind, name)
}

// childBytes is child with the name given as bytes; it does not allocate.
func (s *Set) childBytes(i int32, kind uint8, name []byte) int32 {
	return childOf(s, i, kind, name)
}

// childOf is child. Each probe asks first whether it found the child: an
// equality that tells names of other lengths apart without comparing
// their bytes, and ends the search at the first probe of a block of one
// child (the usual block: .status, one field of a controller's status),
// before the ordering's comparison.
func childOf[N string | []byte](s *Set, i int32, kind uint8, name N) int32 {
	if i < 0 || s == nil || len(s.nodes) == 0 {
		return -1
	}
	lo, hi := s.nodes[i].lo, s.nodes[i].hi
	for lo < hi {
		m := int32(uint32(lo+hi) >> 1)
		n := &s.nodes[m]
		switch {
		case n.kind == kind && n.name == string(name):
			return m // siblings are distinct
		case n.kind < kind || (n.kind == kind && n.name < string(name)):
			lo = m + 1
		default:
			hi = m
		}
	}
	return -1
}

// root returns 0, or -1 for the empty set.
func (s *Set) root() int32 {
	if s == nil || len(s.nodes) == 0 {
		return -1
	}
	return 0
}

func cmpElem(ak uint8, an string, bk uint8, bn string) int {
	if ak != bk {
		if ak < bk {
			return -1
		}
		return 1
	}
	return strings.Compare(an, bn)
}

// Has reports whether p is a member of the set. Index elements are never
// members.
func (s *Set) Has(p diff.Path) bool {
	i := s.root()
	var buf []byte
	for _, e := range p {
		kind, name, ok := elemText(e, buf[:0])
		if !ok {
			return false
		}
		i = s.child(i, kind, name)
		if i < 0 {
			return false
		}
	}
	return i >= 0 && s.nodes[i].member
}

// elemText converts a diff.Element into the set's (kind, name) form.
func elemText(e diff.Element, buf []byte) (uint8, string, bool) {
	switch e.Kind {
	case diff.FieldElem:
		return elemField, e.Name, true
	case diff.KeyElem:
		if len(e.Keys) == 0 {
			return 0, "", false
		}
		for i, k := range e.Keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendName(buf, k.Name)
			buf = append(buf, '=')
			var err error
			if buf, err = appendScalarText(buf, k.Value); err != nil {
				return 0, "", false
			}
		}
		return elemKey, string(buf), true
	case diff.ValueElem:
		buf, err := appendScalarText(buf, e.Value)
		if err != nil {
			return 0, "", false
		}
		return elemValue, string(buf), true
	}
	return 0, "", false
}

// appendName appends a field or key name: bare when it is an identifier,
// quoted otherwise.
func appendName(b []byte, name string) []byte {
	if pathname.IsIdent(name) {
		return append(b, name...)
	}
	return strconv.AppendQuote(b, name)
}

// toElement converts a trie element back into a diff.Element.
func toElement(kind uint8, name string) diff.Element {
	switch kind {
	case elemKey:
		if p, err := diff.ParsePath("[" + name + "]"); err == nil && len(p) == 1 {
			return p[0]
		}
	case elemValue:
		if p, err := diff.ParsePath("[=" + name + "]"); err == nil && len(p) == 1 {
			return p[0]
		}
	}
	return diff.Element{Kind: diff.FieldElem, Name: name}
}

// Paths returns the members in the set's order: depth first, a parent
// before its children, siblings sorted.
func (s *Set) Paths() []diff.Path {
	if s.Empty() {
		return nil
	}
	var out []diff.Path
	s.eachMember(0, diff.Path{}, func(p diff.Path) {
		if len(p) > 0 {
			out = append(out, p)
		}
	})
	return out
}

// String returns the set's encoding; see Encode.
func (s *Set) String() string { return s.Encode() }

// Equal reports whether s and t have the same members.
func (s *Set) Equal(t *Set) bool {
	var a, b []node
	if s != nil {
		a = s.nodes
	}
	if t != nil {
		b = t.nodes
	}
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// NewSet returns the set of the given paths. Index elements are not
// allowed in sets; a path containing one, or the root path, is an error, as
// is one longer than MaxDepth+1 elements (an error wrapping ErrTooDeep):
// no tree has a field that deep (the deepest, MaxDepth+1, is an item of a
// set at the bottom of MaxDepth maps and lists), and the set's walks would
// overflow the stack.
func NewSet(paths ...diff.Path) (*Set, error) {
	var b builder
	b.reset()
	for _, p := range paths {
		if len(p) == 0 {
			return nil, errorf(p, "the root cannot be owned")
		}
		if len(p) > MaxDepth+1 {
			return nil, tooDeep(p)
		}
		at := int32(0)
		for _, e := range p {
			kind, name, ok := elemText(e, nil)
			if !ok {
				return nil, errorf(p, "element %s cannot be part of a field set", e)
			}
			at = b.find(at, kind, name)
		}
		b.nodes[at].member = true
	}
	s, _ := b.freeze()
	return s, nil
}

// MustNewSet is NewSet for paths known to be valid; it panics on error.
func MustNewSet(paths ...diff.Path) *Set {
	s, err := NewSet(paths...)
	if err != nil {
		panic(err)
	}
	return s
}
