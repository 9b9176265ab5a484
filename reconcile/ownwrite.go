package reconcile

import "github.com/steady-go/steady/store"

// isOwnWrite reports whether a watch event is only this manager's own write,
// which is not a hint: reacting to it would let a status write defeat
// backoff (crossplane#3455). It is true when
//
//   - the event is a Modified (creations and deletions are always hints: a
//     deletion's LastWrite names the last writer, not the deleter),
//   - LastWrite.Manager is self, and
//   - every changed path is owned by self after the write.
//
// Changes by other actors merged into the same event (a relist can merge
// writes) are paths self does not own, so they still make it a hint. An
// event that changes nothing and was written by self is an own write.
func isOwnWrite(self string, typ store.EventType, lastWriter string, changed []string, ownedBySelf func(path string) bool) bool {
	if typ != store.Modified || lastWriter != self {
		return false
	}
	for _, p := range changed {
		if !ownedBySelf(p) {
			return false
		}
	}
	return true
}
