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

func combineAt(b *builder, at int32, s *Set, si int32, t *Set, ti int32, op setOp) {
	sm := si >= 0 && s.nodes[si].member
	tm := ti >= 0 && t.nodes[ti].member
	if at != 0 {
		switch op {
		case opUnion:
			b.nodes[at].member = sm || tm
		case opDifference:
			b.nodes[at].member = sm && !tm
		case opIntersect:
			b.nodes[at].member = sm && tm
		case opWithout:
			b.nodes[at].member = sm
		}
	}
	if op == opUnion {
		var i, ie, j, je int32
		if si >= 0 {
			i, ie = s.nodes[si].lo, s.nodes[si].hi
		}
		if ti >= 0 {
			j, je = t.nodes[ti].lo, t.nodes[ti].hi
		}
		for i < ie || j < je {
			c := 0
			switch {
			case i >= ie:
				c = 1
			case j >= je:
				c = -1
			default:
				c = cmpElem(s.nodes[i].kind, s.nodes[i].name, t.nodes[j].kind, t.nodes[j].name)
			}
			switch {
			case c < 0:
				n := b.add(at, s.nodes[i].kind, s.nodes[i].name, false)
				combineAt(b, n, s, i, t, -1, op)
				i++
			case c > 0:
				n := b.add(at, t.nodes[j].kind, t.nodes[j].name, false)
				combineAt(b, n, s, -1, t, j, op)
				j++
			default:
				n := b.add(at, s.nodes[i].kind, s.nodes[i].name, false)
				combineAt(b, n, s, i, t, j, op)
				i++
				j++
			}
		}
		return
	}
	if si < 0 {
		return
	}
	for c := s.nodes[si].lo; c < s.nodes[si].hi; c++ {
		sc := s.nodes[c]
		tc := t.child(ti, sc.kind, sc.name)
		if op == opWithout && tc >= 0 && t.nodes[tc].member {
			continue
		}
		if op == opIntersect && tc < 0 {
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
