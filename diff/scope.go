package diff

// walker is the state Diff and Hash share while descending a value: the
// options, the path to the current node, and where the node stands relative
// to the Only and Ignore paths.
type walker struct {
	cfg  config
	path []Element
	// idx holds the Only and Ignore paths still matching, for every node on
	// the current path, as spans; it grows and shrinks with the path.
	idx []int32
}

// scope is where a node stands relative to the Only and Ignore paths.
type scope struct {
	// free: no option path continues below; every descendant is included.
	free bool
	// in: an Only path is a prefix of the node (or there is no Only path),
	// so differences here are reported.
	in bool
	// only and ignore are the option paths the node is a strict prefix of:
	// [lo, hi) spans of walker.idx.
	onlyLo, onlyHi, ignLo, ignHi int32
}

func (w *walker) rootScope() (scope, bool) {
	s := scope{in: len(w.cfg.only) == 0}
	for _, p := range w.cfg.only {
		if len(p) == 0 {
			s.in = true
		}
	}
	if !s.in {
		s.onlyLo = int32(len(w.idx))
		for i, p := range w.cfg.only {
			if len(p) > 0 {
				w.idx = append(w.idx, int32(i))
			}
		}
		s.onlyHi = int32(len(w.idx))
	}
	s.ignLo = int32(len(w.idx))
	for i, p := range w.cfg.ignore {
		if len(p) == 0 {
			return s, false
		}
		w.idx = append(w.idx, int32(i))
	}
	s.ignHi = int32(len(w.idx))
	s.free = s.in && s.ignHi == s.ignLo
	return s, true
}

// enter pushes e and returns the child's scope; ok is false when the child
// is left out. Every enter is followed by leave(child), ok or not.
func (w *walker) enter(s scope, e Element, it item) (child scope, ok bool) {
	w.path = append(w.path, e)
	if s.free {
		return s, true
	}
	return w.childScope(s, e, it)
}

// leave pops the element pushed by the enter that returned child.
func (w *walker) leave(child scope) {
	w.path = w.path[:len(w.path)-1]
	if !child.free {
		w.idx = w.idx[:child.onlyLo]
	}
}

func (w *walker) childScope(s scope, e Element, it item) (scope, bool) {
	depth := len(w.path) - 1 // index of e in the path
	c := scope{in: s.in, onlyLo: int32(len(w.idx))}
	for _, i := range w.idx[s.onlyLo:s.onlyHi] {
		p := w.cfg.only[i]
		if !filterMatches(p[depth], e, it, false) {
			continue
		}
		if len(p) == depth+1 {
			c.in = true
		} else {
			w.idx = append(w.idx, i)
		}
	}
	if c.in {
		w.idx = w.idx[:c.onlyLo]
	}
	c.onlyHi = int32(len(w.idx))
	c.ignLo = c.onlyHi
	skip := !c.in && c.onlyHi == c.onlyLo
	for _, i := range w.idx[s.ignLo:s.ignHi] {
		p := w.cfg.ignore[i]
		if !filterMatches(p[depth], e, it, true) {
			continue
		}
		if len(p) == depth+1 {
			skip = true
			break
		}
		w.idx = append(w.idx, i)
	}
	c.ignHi = int32(len(w.idx))
	c.free = c.in && c.ignHi == c.ignLo
	if c.free {
		w.idx = w.idx[:c.onlyLo]
	}
	return c, !skip
}

// filterMatches reports whether an option path's element f selects the
// walked element e, whose list item (if any) is it. A key or value element
// selects items by content, whatever element the walk uses for them; see
// item.matches for pairs. ignore says f belongs to an Ignore path.
func filterMatches(f, e Element, it item, ignore bool) bool {
	switch f.Kind {
	case FieldElem:
		return e.Kind == FieldElem && e.Name == f.Name
	case IndexElem:
		return e.Kind == IndexElem && e.Index == f.Index
	case KeyElem, ValueElem:
		if e.Kind == f.Kind && f.Equal(e) {
			return true
		}
		if e.Kind == FieldElem || !it.valid() {
			return false
		}
		return it.matches(f, ignore)
	}
	return false
}

// listSpec returns how the list at the current path is matched: an option
// naming the path's schema path wins over the field's tag.
func (w *walker) listSpec(tag listSpec) listSpec {
	if len(w.cfg.lists) == 0 {
		return tag
	}
	for i := len(w.cfg.lists) - 1; i >= 0; i-- {
		r := &w.cfg.lists[i]
		if w.atSchemaPath(r.path) {
			return listSpec{mode: r.mode, keys: r.keys}
		}
	}
	return tag
}

// atSchemaPath reports whether the field elements of the current path are
// names.
func (w *walker) atSchemaPath(names []string) bool {
	n := 0
	for _, e := range w.path {
		if e.Kind != FieldElem {
			continue
		}
		if n >= len(names) || names[n] != e.Name {
			return false
		}
		n++
	}
	return n == len(names)
}

// record returns a copy of the current path.
func (w *walker) record() Path {
	p := make(Path, len(w.path))
	copy(p, w.path)
	return p
}
