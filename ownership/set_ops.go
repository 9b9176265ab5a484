package ownership

import (
	"slices"

	"github.com/steady-go/steady/diff"
)

type setOp uint8

const (
	opUnion setOp = iota
	opDifference
	opIntersect
	opWithout
)

// Union returns the paths in s or t.
func (s *Set) Union(t *Set) *Set {
	if t.Empty() {
		return s.orEmpty()
	}
	if s.Empty() {
		return t
	}
	return combine(s, t, opUnion)
}

// Difference returns the paths in s that are not in t. It compares paths
// exactly: a member of t does not remove the paths below it (see Without).
func (s *Set) Difference(t *Set) *Set {
	if s.Empty() || t.Empty() {
		return s.orEmpty()
	}
	return combine(s, t, opDifference)
}

// Intersect returns the paths in both s and t.
func (s *Set) Intersect(t *Set) *Set {
	if s.Empty() || t.Empty() {
		return &Set{}
	}
	return combine(s, t, opIntersect)
}

// Without returns s minus every path that is a member of t or lies below
// one: removing .spec.ports[port=80] also removes .spec.ports[port=80].name.
func (s *Set) Without(t *Set) *Set {
	if s.Empty() || t.Empty() {
		return s.orEmpty()
	}
	return combine(s, t, opWithout)
}

func (s *Set) orEmpty() *Set {
	if s == nil {
		return &Set{}
	}
	return s
}

func combine(s, t *Set, op setOp) *Set {
	// The result has at most the nodes of both: one allocation, not one
	// per doubling.
	b := builder{nodes: make([]bnode, 0, 1+s.nodeCount()+t.nodeCount())}
	b.reset()
	combineAt(&b, 0, s, s.root(), t, t.root(), op)
	r, _ := b.freeze()
	return r
}

// combineAt combines s's node si and t's node ti (either -1 where that set
// has none) into b's node at, and recurses into their children.
func combineAt(b *builder, at int32, s *Set, si int32, t *Set, ti int32, op setOp) {
	if at != 0 {
		b.nodes[at].member = op.member(si >= 0 && s.nodes[si].member, ti >= 0 && t.nodes[ti].member)
	}
	if op == opUnion {
		unionChildren(b, at, s, si, t, ti)
		return
	}
	if si < 0 {
		return
	}
	for c := s.nodes[si].lo; c < s.nodes[si].hi; c++ {
		sc := s.nodes[c]
		tc := t.child(ti, sc.kind, sc.name)
		if op.drops(t, tc) {
			continue
		}
		n := b.add(at, sc.kind, sc.name, false)
		combineAt(b, n, s, c, t, tc, op)
	}
}

// Moved returns the members of s at and below from, moved to the same
// places below to (from itself to to): the set a rename of from to to
// makes of them. It returns nil, without allocating, when s has no member
// at or below from. Take them out of s with s.Difference(s.Moved(from,
// from)). A path with an element a Set cannot hold (an index) is an error.
func (s *Set) Moved(from, to diff.Path) (*Set, error) {
	at := s.root()
	for _, e := range from {
		kind, name, ok := elemText(e, nil)
		if !ok {
			return nil, errorf(from, "element %s cannot be part of a field set", e)
		}
		if at = s.child(at, kind, name); at < 0 {
			return nil, nil
		}
	}
	if at < 0 {
		return nil, nil
	}
	if len(to) == 0 {
		return nil, errorf(to, "the root cannot be owned")
	}
	b := builder{nodes: make([]bnode, 0, 1+len(to)+len(s.nodes))}
	b.reset()
	dst := int32(0)
	for _, e := range to {
		kind, name, ok := elemText(e, nil)
		if !ok {
			return nil, errorf(to, "element %s cannot be part of a field set", e)
		}
		dst = b.find(dst, kind, name)
	}
	copySubtree(&b, dst, s, at)
	out, _ := b.freeze()
	if out.Empty() {
		return nil, nil
	}
	return out, nil
}

// nodeCount returns the number of nodes of s, nil included.
func (s *Set) nodeCount() int {
	if s == nil {
		return 0
	}
	return len(s.nodes)
}

// member reports whether a node is a member of the result, given whether
// it is one in s (sm) and in t (tm).
func (op setOp) member(sm, tm bool) bool {
	switch op {
	case opUnion:
		return sm || tm
	case opDifference:
		return sm && !tm
	case opIntersect:
		return sm && tm
	}
	return sm // opWithout; what lies below t's members never gets here
}

// drops reports whether a child of s goes from the result with everything
// below it, given its counterpart tc in t (-1 if none).
func (op setOp) drops(t *Set, tc int32) bool {
	switch op {
	case opWithout:
		return tc >= 0 && t.nodes[tc].member
	case opIntersect:
		return tc < 0
	}
	return false
}

// unionChildren merges the sorted children of si and ti (either -1) into
// b's node at.
func unionChildren(b *builder, at int32, s *Set, si int32, t *Set, ti int32) {
	var i, ie, j, je int32
	if si >= 0 {
		i, ie = s.nodes[si].lo, s.nodes[si].hi
	}
	if ti >= 0 {
		j, je = t.nodes[ti].lo, t.nodes[ti].hi
	}
	for i < ie || j < je {
		c := 1 // only t has children left
		if j >= je {
			c = -1
		} else if i < ie {
			c = cmpElem(s.nodes[i].kind, s.nodes[i].name, t.nodes[j].kind, t.nodes[j].name)
		}
		si, ti := int32(-1), int32(-1)
		var n *node
		if c >= 0 {
			ti, n = j, &t.nodes[j]
			j++
		}
		if c <= 0 { // s's name where both have the element
			si, n = i, &s.nodes[i]
			i++
		}
		combineAt(b, b.add(at, n.kind, n.name, false), s, si, t, ti, opUnion)
	}
}

// Move is one move of Set.Move: the members at and below From go to the
// same places below To (From itself to To), or, with To nil, are removed.
type Move struct{ From, To diff.Path }

// Move returns s with moves made at once, as a rename of fields makes
// them: each member at or below a move's From goes by the first move
// whose From it is at or below, the rest stay where they are, and where
// two land on one path they are one member. It returns s itself, without
// allocating, when no move has a member to move. A path with an element a
// Set cannot hold (an index), or a From or To of the root, is an error.
func (s *Set) Move(moves ...Move) (*Set, error) {
	var arr [8]int32
	at, some, err := s.moveSources(arr[:0], moves)
	if err != nil || !some {
		return s, err
	}
	b := builder{nodes: make([]bnode, 0, 1+len(s.nodes)+8*len(moves))}
	b.reset()
	copyExcept(&b, 0, s, 0, at, true)
	for i, m := range moves {
		if at[i] < 0 || m.To == nil {
			continue
		}
		dst := int32(0)
		for _, e := range m.To {
			kind, name, ok := elemText(e, nil)
			if !ok {
				return nil, errorf(m.To, "element %s cannot be part of a field set", e)
			}
			dst = b.find(dst, kind, name)
		}
		b.nodes[dst].member = b.nodes[dst].member || s.nodes[at[i]].member
		copyExcept(&b, dst, s, at[i], at, false)
	}
	out, _ := b.freeze()
	return out, nil
}

// moveSources appends to at, per move, s's node at its From, or -1 when
// the move takes nothing (s has no node there, or an earlier move's From
// is at or above it), and says whether any move takes a node.
func (s *Set) moveSources(at []int32, moves []Move) ([]int32, bool, error) {
	some := false
	for i, m := range moves {
		n, err := s.nodeAt(m.From)
		if err != nil {
			return nil, false, err
		}
		if m.To != nil && len(m.To) == 0 {
			return nil, false, errorf(m.To, "the root cannot be owned")
		}
		for k := n; k >= 0 && n >= 0; k = s.parentOf(k) {
			if slices.Contains(at[:i], k) {
				n = -1
			}
		}
		at = append(at, n)
		some = some || n >= 0
	}
	return at, some, nil
}

// nodeAt returns the index of s's node at path p, -1 when s has none.
func (s *Set) nodeAt(p diff.Path) (int32, error) {
	at := s.root()
	for _, e := range p {
		kind, name, ok := elemText(e, nil)
		if !ok {
			return -1, errorf(p, "element %s cannot be part of a field set", e)
		}
		if at = s.child(at, kind, name); at < 0 {
			return -1, nil
		}
	}
	if len(p) == 0 {
		return -1, errorf(p, "the root cannot be moved")
	}
	return at, nil
}

// parentOf returns the index of node i's parent, -1 for the root. Blocks
// are laid out after their parent, so it searches the nodes before i.
func (s *Set) parentOf(i int32) int32 {
	for k := i - 1; k >= 0; k-- {
		if s.nodes[k].lo <= i && i < s.nodes[k].hi {
			return k
		}
	}
	return -1
}

// copyExcept copies the children of s's node si, and below, onto builder
// node at, leaving out the nodes in skip with what lies below them. fresh
// says at has no children yet: they are added, not looked up.
func copyExcept(b *builder, at int32, s *Set, si int32, skip []int32, fresh bool) {
	for c := s.nodes[si].lo; c < s.nodes[si].hi; c++ {
		if slices.Contains(skip, c) {
			continue
		}
		n := &s.nodes[c]
		var k int32
		if fresh {
			k = b.add(at, n.kind, n.name, n.member)
		} else {
			k = b.find(at, n.kind, n.name)
			b.nodes[k].member = b.nodes[k].member || n.member
		}
		copyExcept(b, k, s, c, skip, fresh)
	}
}
