package reconcile

import (
	"maps"
	"sync"
	"sync/atomic"

	"github.com/steady-go/steady/reconcile/oscillation"
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
// Each revision a store reports is remembered with its author, the key
// whose reconcile wrote it, so that the sources judge an own write per key
// (see cacheSource.judgeLater): no hint for its author, a hint for every
// other key. The common write, of the author's own object, goes to revs,
// which keeps no key and costs what it did before authors were known;
// any other (a write of another key's object, or RecordWrite's, whose
// author is unknown) goes to others, with its author.
//
// A write's event can reach a cache before the store reports the write to
// the reconcile's observer (the report follows the commit); then the event
// is judged by name alone. Only the first write under a new name can be
// missed that way, and a missed own write costs one extra reconcile. The
// revision is not remembered then (see early): its event came already,
// and no prune would drop it before the revisions double. Its writer is
// learned then, as it is when the report comes first, so that another
// cache's later event of the write is judged the same either way. The
// keys such an event did not hint are kept with it (missed), and the late
// report returns those that are not its author's, for the Loop to add then.
//
// An event judged the Loop's own by name before its report is held back
// from the oscillation detector too (see earlyWrite): the report decides
// whether the detector hears it as the Loop's own write or, when a
// reconcile of another key wrote the object, as another writer's change,
// as it would have had the report come first.
//
// A revision is remembered with the backend it was written to, since two
// backends' revisions are unrelated: a write to one store must not make
// another store's event at the same revision pass for the Loop's own. A
// revision of no known backend (RecordWrite's) matches an event of any.
type ownWrites struct {
	on   atomic.Bool // a cache source judges writes: record them
	mu   sync.Mutex
	revs revSet // by backend (its number) and revision
	// others holds the revisions whose author is not the written object's
	// name (see author): few, and looked in only when revs does not hold
	// an event's revision.
	others map[ownRev]author
	// backends numbers the backends of revs' and others' revisions:
	// backends[i] is number i+1, and uses[i] counts those written to
	// it. A number that no revision uses is free (nil) for the next new
	// backend, so the list holds only backends with revisions pending.
	backends []any
	uses     []int
	// anyRevs counts the revisions held of no known backend: while
	// there are none, an event's revision is looked up once, not twice.
	anyRevs int
	names   map[string]struct{}
	prune   int // held() past which wrote prunes: twice what the last prune kept
	// early holds the last events seen whose revision revs did not hold,
	// next the slot of the next: wrote does not keep a revision a cache
	// delivered before the store reported it (it would stay until a
	// prune). The window is a write's commit to its report, a few events
	// at most; one that falls out of early only waits for a prune, as all
	// did before.
	early [earlyRevs]sighting
	// earlyRev[i] is early[i].rev: each write scans these 16 alone, two
	// cache lines, not the sightings' 24.
	earlyRev [earlyRevs]int64
	// earlyMax is at least every revision in earlyRev: a write of a later
	// revision (the common one, reported before its event) was sighted
	// by none, and wrote skips the scan.
	earlyMax int64
	next     int
	// waiting counts the sightings that hold an earlyWrite: while there
	// are none, a detector's write need not look for one of its key.
	waiting atomic.Int32
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

// author names the key whose reconcile wrote a revision: of kind
// authorName, the written object's own name (no key kept: the common
// write); of kind authorKey, key. The zero author is unknown: a revision
// of RecordWrite, which names no object, or of a Loop whose keys are not
// strings. A write of an unknown author is judged as it was before
// authors were known: as the Loop's own, for every key.
type author struct {
	key  string
	kind uint8
}

const (
	authorUnknown = iota
	authorName
	authorKey
)

// authorOf returns the author of a write of object name made by the
// reconcile of key (keyed: the Loop's keys are strings; name "": no
// object named).
func authorOf(name, key string, keyed bool) author {
	switch {
	case !keyed || name == "":
		return author{}
	case name == key:
		return author{kind: authorName}
	}
	return author{key: key, kind: authorKey}
}

// keyOf returns the key of the author of a write of object name, and
// false when the author is unknown.
func (a author) keyOf(name string) (string, bool) {
	switch a.kind {
	case authorName:
		return name, true
	case authorKey:
		return a.key, true
	}
	return "", false
}

// held returns how many revisions are remembered.
func (o *ownWrites) held() int { return o.revs.len() + len(o.others) }

// addLocked adds k, written by its object's own key (authorName), to revs,
// counting it for its backend when new.
func (o *ownWrites) addLocked(k ownRev) {
	if o.revs.add(k) {
		o.countLocked(k, 1)
	}
}

// addOtherLocked is addLocked for a revision of another author (a), in
// others.
func (o *ownWrites) addOtherLocked(k ownRev, a author) {
	if o.others == nil {
		o.others = map[ownRev]author{}
	}
	n := len(o.others)
	if o.others[k] = a; len(o.others) > n {
		o.countLocked(k, 1)
	}
}

// countLocked counts k (d 1) or uncounts it (d -1) for its backend, whose
// number is freed when none of its revisions is held.
func (o *ownWrites) countLocked(k ownRev, d int) {
	if k.b == 0 {
		o.anyRevs += d
	} else if o.uses[k.b-1] += d; o.uses[k.b-1] == 0 {
		o.backends[k.b-1] = nil
	}
}

// forgetLocked deletes k from revs, and reports whether revs held it.
func (o *ownWrites) forgetLocked(k ownRev) bool {
	if !o.revs.remove(k) {
		return false
	}
	o.countLocked(k, -1)
	return true
}

// recentRevs is how many of revs' revisions a revSet keeps in its array:
// more than a Loop's writes whose events are on their way, in the usual
// run (a write is forgotten when its event comes, a few events later).
const recentRevs = 8

// revSet is a set of revisions: the latest added in an array, which add
// and remove scan, the rest (only while the caches lag, or of writes whose
// events they never deliver one by one) in a map. A revision the Loop
// wrote is added once and removed at its event, a few events later: a map
// insert and delete per write cost ~300 instructions per event of
// BenchmarkEventToReconcile/steady (callgrind), the scans of one or two
// held a few dozen.
type revSet struct {
	recent [recentRevs]ownRev // recent[:n] are held
	n      int
	more   map[ownRev]struct{} // those that did not fit in recent
	// morePeak is the most more held since it was made: a map keeps the
	// room of its peak, so remove lets a large one go once it is empty
	// (keepMore).
	morePeak int
}

// keepMore is the most revisions a revSet's map may have held for remove
// to keep it once empty: one grown while the caches lagged a burst behind
// (flat out at 10,000 objects, ~10,000 revisions and 213 KB) is let go once
// they caught up, where it stayed for good; a small one is kept, so that a
// lag that comes and goes does not make a map each time.
const keepMore = 64

// len returns how many revisions s holds.
func (s *revSet) len() int { return s.n + len(s.more) }

// add adds k, and reports whether s did not hold it. When recent is full,
// its lowest revision moves to more, to make room for k: the latest
// writes' events are the next to come.
func (s *revSet) add(k ownRev) bool {
	for _, r := range s.recent[:s.n] {
		if r == k {
			return false
		}
	}
	if len(s.more) > 0 {
		if _, ok := s.more[k]; ok {
			return false
		}
	}
	if s.n == len(s.recent) {
		low := 0
		for i := range s.recent {
			if s.recent[i].rev < s.recent[low].rev {
				low = i
			}
		}
		if s.more == nil {
			s.more = map[ownRev]struct{}{}
		}
		s.more[s.recent[low]] = struct{}{}
		s.morePeak = max(s.morePeak, len(s.more))
		s.n--
		s.recent[low] = s.recent[s.n]
	}
	s.recent[s.n] = k
	s.n++
	return true
}

// remove deletes k, and reports whether s held it. It tells by the map's
// length: a delete, not a lookup and a delete.
func (s *revSet) remove(k ownRev) bool {
	for i := range s.recent[:s.n] {
		if s.recent[i] == k {
			s.n--
			s.recent[i] = s.recent[s.n]
			return true
		}
	}
	if len(s.more) == 0 {
		return false
	}
	n := len(s.more)
	delete(s.more, k)
	if len(s.more) == 0 && s.morePeak > keepMore {
		s.more, s.morePeak = nil, 0
	}
	return len(s.more) < n
}

// forgetOtherLocked deletes k from others, and reports whether others
// held it, and its author.
func (o *ownWrites) forgetOtherLocked(k ownRev) (author, bool) {
	if len(o.others) == 0 {
		return author{}, false
	}
	a, ok := o.others[k]
	if !ok {
		return author{}, false
	}
	delete(o.others, k)
	o.countLocked(k, -1)
	return a, true
}

// forgetAnyLocked deletes k from revs or others, and reports whether
// either held it, and its author.
func (o *ownWrites) forgetAnyLocked(k ownRev) (author, bool) {
	if o.forgetLocked(k) {
		return author{kind: authorName}, true
	}
	return o.forgetOtherLocked(k)
}

// earlyRevs is how many of the last unmatched events wrote looks through:
// each write scans them all.
const earlyRevs = 16

// sighting is an event of revision rev of backend b whose revision was
// not held, by manager when judged by own ("" when by seen: the Loop's
// names need no learning, and no write is by ""). When the event was
// judged the Loop's own by its writer's name, its source tells the keys it
// did not hint (ownWrites.missed): missed holds them, and told is set. When
// the report comes first, reported is set and by is its author's key
// (unknown: byKnown false), for missed to answer at once.
type sighting struct {
	b       any
	rev     int64
	manager string
	missed  []string
	told    bool
	// reported: the write's report came; by is its author's key.
	reported, byKnown bool
	by                string
	// write is what the oscillation detector is to hear of the event,
	// once its author is known (see ownWrites.hold).
	write *earlyWrite
}

// earlyWrite is the oscillation detector's part of an event judged the
// Loop's own by its writer's name, before any report said which reconcile
// wrote it: as the Loop's own write (own, the writes cacheSource.observe
// makes of it), or as another writer's change (other), which it is when
// a reconcile of another key wrote the object (see judgeLater). Judging
// it own at once made a reconcile that writes another key's spec, on the
// occasions its event beat its report, look like that key's reconcile
// fighting another writer over the field. The paths are the earlyWrite's
// own copies.
type earlyWrite struct {
	key   string // the written object's name
	own   []oscillation.Write
	other oscillation.Write
}

// as returns the writes key's detector hears when the author of the write
// is the reconcile of key by (unknown when known is false: its own).
func (w *earlyWrite) as(by string, known bool) []oscillation.Write {
	if known && by != w.key {
		return []oscillation.Write{w.other}
	}
	return w.own
}

// heard is an earlyWrite decided: ws are for key's detector, in order.
type heard struct {
	key string
	ws  []oscillation.Write
}

// hold keeps w, of the event of revision rev of backend b that a source
// judged the Loop's own by name and reported with sawWrite or ownWrite,
// until the write's report names its author (wrote). It returns w decided
// at once when the report came already, or when the event's sighting is
// no longer in early (judged own, as every such event was before).
//
// A write held is heard when its report comes, or as the Loop's own (a
// write made under the Loop's name with a ctx other than a reconcile's is
// never reported): once no reconcile of the Loop runs (a report comes
// from the reconcile that made the write, before it returns), when its
// sighting falls out of early, or before a source judges or observes a
// later write of the same key, so that a detector hears every write in
// the order they were made.
func (o *ownWrites) hold(b any, rev int64, w *earlyWrite) heard {
	o.mu.Lock()
	defer o.mu.Unlock()
	for n := range earlyRevs { // the newest first: the event was seen last
		s := &o.early[(o.next-1-n+2*earlyRevs)%earlyRevs]
		if s.rev != rev || s.b != b || s.write != nil {
			continue
		}
		if s.reported {
			return heard{w.key, w.as(s.by, s.byKnown)}
		}
		s.write = w
		o.waiting.Add(1)
		return heard{}
	}
	return heard{w.key, w.own}
}

// take returns the writes held for key (for every key when all is set),
// as the Loop's own (see hold), and forgets them.
func (o *ownWrites) take(key string, all bool) []heard {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []heard
	for i := range o.early {
		if s := &o.early[i]; s.write != nil && (all || s.write.key == key) {
			out = append(out, o.decideLocked(s, "", false))
		}
	}
	return out
}

// decideLocked returns s's held write as its author (by, when known)
// makes it, and forgets it.
func (o *ownWrites) decideLocked(s *sighting, by string, known bool) heard {
	w := s.write
	s.write = nil
	o.waiting.Add(-1)
	return heard{w.key, w.as(by, known)}
}

// sawEarlyLocked remembers an event whose revision was not held, in case
// its revision is reported after it. It returns the write held by the
// sighting it replaces, as its own (see hold).
func (o *ownWrites) sawEarlyLocked(b any, rev int64, manager string) (out heard) {
	if s := &o.early[o.next]; s.write != nil {
		out = o.decideLocked(s, "", false)
	}
	o.early[o.next] = sighting{b: b, rev: rev, manager: manager}
	o.earlyRev[o.next] = rev
	o.earlyMax = max(o.earlyMax, rev)
	o.next = (o.next + 1) % earlyRevs
	return out
}

// seenEarlyLocked reports whether an event of revision rev of backend b
// (of any backend when b is nil, as an own lookup matches it) was seen
// before wrote was told of it, learning its writer as one of the Loop's
// (each such event's: two caches can have seen it). It appends to late
// the keys those events did not hint that are not the author's (by, of
// the write of object name), marks them as reported, and appends to h the
// writes they held, decided by the author.
func (o *ownWrites) seenEarlyLocked(b any, rev int64, name string, by author, late []string, h []heard) ([]string, []heard, bool) {
	seen := false
	for i := range o.earlyRev { // not range over the array: that copies it
		if o.earlyRev[i] != rev {
			continue
		}
		s := &o.early[i]
		if b != nil && s.b != b {
			continue
		}
		if s.manager != "" {
			o.learnLocked(s.manager)
		}
		seen = true
		key, known := by.keyOf(name)
		if s.told {
			late = notAuthors(late, s.missed, key, known)
		}
		// Reported even when told: hold, which comes after the sighting,
		// reads it too.
		s.reported, s.byKnown, s.by = true, known, key
		if s.write != nil {
			h = append(h, o.decideLocked(s, key, known))
		}
	}
	return late, h, seen
}

// sightedLocked reports whether early holds a sighting of revision rev, of
// any backend: the scan every write makes, kept apart from
// seenEarlyLocked, whose frame costs several times more per sighting. A
// revision past every sighted one (earlyMax) needs no scan.
func (o *ownWrites) sightedLocked(rev int64) bool {
	if rev > o.earlyMax {
		return false
	}
	for i := range o.earlyRev { // not range over the array: that copies it
		if o.earlyRev[i] == rev {
			return true
		}
	}
	return false
}

// notAuthors appends to out the keys that are not key, the author's, when
// the author is known: a write of an unknown author is its own for every
// key.
func notAuthors(out, keys []string, key string, known bool) []string {
	if !known {
		return out
	}
	for _, k := range keys {
		if k != key {
			out = append(out, k)
		}
	}
	return out
}

// missed tells of the keys an event of revision rev of backend b did not
// hint, having judged it the Loop's own by its writer's name before its
// revision was reported (own or seen found none): the report, when it
// comes, returns those that are not its author's. When the report came
// already (between the judging and now), missed returns them. An event
// that fell out of early is forgotten: its keys wait for their next hint
// or resync.
func (o *ownWrites) missed(b any, rev int64, keys []string) []string {
	if len(keys) == 0 {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for n := range earlyRevs { // the newest first: the event was seen last
		s := &o.early[(o.next-1-n+2*earlyRevs)%earlyRevs]
		if s.rev != rev || s.b != b || s.told {
			continue
		}
		if s.reported {
			return notAuthors(nil, keys, s.by, s.byKnown)
		}
		s.missed, s.told = keys, true
		return nil
	}
	return nil
}

// maxOwnRevs bounds the revisions remembered: past it, those that every
// cache has already passed (they will never be judged) are dropped. While
// the caches lag, a prune drops few, so the next waits until the revisions
// have doubled: a prune scans them all, and each write must not.
const maxOwnRevs = 1024

// wrote records a revision a reconcile (by) wrote to backend b, of the
// object name. floor returns the lowest revision every cache over a
// backend reflects; it is called only to prune. When a cache's event of
// the revision came first and was judged the Loop's own by name (see
// missed), wrote returns the keys that event did not hint and by did not
// write: they are the Loop's to add; and the writes it held for the
// oscillation detector, decided by by (see hold).
func (o *ownWrites) wrote(b any, rev int64, name string, by author, floor func(b any) int64) (late []string, h []heard) {
	if rev <= 0 || !o.on.Load() {
		return nil, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sightedLocked(rev) {
		if late, h, seen := o.seenEarlyLocked(b, rev, name, by, nil, nil); seen {
			return late, h
		}
	}
	if k := (ownRev{b: o.numberLocked(b, true), rev: rev}); by.kind == authorName {
		o.addLocked(k) // the common write: revs, as before authors were known
	} else {
		o.addOtherLocked(k, by)
	}
	if n := o.held(); n > max(o.prune, maxOwnRevs) {
		floors := map[int]int64{}
		passed := func(r ownRev) bool {
			f, ok := floors[r.b]
			if !ok {
				f = floor(o.backendOf(r.b))
				floors[r.b] = f
			}
			return r.rev <= f
		}
		nrevs, nothers := len(o.revs.more), len(o.others)
		for i := 0; i < o.revs.n; {
			if r := o.revs.recent[i]; passed(r) {
				o.forgetLocked(r) // moves the last into i
			} else {
				i++
			}
		}
		for r := range o.revs.more {
			if passed(r) {
				o.forgetLocked(r)
			}
		}
		for r := range o.others {
			if passed(r) {
				o.forgetOtherLocked(r)
			}
		}
		o.prune = 2 * o.held()
		// A map keeps the room it grew to: revisions a cache never
		// delivers one by one (a relist skips them) filled it while the
		// cache lagged, ~80 bytes each.
		if len(o.revs.more) < nrevs/4 {
			o.revs.more = maps.Collect(maps.All(o.revs.more))
			o.revs.morePeak = len(o.revs.more)
		}
		if len(o.others) < nothers/4 {
			o.others = maps.Collect(maps.All(o.others))
		}
	}
	return nil, nil
}

// seen forgets the revision rev of backend b, if a reconcile wrote it, and
// returns its author and whether it was reported: a cache delivered its
// write under a name that judges it without the revision (the reconciler's
// or the Loop's own manager). Kept, it would wait for a prune after every
// cache passed it, and prunes wait for the revisions to double. An event
// not reported yet is remembered (see sawEarlyLocked, whose held write it
// returns).
func (o *ownWrites) seen(b any, rev int64) (by author, reported bool, h heard) {
	if !o.on.Load() {
		return author{}, false, heard{}
	}
	o.mu.Lock()
	if by, reported = o.dropLocked(b, rev); !reported {
		h = o.sawEarlyLocked(b, rev, "")
	}
	o.mu.Unlock()
	return by, reported, h
}

// dropLocked deletes revision rev of backend b or, when it is not held,
// revision rev of no known backend, and reports whether it deleted one,
// and its author.
func (o *ownWrites) dropLocked(b any, rev int64) (author, bool) {
	if o.held() == 0 {
		return author{}, false
	}
	if n := o.numberLocked(b, false); n >= 0 {
		k := ownRev{b: n, rev: rev}
		if o.forgetLocked(k) { // the common write's
			return author{kind: authorName}, true
		}
		if a, ok := o.forgetOtherLocked(k); ok {
			return a, true
		}
	}
	if b == nil || o.anyRevs == 0 {
		return author{}, false
	}
	return o.forgetAnyLocked(ownRev{rev: rev})
}

// own reports whether the write of revision rev to backend b by manager is
// the Loop's own, learning manager as one of the Loop's when rev was; and,
// when rev was reported, by whom. An event not reported yet is remembered
// (see sawEarlyLocked, whose held write it returns).
func (o *ownWrites) own(b any, manager string, rev int64) (by author, reported, own bool, h heard) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if by, reported = o.dropLocked(b, rev); reported {
		o.learnLocked(manager)
		return by, true, true, heard{}
	}
	h = o.sawEarlyLocked(b, rev, manager)
	if len(o.names) == 0 { // most Loops' reconciles write as its manager alone
		return author{}, false, false, h
	}
	_, own = o.names[manager]
	return author{}, false, own, h
}

// learnLocked knows manager as one a reconcile of the Loop wrote as.
func (o *ownWrites) learnLocked(manager string) {
	if o.names == nil {
		o.names = map[string]struct{}{}
	}
	o.names[manager] = struct{}{}
}
