package ownership

import (
	"slices"

	"github.com/steady-go/steady/diff"
)

// builder accumulates a trie in any order and freezes it into a Set.
type builder struct {
	nodes []bnode
}

type bnode struct {
	name        string
	kind        uint8
	member      bool
	alive       bool
	parent      int32
	first, last int32 // children, linked through next
	next        int32
}

// reset empties b, leaving only the root.
func (b *builder) reset() {
	b.nodes = append(b.nodes[:0], bnode{parent: -1, first: -1, last: -1, next: -1})
}

// add appends a child to parent and returns its index. Siblings may come in
// any order; freeze sorts them and reports duplicates.
func (b *builder) add(parent int32, kind uint8, name string, member bool) int32 {
	i := int32(len(b.nodes))
	b.nodes = append(b.nodes, bnode{name: name, kind: kind, member: member, parent: parent, first: -1, last: -1, next: -1})
	p := &b.nodes[parent]
	if p.last < 0 {
		p.first = i
	} else {
		b.nodes[p.last].next = i
	}
	p.last = i
	return i
}

// find returns parent's child (kind, name), adding it if missing. It scans
// the siblings, so it suits small builds (NewSet, set operations on paths).
func (b *builder) find(parent int32, kind uint8, name string) int32 {
	for c := b.nodes[parent].first; c >= 0; c = b.nodes[c].next {
		if b.nodes[c].kind == kind && b.nodes[c].name == name {
			return c
		}
	}
	return b.add(parent, kind, name, false)
}

// freeze lays the live part of the trie out in the canonical order (see
// Set), siblings sorted. Nodes that are not members and have no member
// below are dropped. If two siblings are equal, freeze returns the builder
// index of one of them as dup (else -1); the Set is then still valid but
// holds only one of them.
func (b *builder) freeze() (s *Set, dup int32) {
	n := 0
	for i := len(b.nodes) - 1; i > 0; i-- {
		bn := &b.nodes[i]
		if bn.member || bn.alive {
			bn.alive = true
			b.nodes[bn.parent].alive = true
			n++
		}
	}
	if !b.nodes[0].alive {
		return &Set{}, -1
	}
	f := freezer{b: b, out: make([]node, 1, n+1), dup: -1}
	f.expand(0, 0)
	return &Set{nodes: f.out}, f.dup
}

type freezer struct {
	b   *builder
	out []node
	dup int32
}

// expand reserves the block of out[k]'s children (src is its builder
// node), sorts it, and expands each child in order.
func (f *freezer) expand(k int32, src int32) {
	lo := int32(len(f.out))
	for c := f.b.nodes[src].first; c >= 0; c = f.b.nodes[c].next {
		bc := &f.b.nodes[c]
		if bc.alive {
			f.out = append(f.out, node{name: bc.name, kind: bc.kind, member: bc.member, hi: c})
		}
	}
	hi := int32(len(f.out))
	kids := f.out[lo:hi]
	if !sortedNodes(kids) {
		slices.SortFunc(kids, func(x, y node) int { return cmpElem(x.kind, x.name, y.kind, y.name) })
		for i := 1; i < len(kids); i++ {
			if kids[i].kind == kids[i-1].kind && kids[i].name == kids[i-1].name {
				f.dup = kids[i].hi
			}
		}
	}
	if lo == hi {
		lo, hi = 0, 0 // leaves have an empty block at 0, as Apply builds them
	}
	f.out[k].lo, f.out[k].hi = lo, hi
	for c := lo; c < hi; c++ {
		f.expand(c, f.out[c].hi)
	}
}

func sortedNodes(kids []node) bool {
	for i := 1; i < len(kids); i++ {
		if cmpElem(kids[i-1].kind, kids[i-1].name, kids[i].kind, kids[i].name) >= 0 {
			return false
		}
	}
	return true
}

// pathOf rebuilds the path of builder node i.
func (b *builder) pathOf(i int32) diff.Path {
	var p diff.Path
	for ; i > 0; i = b.nodes[i].parent {
		p = append(p, toElement(b.nodes[i].kind, b.nodes[i].name))
	}
	slices.Reverse(p)
	return p
}
