package ownership

import "github.com/steady-go/steady/diff"

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
