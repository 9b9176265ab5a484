package ownership

import (
	"slices"
	"strings"

	"github.com/steady-go/steady/diff"
)

// Attribute answers who changed which field: it splits the paths of a change
// (the fields that differ between two states of an object, as diff.Diff
// reports them) into those manager owns and the rest, foreign, using the
// object's ownership before and after the change. A path is owned by manager
// when:
//
//   - after the change, manager owns it or a field above it; or
//   - after the change, fields below it are owned by manager and by no
//     other manager, and no other manager owns it or a field above it (an
//     added or removed subtree that is manager's alone); or
//   - nobody owns it, or anything below it, after the change (it was removed,
//     or reset to a zero value that a typed object cannot tell from absent)
//     and one of the above held before.
//
// Every other path is foreign. Both results keep the order of changed.
//
// This is how a controller tells its own writes from other actors' changes
// field by field: a change whose every path is owned by its manager is its
// own echo; a foreign path is someone else's, worth reconciling.
func Attribute(manager string, changed []diff.Path, before, after Managed) (owned, foreign []diff.Path) {
	if len(changed) == 0 {
		return nil, nil
	}
	// One array holds both: owned from the front, foreign from the back,
	// then put back in order.
	buf := make([]diff.Path, len(changed))
	n, f := 0, len(buf)
	for _, p := range changed {
		if attributed(manager, p, before, after) {
			buf[n] = p
			n++
		} else {
			f--
			buf[f] = p
		}
	}
	slices.Reverse(buf[f:])
	if n > 0 {
		owned = buf[:n:n]
	}
	if f < len(buf) {
		foreign = buf[f:]
	}
	return owned, foreign
}

// AttributeAppend is Attribute for a caller that keeps its own lists: it
// appends the paths of changed that manager owns to owned and the rest to
// foreign, each in the order of changed, and returns the two. Their arrays
// are the caller's: a caller that judges change after change into the
// same two, emptied, allocates no list. (Looking up a path through a list
// item, .conditions[type="Ready"].status say, still allocates its item's
// name, as Attribute does; a path of fields alone allocates nothing.)
func AttributeAppend(owned, foreign []diff.Path, manager string, changed []diff.Path, before, after Managed) ([]diff.Path, []diff.Path) {
	for _, p := range changed {
		if attributed(manager, p, before, after) {
			owned = append(owned, p)
		} else {
			foreign = append(foreign, p)
		}
	}
	return owned, foreign
}

// attributed reports whether Attribute gives p to manager.
func attributed(manager string, p diff.Path, before, after Managed) bool {
	mine, anyone := owns(manager, p, after)
	if !anyone {
		mine, _ = owns(manager, p, before)
	}
	return mine
}

// ChangedBy answers who made a changed path p, for a change that may merge
// several writes (a cache that relists after its watch expired shows them
// as one): it reports whether manager made it, judged from the ownership
// after the change (after) and the manager of the change's last write
// (writer). p is writer's when writer owns it after the change (as
// Attribute decides ownership) or nobody does (it was removed); otherwise
// it was made by a manager that owns it then, so it is manager's when
// manager is among them.
//
// This is exact for a single write: Update and Apply leave the writer
// owning every field they set, and a field they remove has no owner. For a
// merged change it tells apart the fields of managers that write disjoint
// fields; of several managers setting one field, the last writer gets it.
func ChangedBy(manager, writer string, p diff.Path, after Managed) bool {
	if w, anyone := owns(writer, p, after); w || !anyone {
		return manager == writer
	}
	mine, _ := owns(manager, p, after)
	return mine
}

// owns reports whether manager owns p in m (p or a field above it, or fields
// below it that no other manager shares), and whether anyone owns p, a field
// above it or a field below it.
func owns(manager string, p diff.Path, m Managed) (mine, anyone bool) {
	below, othersBelow := false, false
	for _, e := range m {
		if hasPathOrAbove(e.Set, p) {
			if e.Manager == manager {
				return true, true
			}
			anyone = true
		}
		if hasBelow(e.Set, p) {
			anyone = true
			if e.Manager == manager {
				below = true
			} else {
				othersBelow = true
			}
		}
	}
	return below && !othersBelow && !ownedAboveByOthers(manager, p, m), anyone
}

// ownedAboveByOthers reports whether a manager other than manager owns p or
// a field above it.
func ownedAboveByOthers(manager string, p diff.Path, m Managed) bool {
	for _, e := range m {
		if e.Manager != manager && hasPathOrAbove(e.Set, p) {
			return true
		}
	}
	return false
}

func hasPathOrAbove(s *Set, p diff.Path) bool {
	for i := len(p); i > 0; i-- {
		if s.Has(p[:i]) {
			return true
		}
	}
	return false
}

// hasBelow reports whether a member of s lies strictly below p. It walks
// the trie to p's node, as Has does, and looks under it, listing no
// members: Attribute asks it for every changed path of every manager.
func hasBelow(s *Set, p diff.Path) bool {
	i := s.root()
	var arr [64]byte
	for _, e := range p {
		kind, name, ok := elemText(e, arr[:0])
		if !ok {
			return false
		}
		if i = s.child(i, kind, name); i < 0 {
			return false
		}
	}
	return i >= 0 && s.memberUnder(i)
}

// memberUnder reports whether a descendant of node i is a member.
func (s *Set) memberUnder(i int32) bool {
	for c := s.nodes[i].lo; c < s.nodes[i].hi; c++ {
		if s.nodes[c].member || s.memberUnder(c) {
			return true
		}
	}
	return false
}

// DecodeNodes is Decode for an encoding that names only fields and list
// items the codec's object has: one made by Encode from a set of the
// object's own nodes (a bitmap, with no path encoded in full). It reports
// false for any other text, for one that does not decode and for the empty
// set. Every member of a set it returns is a node of the object, so no
// member lies below a scalar or inside a value the schema makes atomic: a
// store can then reason about the record from the object's shape alone.
func (c *Codec) DecodeNodes(text string) (*Set, bool) {
	if text == "" || text[0] != relPrefix || strings.IndexByte(text, '|') >= 0 {
		return nil, false
	}
	s, err := c.Decode(text)
	if err != nil || s.Empty() {
		return nil, false
	}
	return s, true
}
