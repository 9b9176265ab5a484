package ownership

import (
	"slices"

	"github.com/steady-go/steady/diff"
)

// descend pushes the others' frame for child (kind, name) of frame off.
func (w *applyWalk) descend(off int, kind uint8, name string) int {
	n := len(w.others)
	next := len(w.ost)
	for i := 0; i < n; i++ {
		w.ost = append(w.ost, w.others[i].child(w.ost[off+i], kind, name))
	}
	w.path = append(w.path, pelem{kind, name})
	return next
}

// cursors pushes, for a caller visiting the children of frame off in
// sorted order, one cursor per other entry into its children, and returns
// their mark for descendSorted; pop them with w.cur = w.cur[:mark].
func (w *applyWalk) cursors(off int) int {
	mark := len(w.cur)
	for i, s := range w.others {
		c := int32(-1)
		if o := w.ost[off+i]; o >= 0 {
			c = s.nodes[o].lo
		}
		w.cur = append(w.cur, c)
	}
	return mark
}

// descendSorted is descend for children visited in increasing order: it
// advances the cursors at mark instead of searching.
func (w *applyWalk) descendSorted(off, mark int, kind uint8, name string) int {
	next := len(w.ost)
	for i, s := range w.others {
		r := int32(-1)
		if o := w.ost[off+i]; o >= 0 {
			c, hi := w.cur[mark+i], s.nodes[o].hi
			for c < hi && cmpElem(s.nodes[c].kind, s.nodes[c].name, kind, name) < 0 {
				c++
			}
			w.cur[mark+i] = c
			if c < hi && s.nodes[c].kind == kind && s.nodes[c].name == name {
				r = c
			}
		}
		w.ost = append(w.ost, r)
	}
	w.path = append(w.path, pelem{kind, name})
	return next
}

func (w *applyWalk) ascend(off int) {
	w.ost = w.ost[:off]
	w.path = w.path[:len(w.path)-1]
}

// owned reports whether any other entry owns frame off or below.
func (w *applyWalk) owned(off int) bool {
	for i := range w.others {
		if w.ost[off+i] >= 0 {
			return true
		}
	}
	return false
}

// changedHere records that the value at the current path changes: every
// other entry owning it or anything below conflicts (or, for the
// applier's own Update entry, silently loses it).
func (w *applyWalk) changedHere(off int) {
	for i, s := range w.others {
		o := w.ost[off+i]
		if o < 0 {
			continue
		}
		e := w.managed[w.entries[i]]
		w.strips = append(w.strips, strip{entry: w.entries[i], path: slices.Clone(w.path)})
		if e.Manager == w.manager {
			continue
		}
		base := w.diffPath()
		s.eachMember(o, base, func(p diff.Path) {
			w.conflicts = append(w.conflicts, Conflict{Manager: e.Manager, Operation: e.Operation, Path: p})
		})
	}
}

func (w *applyWalk) diffPath() diff.Path {
	p := make(diff.Path, len(w.path))
	for i, e := range w.path {
		p[i] = toElement(e.kind, e.name)
	}
	return p
}

func (w *applyWalk) errorf(format string, args ...any) error {
	return errorf(w.diffPath(), format, args...)
}

// eachMember calls f with every member path at or below node i, where i
// is at path base.
func (s *Set) eachMember(i int32, base diff.Path, f func(diff.Path)) {
	n := s.nodes[i]
	if n.member {
		f(base)
	}
	for c := n.lo; c < n.hi; c++ {
		s.eachMember(c, base.Append(toElement(s.nodes[c].kind, s.nodes[c].name)), f)
	}
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

// newManaged assembles the ownership record after a successful apply.
func (w *applyWalk) newManaged(applyIdx int, set *Set) Managed {
	out := make(Managed, 0, len(w.managed)+1)
	for i, e := range w.managed {
		if i == applyIdx {
			if !set.Empty() {
				out = append(out, Entry{Manager: w.manager, Operation: OpApply, Set: set})
			}
			continue
		}
		s := e.Set
		if st := w.stripsOf(i); st != nil {
			s = s.Without(st)
		}
		if !s.Empty() {
			out = append(out, e)
			out[len(out)-1].Set = s
		}
	}
	if applyIdx < 0 && !set.Empty() {
		out = append(out, Entry{Manager: w.manager, Operation: OpApply, Set: set})
	}
	return out
}

// stripsOf returns the set of paths taken from entry i, or nil.
func (w *applyWalk) stripsOf(i int) *Set {
	var b builder
	for _, st := range w.strips {
		if st.entry != i {
			continue
		}
		if b.nodes == nil {
			b.reset()
		}
		at := int32(0)
		for _, e := range st.path {
			at = b.find(at, e.kind, e.name)
		}
		b.nodes[at].member = true
	}
	if b.nodes == nil {
		return nil
	}
	s, _ := b.freeze()
	return s
}
