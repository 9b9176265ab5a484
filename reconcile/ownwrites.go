package reconcile

import (
	"maps"
	"sync"
	"sync/atomic"
)

// ownWrites knows a Loop's own writes by what its reconciles wrote, not by
// the manager name they wrote as: every revision a reconcile's ctx reports
// (the store's write observer, or RecordWrite) is remembered until a cache
// source sees it, and the manager that wrote it is learned then. A cache
// event is the Loop's own when its revision was written by a reconcile, or
// when its writer is a manager a reconcile of this Loop wrote as before. So
// a Loop named "apps" whose reconciler writes status as "app-controller"
// judges those writes as its own, exactly as when the names match.
//
// A write's event can reach a cache before the store reports the write to
// the reconcile's observer (the report follows the commit); then the event
// is judged by name alone. Only the first write under a new name can be
// missed that way, and a missed own write costs one extra reconcile. The
// revision is not remembered then (see early): its event came already,
// and no prune would drop it before the revisions double. Its writer is
// learned then, as it is when the report comes first, so that another
// cache's later event of the write is judged the same either way.
//
// A revision is remembered with the backend it was written to, since two
// backends' revisions are unrelated: a write to one store must not make
// another store's event at the same revision pass for the Loop's own. A
// revision of no known backend (RecordWrite's) matches an event of any.
type ownWrites struct {
	on   atomic.Bool // a cache source judges writes: record them
	mu   sync.Mutex
	revs map[ownRev]struct{} // by backend (its number) and revision
	// backends numbers the backends of revs' revisions: backends[i] is
	// number i+1, and uses[i] counts the revisions of revs written to
	// it. A number that no revision uses is free (nil) for the next new
	// backend, so the list holds only backends with revisions pending.
	backends []any
	uses     []int
	// anyRevs counts the revisions in revs of no known backend: while
	// there are none, an event's revision is looked up once, not twice.
	anyRevs int
	names   map[string]struct{}
	prune   int // len(revs) past which wrote prunes: twice what the last prune kept
	// early holds the last events seen whose revision revs did not hold,
	// next the slot of the next: wrote does not keep a revision a cache
	// delivered before the store reported it (it would stay until a
	// prune). The window is a write's commit to its report, a few events
	// at most; one that falls out of early only waits for a prune, as all
	// did before.
	early [earlyRevs]sighting
	next  int
}

// ownRev is a revision a reconcile wrote, and the number of the backend
// it was written to (ownWrites.backends), 0 for none known. A key of two
// integers hashes and compares inline; one that held the backend itself,
// an interface, cost a call of its type's hash and equality per map
// operation, about 250 instructions per write and 370 per event of it
// (BenchmarkEventToReconcile/steady, callgrind).
type ownRev struct {
	b   int
	rev int64
}

// numberLocked returns the number of backend b in revs' keys: 0 for nil,
// -1 for a backend that has none when add is false, and a new number
// (a free one, or the next) when add is true.
func (o *ownWrites) numberLocked(b any, add bool) int {
	if b == nil {
		return 0
	}
	free := -1
	for i, x := range o.backends {
		if x == b { // b is comparable (backendID), and never nil here
			return i + 1
		}
		if x == nil && free < 0 {
			free = i
		}
	}
	switch {
	case !add:
		return -1
	case free >= 0:
		o.backends[free] = b
		return free + 1
	}
	o.backends = append(o.backends, b)
	o.uses = append(o.uses, 0)
	return len(o.backends)
}

// backendOf returns the backend of number n (0: nil, none known).
func (o *ownWrites) backendOf(n int) any {
	if n == 0 {
		return nil
	}
	return o.backends[n-1]
}

// addLocked adds k to revs, counting it for its backend when new.
func (o *ownWrites) addLocked(k ownRev) {
	n := len(o.revs)
	o.revs[k] = struct{}{}
	if len(o.revs) == n {
		return
	}
	if k.b == 0 {
		o.anyRevs++
	} else {
		o.uses[k.b-1]++
	}
}

// forgetLocked deletes k from revs, and reports whether revs held it. It
// tells by the map's length: a delete, not a lookup and a delete. The
// number of a backend left with no revision is freed.
func (o *ownWrites) forgetLocked(k ownRev) bool {
	n := len(o.revs)
	delete(o.revs, k)
	if len(o.revs) == n {
		return false
	}
	if k.b == 0 {
		o.anyRevs--
	} else if o.uses[k.b-1]--; o.uses[k.b-1] == 0 {
		o.backends[k.b-1] = nil
	}
	return true
}

// earlyRevs is how many of the last unmatched events wrote looks through:
// each write scans them all.
const earlyRevs = 16

// sighting is an event of revision rev of backend b whose revision revs
// did not hold, by manager when judged by own ("" when by seen: the
// Loop's names need no learning, and no write is by "").
type sighting struct {
	b       any
	rev     int64
	manager string
}

// sawEarlyLocked remembers an event revs did not hold, in case its
// revision is reported after it.
func (o *ownWrites) sawEarlyLocked(b any, rev int64, manager string) {
	o.early[o.next] = sighting{b: b, rev: rev, manager: manager}
	o.next = (o.next + 1) % earlyRevs
}

// seenEarlyLocked reports whether an event of revision rev of backend b
// (of any backend when b is nil, as an own lookup matches it) was seen
// before wrote was told of it, learning its writer as one of the Loop's
// (each such event's: two caches can have seen it).
func (o *ownWrites) seenEarlyLocked(b any, rev int64) bool {
	seen := false
	for i := range o.early {
		s := &o.early[i]
		if s.rev != rev || (b != nil && s.b != b) {
			continue
		}
		if s.manager != "" {
			o.learnLocked(s.manager)
		}
		seen = true
	}
	return seen
}

// maxOwnRevs bounds the revisions remembered: past it, those that every
// cache has already passed (they will never be judged) are dropped. While
// the caches lag, a prune drops few, so the next waits until the revisions
// have doubled: a prune scans them all, and each write must not.
const maxOwnRevs = 1024

// wrote records a revision a reconcile wrote to backend b. floor returns
// the lowest revision every cache over a backend reflects; it is called
// only to prune.
func (o *ownWrites) wrote(b any, rev int64, floor func(b any) int64) {
	if rev <= 0 || !o.on.Load() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seenEarlyLocked(b, rev) {
		return
	}
	if o.revs == nil {
		o.revs = map[ownRev]struct{}{}
	}
	o.addLocked(ownRev{b: o.numberLocked(b, true), rev: rev})
	if n := len(o.revs); n > max(o.prune, maxOwnRevs) {
		floors := map[int]int64{}
		for r := range o.revs {
			f, ok := floors[r.b]
			if !ok {
				f = floor(o.backendOf(r.b))
				floors[r.b] = f
			}
			if r.rev <= f {
				o.forgetLocked(r)
			}
		}
		o.prune = 2 * len(o.revs)
		if len(o.revs) < n/4 {
			// A map keeps the room it grew to: revisions a cache never
			// delivers one by one (a relist skips them) filled it while
			// the cache lagged, ~80 bytes each.
			o.revs = maps.Collect(maps.All(o.revs))
		}
	}
}

// seen forgets the revision rev of backend b, if a reconcile wrote it: a
// cache delivered its write under a name that judges it without the
// revision (the reconciler's or the Loop's own manager). Kept, it would
// wait for a prune after every cache passed it, and prunes wait for the
// revisions to double.
func (o *ownWrites) seen(b any, rev int64) {
	if !o.on.Load() {
		return
	}
	o.mu.Lock()
	if !o.dropLocked(b, rev) {
		o.sawEarlyLocked(b, rev, "")
	}
	o.mu.Unlock()
}

// dropLocked deletes revision rev of backend b from revs or, when revs
// does not hold it, revision rev of no known backend, and reports whether
// it deleted one.
func (o *ownWrites) dropLocked(b any, rev int64) bool {
	if len(o.revs) == 0 {
		return false
	}
	if n := o.numberLocked(b, false); n >= 0 && o.forgetLocked(ownRev{b: n, rev: rev}) {
		return true
	}
	if b == nil || o.anyRevs == 0 {
		return false
	}
	return o.forgetLocked(ownRev{rev: rev})
}

// own reports whether the write of revision rev to backend b by manager is
// the Loop's own, learning manager as one of the Loop's when rev was.
func (o *ownWrites) own(b any, manager string, rev int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dropLocked(b, rev) {
		o.learnLocked(manager)
		return true
	}
	o.sawEarlyLocked(b, rev, manager)
	if len(o.names) == 0 { // most Loops' reconciles write as its manager alone
		return false
	}
	_, ok := o.names[manager]
	return ok
}

// learnLocked knows manager as one a reconcile of the Loop wrote as.
func (o *ownWrites) learnLocked(manager string) {
	if o.names == nil {
		o.names = map[string]struct{}{}
	}
	o.names[manager] = struct{}{}
}
