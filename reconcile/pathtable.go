package reconcile

import (
	"slices"

	"github.com/steady-go/steady/diff"
)

// pathTable holds one copy of each path the Loop's oscillation detectors
// keep. A detector keeps the paths of a key's writes for a window (a
// minute by default), and a changed path comes from the ChangeFunc cut out
// of a chunk of its diff's arena, which it keeps alive whole: at 100,000
// keys that was about 450 bytes a key, most of the Loop's memory per key.
// A controller changes few distinct paths (its status fields, its
// conditions), the same for every key, so a key's detector can keep the
// table's copy instead. So does a key's detector keep the table's copy of
// the list of paths a write changed: a status write changes the same
// fields of every key, and a list of its own a write was 24 to 96 bytes
// of a detector's ~200; a detector that holds no path changed by another
// writer keeps the table's list of those a write brings as it is (see
// oscillation's changedByOthers), not a copy. Callers hold the Loop's lock.
type pathTable struct {
	paths []diff.Path
	// seen[i] is the path last found equal to paths[i] (the table's copy
	// at first), held so that its memory is not reused: a source judges
	// with the same few paths event after event (a Store's path of each
	// field of a struct status, built once), so one is known by its
	// address, without comparing its elements.
	seen  []diff.Path
	lists [][]diff.Path
	// single[i] is the table's list of paths[i] alone, once list made or
	// found it: a write that changed one field (a status field, another
	// writer's spec field) finds its list by the path's address alone
	// (listOf), without interning it and comparing the lists.
	single [][]diff.Path
}

// maxTablePaths bounds the table: paths that differ from key to key (a
// list item per object, say) are kept as they came once it is full, as
// they were before the table. maxTableLists bounds the lists the same way.
const (
	maxTablePaths = 64
	maxTableLists = 64
)

// intern replaces, in place, each path of ps by the table's equal copy,
// adding a compact copy of a path it does not hold while it has room.
// Equal paths are interchangeable for a detector, which compares paths
// with diff.Path.Equal.
func (t *pathTable) intern(ps []diff.Path) {
	for i, p := range ps {
		ps[i] = t.one(p)
	}
}

func (t *pathTable) one(p diff.Path) diff.Path {
	for i, q := range t.seen {
		if samePath(q, p) {
			return t.paths[i]
		}
	}
	for i, q := range t.paths {
		if q.Equal(p) {
			t.seen[i] = p // paths are never modified: p stays equal to q
			return q
		}
	}
	if len(t.paths) >= maxTablePaths {
		return p
	}
	q := slices.Clone(p)
	for i := range q {
		q[i].Keys = slices.Clone(q[i].Keys)
	}
	t.paths = append(t.paths, q)
	t.seen = append(t.seen, q)
	t.single = append(t.single, nil)
	return q
}

// listOf is list of ps once interned: the table's list of ps's paths.
// Its caller's ps may be interned in place or not. A list of one path
// the table saw at that address (seen) whose list alone it holds is
// found by that address: the Loop's observe calls it twice a write, with
// one path in most.
func (t *pathTable) listOf(ps []diff.Path) []diff.Path {
	if len(ps) == 0 {
		return nil
	}
	if len(ps) == 1 {
		for i, q := range t.seen {
			if samePath(q, ps[0]) {
				if l := t.single[i]; l != nil {
					return l
				}
				break
			}
		}
	}
	t.intern(ps)
	return t.list(ps)
}

// list returns the table's list of the same paths as ps in the same order,
// adding a copy of ps while it has room, and nil for an empty ps; a copy of
// ps the table does not hold once it is full (ps is its caller's, reused:
// see loopHooks.observeWrite). Callers intern ps's paths first, so that the
// paths of equal lists are the same copies, compared by address; a path
// the full table did not take makes ps's list one the table does not
// share. Callers never modify the list returned.
func (t *pathTable) list(ps []diff.Path) []diff.Path {
	if len(ps) == 0 {
		return nil
	}
	for _, q := range t.lists {
		if slices.EqualFunc(q, ps, samePath) {
			return q
		}
	}
	if len(t.lists) >= maxTableLists {
		return slices.Clone(ps)
	}
	q := slices.Clone(ps)
	t.lists = append(t.lists, q)
	if len(q) == 1 {
		t.noteSingle(q)
	}
	return q
}

// noteSingle records q, a list of one path, as the list of that path
// alone (single), when the path is the table's.
func (t *pathTable) noteSingle(q []diff.Path) {
	for i, p := range t.paths {
		if samePath(p, q[0]) {
			t.single[i] = q
			return
		}
	}
}

// samePath reports whether p and q are the same copy of a path.
func samePath(p, q diff.Path) bool {
	return len(p) == len(q) && (len(p) == 0 || &p[0] == &q[0])
}
