package jsonscan

// ChangedScalars reads two JSON values token by token and returns the paths
// (object keys, below root) of the scalars whose text differs, without
// building either tree: both values have the same object keys in the same
// order, and a change inside an array or of a value's kind is not a scalar
// change. It reports false when the values differ in any other way (a key
// added, removed or reordered, a change of kind among object, array, null
// and other scalars, any difference inside an array), when more than max
// scalars changed, or when either is not JSON that Decode accepts.
//
// A scalar whose text changed but not its value (1.0 for 1) is reported: the
// caller decides what a change of text means.
func ChangedScalars(a, b []byte, root string, max int) ([][]string, bool) {
	var pathBuf [8]string
	path := append(pathBuf[:0], root)
	d := lockstep{a: scanner{b: a, s: string(a)}, b: scanner{b: b, s: string(b)}, max: max}
	if !d.compare(&path, false) || !d.a.atEnd() || !d.b.atEnd() {
		return nil, false
	}
	return d.changed, true
}

// lockstep is the state of ChangedScalars; the path being read is passed
// apart, so that the paths given to the caller do not make its stack buffer
// escape.
type lockstep struct {
	a, b    scanner
	changed [][]string
	max     int
}

func (d *lockstep) compare(path *[]string, strict bool) bool {
	a, b := &d.a, &d.b
	a.space()
	b.space()
	if a.i >= len(a.b) || b.i >= len(b.b) || len(*path) > maxDepth {
		return false
	}
	ca, cb := a.b[a.i], b.b[b.i]
	if ca == '{' || cb == '{' || ca == '[' || cb == '[' || ca == 'n' || cb == 'n' {
		if ca != cb {
			return false
		}
		switch ca {
		case '{':
			return d.object(path, strict)
		case '[':
			return d.array(path)
		}
		return a.word("null") && b.word("null")
	}
	return d.scalars(*path, strict)
}

// scalars compares two scalars at path, recording a change unless strict
// forbids it or max changes are recorded already.
func (d *lockstep) scalars(path []string, strict bool) bool {
	ta, errA := d.a.scalar()
	tb, errB := d.b.scalar()
	switch {
	case errA != nil || errB != nil:
		return false
	case ta == tb:
		return true
	case strict || len(d.changed) == d.max:
		return false
	}
	d.changed = append(d.changed, append([]string(nil), path...))
	return true
}

func (d *lockstep) object(path *[]string, strict bool) bool {
	a, b := &d.a, &d.b
	a.i++ // {
	b.i++
	a.space()
	b.space()
	endA, endB := a.byte('}'), b.byte('}')
	if endA || endB {
		return endA && endB
	}
	for {
		k, ok := d.key()
		if !ok {
			return false
		}
		*path = append(*path, k)
		ok = d.compare(path, strict)
		*path = (*path)[:len(*path)-1]
		if !ok {
			return false
		}
		switch d.next() {
		case ',':
		case '}':
			return true
		default:
			return false
		}
	}
}

// key reads the same object key, and the colon after it, from both.
func (d *lockstep) key() (string, bool) {
	a, b := &d.a, &d.b
	a.space()
	b.space()
	if a.i >= len(a.b) || a.b[a.i] != '"' || b.i >= len(b.b) || b.b[b.i] != '"' {
		return "", false
	}
	ka, errA := a.string()
	kb, errB := b.string()
	if errA != nil || errB != nil || ka != kb || d.next() != ':' {
		return "", false
	}
	return ka, true
}

// array requires both arrays to be equal item by item.
func (d *lockstep) array(path *[]string) bool {
	a, b := &d.a, &d.b
	a.i++ // [
	b.i++
	a.space()
	b.space()
	endA, endB := a.byte(']'), b.byte(']')
	if endA || endB {
		return endA && endB
	}
	for {
		if !d.compare(path, true) {
			return false
		}
		switch d.next() {
		case ',':
		case ']':
			return true
		default:
			return false
		}
	}
}

// next reads the same delimiter from both and returns it, or 0 when they
// differ or end.
func (d *lockstep) next() byte {
	a, b := &d.a, &d.b
	a.space()
	b.space()
	if a.i >= len(a.b) || b.i >= len(b.b) || a.b[a.i] != b.b[b.i] {
		return 0
	}
	c := a.b[a.i]
	a.i++
	b.i++
	return c
}
