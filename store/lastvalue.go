package store

import (
	"github.com/steady-go/steady/store/kv"

	"hash/maphash"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// defaultLastValueBytes is the default bound of the memory of values a Store
// keeps for its writes (see WithLastValues).
const defaultLastValueBytes = 16 << 20

// WithLastValues bounds the memory a Store keeps so that its writes need
// not read first: at most bytes (default 16 MiB; 0 or less turns the memory
// off).
//
// The Store remembers, for each key, the value it last read (Get, List,
// Watch, or the read before a write) or wrote, at that value's revision. An
// Update or UpdateStatus of an object whose Meta.Revision is the remembered
// revision of its key computes the write from the remembered value and sends
// it as one Txn conditional on that revision, with no Backend.Get before it.
// Apply, ApplyStatus and Delete, which name no revision, do the same from
// the latest value remembered of their key, whatever its revision. So a Loop
// writing objects it got from a cache (which reads through the Store's List
// and Watch) or from its own previous write, or applying to them, makes one
// round trip per write. In every other case (nothing is remembered, the
// write would change nothing, fails a check or cannot be computed, or its
// Txn's condition fails because someone wrote since) the write does what it
// does without the memory: it reads the stored object and goes on from
// there. An error of the Txn itself (ErrFenced, ErrUnavailable...) is
// returned as it is, as it would be without the memory, since no read would
// change it (and after ErrUnavailable the write may have landed). So
// results, errors and stored values are the same either way; only
// a write based on a value overwritten by a writer the Store did not see
// costs one failed Txn more. This rests on the Backend contract: a key's
// ModRevision names one value for good.
//
// The bound counts each remembered value as its encoded size plus its key
// and 128 bytes, and three times the encoded size for the Store's latest
// own writes, which it keeps decoded too (so that a write soon after
// another of the same object decodes nothing, nor does the watch event of
// the write): the 256 latest; an older one keeps only its value, the one
// read back from the Backend's watch where one was. The 1,024 values its
// watches decoded last (a cache's) it keeps decoded too, counted twice
// (so that a write from a value the cache just delivered decodes nothing);
// an older one keeps only its value. Of the latest 4,096 own writes that
// knew their status side's ownership record (status writes) and have left
// those 256 (or whose key has a later value since), it keeps that record,
// by key and revision, counted as its key and 128 bytes plus an upper
// bound of the decoded record's size (about 300 bytes for a one-field
// status), so that the change judge of a cache lagging behind the Store's
// writes decodes none (see Store.FieldChanges). Past the bound, remembered
// keys are forgotten at random, then the oldest records; a value larger
// than the bound is not remembered. Values read are shared with the
// Backend, not copied (see Backend), so with memstore they cost no more
// than their entry.
func WithLastValues(bytes int) Option { return func(c *config) { c.lastValueBytes = bytes } }

// lastValues is the Store's memory of the last value of each key (see
// WithLastValues). A remembered value is owned by the memory: it is never
// modified, and nothing reachable from it is handed to callers. It is safe
// for concurrent use; a nil *lastValues remembers nothing.
type lastValues struct {
	mu    sync.Mutex
	max   int
	bytes int
	index lastIndex // key -> position in items
	// items are the values remembered, in no order. A value forgotten
	// leaves its slot empty (key "") for the next new key (free): no value
	// ever moves, so the position a hint or a ring (keyRev.at) found a key
	// at stays its own until the key is forgotten. Past its bound, the
	// memory forgets a value and remembers one per put: where forgetting
	// moved the last value into the hole, it moved the value remembered
	// last, the one the next steps of its event look for, and at 1M keys
	// each of those steps (decodedLocked's find of a displaced value, a
	// hint) then missed and looked the key up in the index, a cache miss.
	items []lastValue
	free  []int // empty slots of items
	// hints are the positions in items of the keys found last, one for
	// the watches' side (the events' reads and the change judge), one
	// for the writes' side: the steps of one event or one write (decode,
	// decode over, remember; find, write, remember) each find the same
	// key, and a hint found again (at, atBytes) is one string comparison
	// where a map lookup in a kind's worth of keys misses the CPU's
	// caches. A hint is checked before use, so a stale one (its key
	// removed or moved, see remove) costs one map lookup, never a wrong
	// value.
	hints [2]int
	// pick chooses the value to forget (shrinkLocked). It is the memory's
	// own source, seeded at random, so that a test can seed it and replay
	// the memory's choices.
	pick *rand.Rand
	// decoded is a ring of the latest own writes remembered decoded, the
	// oldest at next once it is full: the write a Store makes of an object
	// soon after another (a reconcile's second write, the Loop's
	// conditions) saves a decoding, and one long after is rarer than the
	// memory a decoded object costs over its value (at 10,000 objects
	// written once each, 7 MB of 44 in the controller benchmark).
	decoded decodedRing
	// reads is the ring of the latest values remembered decoded as read
	// (readDecoded): a write from the value a cache just delivered (a
	// Loop's status apply) saves a decoding.
	reads decodedRing
	// records are the status side's records of the Store's own writes
	// whose decoded value it no longer keeps (see statusRecords).
	records statusRecords
	// pending are the Store's writes under way whose status side's record
	// is known (see writing), a few at a time (one per writing goroutine).
	pending []pendingWrite
	// recordList is the ownership record of the last status record made
	// and what it counts (see recordBytesLocked).
	recordList recordList
}

// recordList is an ownership record (a list of the memory's own, never
// modified) with its managedRecordBytes.
type recordList struct {
	managed []ManagedFields
	bytes   int
}

// pendingWrite is a write the Store has sent and not yet remembered: its
// key, its value, and its status side's record.
type pendingWrite struct {
	key    string
	value  []byte
	status *decodedSide
}

// decodedRing holds the latest values remembered decoded of one kind, the
// oldest at next once it is full: past that, the oldest keeps only its
// value.
type decodedRing struct {
	keys []keyRev
	next int
}

// keyRev names one remembered value, with the position in items it was
// remembered at (at, a hint: see lastValues.hints) for the ring that
// displaces it to find it with no map lookup.
type keyRev struct {
	key string
	rev int64
	at  int
}

// The sides whose last key found a hint remembers (lastValues.hints).
const (
	readSide = iota
	writeSide
)

// maxDecoded is how many of its latest writes a Store keeps decoded: the
// writes of one reconcile to its object come within a few of each other,
// even with dozens of workers writing in between.
const maxDecoded = 256

// statusRecords keeps, for the Store's latest own writes with a known
// status side's record (a status write's) that the memory no longer keeps
// decoded (displaced from the decoded ring, or replaced by a later value of
// their key), that record by key and revision, the oldest forgotten first:
// the judge of a write's event (writtenStatus) takes it from there when a
// cache delivers the event only after more than maxDecoded later own
// writes (in the controller benchmark the cache lags hundreds of writes
// behind the Loop), where it would decode it again. A record of a revision
// holds for good, as the revision names one value. It counts in the
// memory's bound (statusRecordBytes).
type statusRecords struct {
	// byKey holds each key's record, updated in place when the key is
	// recorded again (one lookup, no second to store it).
	byKey map[string]*statusRecord
	order recordRing
	// free holds the records forgotten, emptied, for the next ones to
	// take their room: a Store cycling through more keys than it keeps
	// records of allocates none, and the records ever allocated are no
	// more than were kept at once (a value's hint, lastValue.rec, may
	// hold one forgotten: see recordOf).
	free []*statusRecord
}

// recordRing holds the records made, oldest first once it is full (at
// next): a key recorded again is there twice, at each of its revisions,
// the older one no longer its record's (see forgetRecordLocked).
type recordRing struct {
	recs []recordAt
	next int
}

// recordAt is one record made: of key at rev, held in r while r.rev is rev.
type recordAt struct {
	key string
	rev int64
	r   *statusRecord
}

type statusRecord struct {
	key    string // "" once forgotten (see recordOf)
	rev    int64
	status *decodedSide
	size   int
	// side is what status is a function of (see sideOf): a later value
	// with the same side has the same record.
	side statusSideOf
}

// statusSideOf is what the status side's record of a value, as decodeSide
// gives it against the side's shape (decodedSide), depends on: the whole
// ownership record (the side's entries, and the order of the two sides'
// for canonical), the status's text (its shape, hence the Codec, with the
// conditions') and the conditions (their shape: a condition's leaves are
// not read). Two values whose statusSideOf are equal (same) have the same
// status side: a read of the value another writer made of the Store's own
// status write, changing the spec alone, knows it from that write's
// record without decoding it (see lastValues.put).
type statusSideOf struct {
	managed []ManagedFields
	status  string
	conds   []Condition
}

// sideOf returns the statusSideOf of raw, sharing its record and
// conditions (the memory's own, never modified) and copying its status's
// text, which may be part of a whole value the record must not hold,
// unless ownStatus says that it is an allocation of its own (see
// lastValue.ownStatus), which it shares.
func sideOf(raw *rawObject, ownStatus bool) statusSideOf {
	status := unsafe.String(unsafe.SliceData(raw.Status), len(raw.Status))
	if !ownStatus {
		status = string(raw.Status)
	}
	return statusSideOf{managed: raw.Meta.Managed, status: status, conds: raw.Conditions}
}

// same reports whether raw's status side is the one s describes. The
// records are compared entry by entry only when they are not the same
// list (sameList): a value read after the Store's own status write
// mostly holds the very list that write kept (the memory's, shared by
// the watch's decoder: keptLists), never modified in place.
func (s *statusSideOf) same(raw *rawObject) bool {
	return s.status == string(raw.Status) && sameList(s.managed, raw.Meta.Managed) && conditionsEqual(s.conds, raw.Conditions)
}

// maxStatusRecords is how many status records (statusRecords) a Store
// keeps past its decoded writes: the lag of a cache behind the writes of
// a Loop, in own writes.
const maxStatusRecords = 4096

// maxDecodedReads is how many of the values its watches read a Store
// keeps decoded: a Loop writes from the state its cache delivered after
// the key waited in the queue, and a decoded value read costs about twice
// its bytes (its value is the Backend's).
const maxDecodedReads = 1024

// lastValue is one remembered value, as read (value, and while it is among
// the latest decoded reads raw) or as written by the Store (written; value,
// and while it is among the latest writes raw, decoded, with what is known
// of its sides' ownership records).
type lastValue struct {
	key     string
	rev     int64
	value   []byte
	raw     *rawObject
	sides   decodedSides
	size    int
	written bool
	// whole says that value is one decodeStored reads whole, each key of
	// the object and of its metadata known and there once: the Store
	// encoded it (a write), or a watch decoded it so (readDecoded). A
	// watch event over it may take what it left as it was from the object
	// decoded from it (see baseValue); it outlives raw.
	whole bool
	// hash is key's in the index (lastIndex), kept so that removing or
	// moving the value reads no key. Beside written and whole, in their
	// padding.
	hash uint32
	// sameSpecAs is, for a write, the revision of the value it was
	// computed from (wroteGiven's cur), or else of the value remembered
	// decoded before it, whose spec it left byte for byte as it was (a
	// status write's), 0 when there is none: the watch event of the write
	// may take its Spec from an object decoded from that value (see
	// WatchUndecoded), whether or not the write is still remembered
	// decoded (see baseValue.overOwn).
	sameSpecAs int64
	// rec is the status record of key (see statusRecords) as the memory
	// last found it, a hint that saves looking it up (see recordOf).
	rec *statusRecord
	// ownStatus says that raw.Status is an allocation of its own, which
	// nothing but the memory holds (a status apply's encoding of the
	// status it stores: see wroteGiven), so that the status record of
	// raw shares it (sideOf) instead of copying it.
	ownStatus bool
	// at is where raw's Spec and Status lay in value when the memory
	// dropped raw (decodedLocked), zero when not known: a write from
	// value then takes them from there (decodeRemembered).
	at sidesAt // beside ownStatus, in its padding
	// headEnd is the length of value's head (see storedHead), 0 when
	// not known: raw's, when value is the one raw was read from or
	// written as. It outlives raw, for a watch event over value to take
	// the metadata up to their last write from the object held for it
	// (baseHead): a controller's status write is past maxDecoded when the
	// next spec write of its object comes.
	headEnd int
	// headAs is, for a write, the revision of the value remembered before
	// it, read whole (see whole), whose head (see headEnd) it left byte
	// for byte as it was (a status write's, mostly), 0 when there is
	// none: once the write is no longer remembered decoded, its watch
	// event over the object held for that value still takes the metadata
	// up to their last write from that object (baseHead), as an event
	// over a value remembered whole does (see baseValue.overOwn).
	headAs int64
	// specLen is, for a write, the length of value's spec text (the
	// encoding's orNull(raw.Spec)), which the value's own spec member
	// holds: a watch event that takes the Spec from a held object
	// (sameSpecAs) after raw is gone passes over it with no look at it.
	specLen int
}

// sidesAt is where the Spec and the Status of a value lie in it, as a
// decode of that very value, which validated both, found them: spec is
// the Spec's first byte, specEnd the byte after it, statusEnd the byte
// after the Status, which starts 10 bytes (`,"status":`) after specEnd.
// Zero (specEnd 0) when not known. A value a watch decoded (a cache's) and
// the memory no longer keeps decoded (past maxDecodedReads) keeps it: a
// controller's status write to it long after, when its queue lags by more
// than that (the controller benchmark flat out, four writes in five),
// reads its metadata and conditions but takes its Spec and Status by
// position, not validating them again (see decodeLaidOut).
type sidesAt struct{ spec, specEnd, statusEnd uint32 }

// sidesIn returns where raw's Spec and Status lie in value when both are
// slices of it, the Status after the Spec as the store writes them, else
// zero. raw must be a decode of value itself (rawObject's sides sliced
// from it), which validated them.
func sidesIn(raw *rawObject, value []byte) sidesAt {
	spec, ok := offsetIn(raw.Spec, value)
	status, statusOK := offsetIn(raw.Status, value)
	specEnd := spec + len(raw.Spec)
	if !ok || !statusOK || status != specEnd+len(`,"status":`) || len(value) > math.MaxUint32 {
		return sidesAt{}
	}
	return sidesAt{spec: uint32(spec), specEnd: uint32(specEnd), statusEnd: uint32(status + len(raw.Status))}
}

// offsetIn returns the offset in value of side, a non-empty slice of it.
func offsetIn(side, value []byte) (int, bool) {
	if len(side) == 0 || len(value) == 0 {
		return 0, false
	}
	p, v := uintptr(unsafe.Pointer(unsafe.SliceData(side))), uintptr(unsafe.Pointer(unsafe.SliceData(value)))
	if p < v || p+uintptr(len(side)) > v+uintptr(len(value)) {
		return 0, false
	}
	return int(p - v), true
}

// rank orders what is remembered of one value by what a write from it
// needs to do: decode its bytes, nothing (decoded as read), or nothing and
// less (the Store's own write, with what is known of its sides).
func (e *lastValue) rank() int {
	switch {
	case e.raw == nil:
		return 0
	case !e.written:
		return 1
	}
	return 2
}

// decodedSides holds, for the spec side and the status side of one stored
// value, its ownership record as decodeSide gives it against the side's
// shape, or nil where it is not known. It lets a write that keeps a side's
// record (keepManaged) skip decoding it.
type decodedSides struct{ spec, status *decodedSide }

// entryOverhead is what a remembered value counts besides its bytes.
const entryOverhead = 128

func newLastValues(max int) *lastValues {
	if max <= 0 {
		return nil
	}
	return &lastValues{max: max, index: lastIndex{seed: maphash.MakeSeed()}, pick: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
}

// rememberedOnce is what a Store remembers of one key, looked up once for
// the steps of decoding one event that ask (decodeWritten for the event's
// revision, decodeOver for the one before): the memory keeps one value per
// key, so one look, one hold of l.mu, answers both. A value remembered
// between the steps is not seen, as if the steps ran before it came.
type rememberedOnce struct {
	key        string
	looked, ok bool
	e          lastValue
}

// at returns what is remembered of r.key when it is its value at rev,
// looking key up the first time only.
func (r *rememberedOnce) at(l *lastValues, rev int64) (lastValue, bool) {
	if !r.looked {
		r.e, r.ok = l.latest(r.key)
		r.looked = true
	}
	if r.ok && rev != 0 && r.e.rev == rev {
		return r.e, true
	}
	return lastValue{}, false
}

// writtenStatus returns the status side of what is remembered of the key
// prefix+name when it is the Store's own write of rev and knows that side:
// lookup's e.sides.status when e.written; when e is a read of rev, that of
// a write under way of e's value (see writing); nil otherwise. It is
// FieldChanges' (writtenManaged), on every event of a status write: it
// builds the key on the stack and copies out no lastValue.
func (l *lastValues) writtenStatus(prefix, name string, rev int64) *decodedSide {
	if l == nil || rev == 0 {
		return nil
	}
	var buf [64]byte
	key := append(append(buf[:0], prefix...), name...)
	var d *decodedSide
	l.mu.Lock()
	if i, ok := l.atBytes(key, readSide); ok {
		switch e := &l.items[i]; {
		case e.rev != rev:
		case e.written:
			d = e.sides.status
		default:
			// The event of a write under way, read before the write
			// was remembered (see writing).
			d = l.pendingStatusLocked(key, e.value)
		}
	}
	if d == nil {
		if r, ok := l.records.byKey[string(key)]; ok && r.rev == rev {
			d = r.status // a write no longer remembered decoded
		}
	}
	l.mu.Unlock()
	return d
}

// at returns the position of key in items, trying the hint of side (see
// lastValues.hints) before the index, and makes it side's hint. It runs
// under l.mu.
func (l *lastValues) at(key string, side int) (int, bool) {
	i, ok := l.find(key, l.hints[side])
	if ok {
		l.hints[side] = i
	}
	return i, ok
}

// find returns the position of key in items, trying hint, a position it
// was at, before the index. It runs under l.mu.
func (l *lastValues) find(key string, hint int) (int, bool) {
	if hint < len(l.items) && l.items[hint].key == key {
		return hint, true
	}
	return l.index.lookup(l.items, key)
}

// atBytes is at of a key built on the stack.
func (l *lastValues) atBytes(key []byte, side int) (int, bool) {
	if i := l.hints[side]; i < len(l.items) && l.items[i].key == string(key) {
		return i, true
	}
	// The string is compared, never kept.
	i, ok := l.index.lookup(l.items, unsafe.String(unsafe.SliceData(key), len(key)))
	if ok {
		l.hints[side] = i
	}
	return i, ok
}

// writing notes, until doneWriting, that the Store sends value as key's
// next value, with status its status side's record (when it is known: else
// it notes nothing). A Backend's watch can deliver the write's event, and a
// cache hand it to FieldChanges, before the write returns and wrote
// remembers it: a watch over the same Backend as the Store's writer runs
// beside it (in the controller benchmark, at 2 cores, nine events in ten of
// the Loop's own status writes came back first). The event's value, read
// and remembered by then, is the written value byte for byte, so its record
// is status, whether or not the write is the one that landed: identical
// bytes decode to the same record (see writtenStatus).
func (l *lastValues) writing(key string, value []byte, status *decodedSide) {
	if l == nil || status == nil {
		return
	}
	l.mu.Lock()
	l.pending = append(l.pending, pendingWrite{key: key, value: value, status: status})
	l.mu.Unlock()
}

// doneWriting forgets what writing noted of the write of value to key.
func (l *lastValues) doneWriting(key string, value []byte) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.doneWritingLocked(key, value)
	l.mu.Unlock()
}

// doneWritingLocked is doneWriting under l.mu.
func (l *lastValues) doneWritingLocked(key string, value []byte) {
	for i := range l.pending {
		if p := &l.pending[i]; p.key == key && unsafe.SliceData(p.value) == unsafe.SliceData(value) {
			last := len(l.pending) - 1
			l.pending[i] = l.pending[last]
			l.pending[last] = pendingWrite{}
			l.pending = l.pending[:last]
			break
		}
	}
}

// pendingStatusLocked returns the status side's record of a write under
// way (writing) of value to key, nil when there is none. It runs under l.mu.
func (l *lastValues) pendingStatusLocked(key, value []byte) *decodedSide {
	for i := range l.pending {
		if p := &l.pending[i]; p.key == string(key) && sameBytes(p.value, value) {
			return p.status
		}
	}
	return nil
}

// latest returns what is remembered of key, at whatever revision.
func (l *lastValues) latest(key string) (lastValue, bool) {
	if l == nil {
		return lastValue{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if i, ok := l.at(key, readSide); ok {
		return l.items[i], true
	}
	return lastValue{}, false
}

// latestOf is latest of the key prefix+name, built on the stack: the
// lastValue's key is the remembered key string.
func (l *lastValues) latestOf(prefix, name string) (lastValue, bool) {
	if l == nil {
		return lastValue{}, false
	}
	var buf [64]byte
	key := append(append(buf[:0], prefix...), name...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if i, ok := l.atBytes(key, writeSide); ok {
		return l.items[i], true
	}
	return lastValue{}, false
}

// read remembers kv as read from the Backend.
func (l *lastValues) read(kv kv.KeyValue) { l.readWhole(kv, false, 0) }

// readWhole is read for a value that decodeStored read whole when whole
// (see lastValue.whole), whose head (see storedHead) is its first headEnd
// bytes when headEnd is not 0: a listing's, so that a watch event over
// the value, after a relist, takes the metadata up to their last write
// from the object listed (baseHead), as it does over a value a watch read.
func (l *lastValues) readWhole(kv kv.KeyValue, whole bool, headEnd int) {
	if l == nil || kv.ModRevision == 0 {
		return
	}
	l.put(kv.Key, lastValue{rev: kv.ModRevision, value: kv.Value, size: len(kv.Key) + len(kv.Value) + entryOverhead, whole: whole, headEnd: headEnd}, readSide)
}

// wrote remembers raw, encoded as value, as written at rev over cur (nil
// for a creation), with what is known of its sides. It keeps a copy of
// what raw may share with callers, so raw may be handed out afterwards:
// of the maps and slices raw's Meta and Conditions hold, those that are
// cur's need none. cur is the value the write was computed from, the
// memory's own or a read of the write's own, which no write hands out: a
// status write, which leaves the metadata as they were, copies none.
func (l *lastValues) wrote(key string, rev int64, cur, raw *rawObject, value []byte, sides decodedSides) {
	l.wroteGiven(key, rev, cur, raw, value, sides, false, false)
}

// wroteGiven is wrote; given says that the writer is done with raw (see
// Writer.putKeeping), and that raw.Status is cur's or an allocation of its
// own, which nothing else holds: the memory then keeps raw itself, with
// those copies, instead of a copy of it, and its status record shares a
// status that is not cur's (lastValue.ownStatus). done says that the write was noted (writing):
// wroteGiven is then its doneWriting too, in the same hold of l.mu (the
// writer's goroutine and the watch's take it for every event).
func (l *lastValues) wroteGiven(key string, rev int64, cur, raw *rawObject, value []byte, sides decodedSides, given, done bool) {
	if l == nil {
		return
	}
	own := raw
	if !given {
		own = new(rawObject)
		*own = *raw
	}
	held, status, conds := &noMeta, []byte(nil), []Condition(nil) // cur's
	if cur != nil {
		held, status, conds = &cur.Meta, cur.Status, cur.Conditions
	}
	own.Meta.ownBut(held) // in place: own's Meta is raw's
	own.Meta.Revision = rev
	if !sharedSlice(raw.Conditions, conds) {
		own.Conditions = slices.Clone(raw.Conditions)
	}
	var doneValue []byte
	if done {
		doneValue = value
	}
	ownStatus := given && len(raw.Status) > 0 && !overlap(raw.Status, status)
	l.putDone(key, lastValue{rev: rev, value: value, raw: own, sides: sides, size: len(key) + 3*len(value) + entryOverhead, written: true, whole: true, ownStatus: ownStatus, headEnd: headIn(own, value), sameSpecAs: specFrom(cur, raw), specLen: len(orNull(raw.Spec))}, writeSide, doneValue)
}

// specFrom returns the revision of cur, the value a write of raw was
// computed from (nil: none), when raw's Spec is cur's byte for byte (a
// status write's, the very bytes): the value written, whose spec is
// raw.Spec as it is (appendTo), then has the spec text of the value cur
// was read from or written as (see lastValue.sameSpecAs). 0 otherwise.
func specFrom(cur, raw *rawObject) int64 {
	if cur == nil || len(raw.Spec) == 0 || !sameBytes(raw.Spec, cur.Spec) {
		return 0
	}
	return cur.Meta.Revision
}

// overlap reports whether a and b share bytes of one array.
func overlap(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

// readDecoded remembers kv as read from the Backend and decoded as raw, a
// read of kv.Value (decodeRaw) that shares nothing it could modify with
// anything handed out, so that a write from it need not decode it again.
// decodeStored read kv.Value whole (raw is a plain decodedFrom's).
// The last maxDecodedReads values remembered so stay decoded; older ones
// keep only their value.
func (l *lastValues) readDecoded(kv kv.KeyValue, raw *rawObject) {
	if l == nil || kv.ModRevision == 0 {
		return
	}
	l.put(kv.Key, lastValue{rev: kv.ModRevision, value: kv.Value, raw: raw, size: len(kv.Key) + 2*len(kv.Value) + entryOverhead, whole: true, headEnd: headIn(raw, kv.Value)}, readSide)
}

// headFor is the head length n of value (see lastValue.headEnd) for
// other, a value of the same revision that replaces it: n when other's
// first n bytes are value's, else 0. A backend gives one revision one
// value, but the head's cut must not rest on it.
func headFor(value, other []byte, n int) int {
	if n > len(value) || n > len(other) || string(value[:n]) != string(other[:n]) {
		return 0
	}
	return n
}

// headIn is the length of raw's head when it is value's first bytes
// themselves, else 0.
func headIn(raw *rawObject, value []byte) int {
	h := raw.head.text()
	if len(h) > 0 && len(h) <= len(value) && unsafe.SliceData(h) == unsafe.SliceData(value) {
		return len(h)
	}
	return 0
}

// decodedLocked adds w, just remembered decoded (as written by the Store,
// or read), to ring, of at most max, and keeps only the value of the one
// it displaces, unless that key was forgotten, or remembered at another
// revision or otherwise, since. The caller shrinks the memory after it
// (shrinkLocked).
func (l *lastValues) decodedLocked(ring *decodedRing, max int, w keyRev, written bool) {
	if len(ring.keys) < max {
		ring.keys = append(ring.keys, w)
		return
	}
	old := ring.keys[ring.next]
	ring.keys[ring.next] = w
	ring.next = (ring.next + 1) % max
	if i, ok := l.find(old.key, old.at); ok && l.items[i].rev == old.rev && l.items[i].raw != nil && l.items[i].written == written {
		e := &l.items[i]
		l.recordLocked(e)
		e.at = sidesIn(e.raw, e.value)
		e.raw, e.sides, e.ownStatus = nil, decodedSides{}, false
		l.bytes -= e.size
		e.size = len(e.key) + len(e.value) + entryOverhead
		l.bytes += e.size
	}
}

// put remembers e for key unless a later revision of key is remembered,
// or the same one as well known (rank: a write, whose watch event may come
// first, or a read decoded), adds it to the ring of the values remembered
// decoded of its kind when it is (raw: decoded, the decoded ring or the
// reads ring), then forgets other keys at random while over the bound. It
// reports whether it remembered e. A write and a read of the same
// revision, in either order (a watch event, or a listing after the write
// was displaced from the decoded ones), keep the read's value, the
// Backend's (shared, where the write's is a copy). It finds key from the
// hint of side (see lastValues.hints): the one the same event or write
// found it at, looking it up before.
func (l *lastValues) put(key string, e lastValue, side int) bool {
	return l.putDone(key, e, side, nil)
}

// putDone is put, and doneWriting(key, done) when done is not nil, under
// one hold of l.mu (two when e is too large to keep).
func (l *lastValues) putDone(key string, e lastValue, side int, done []byte) bool {
	if e.size > l.max {
		l.forget(key, e.rev)
		if done != nil {
			l.doneWriting(key, done)
		}
		return false
	}
	e.key = key
	l.mu.Lock()
	defer l.mu.Unlock()
	if done != nil {
		l.doneWritingLocked(key, done)
	}
	i, ok := l.at(key, side)
	if ok {
		old := &l.items[i]
		if e.sameSpecAs == 0 {
			e.sameSpecAs = sameSpecAs(old, &e)
		}
		e.headAs = sameHeadAs(old, &e)
		switch {
		case old.rev != e.rev:
		case !e.written: // a read: its value is the Backend's
			old.headEnd = headFor(old.value, e.value, old.headEnd)
			if unsafe.SliceData(old.value) != unsafe.SliceData(e.value) {
				old.at = sidesAt{} // found in other bytes
			}
			old.value = e.value
		case !old.written:
			e.headEnd = headFor(e.value, old.value, e.headEnd)
			e.value = old.value // the watch event came first
		}
		if old.rev > e.rev || old.rev == e.rev && old.rank() >= e.rank() {
			return false
		}
		l.bytes += e.size - old.size
		e.rec, e.hash = old.rec, old.hash
		r, looked := l.recordLocked(old)
		if looked {
			e.rec = r
		}
		l.knownStatusLocked(&e, r, looked)
		*old = e
	} else {
		l.knownStatusLocked(&e, nil, false)
		e.hash = l.index.hash(key)
		if n := len(l.free); n > 0 {
			i, l.free = l.free[n-1], l.free[:n-1]
			l.items[i] = e
		} else {
			i = len(l.items)
			l.items = append(l.items, e)
		}
		l.index.add(i, e.hash)
		l.hints[side] = i
		l.bytes += e.size
	}
	if e.raw != nil {
		if e.written {
			l.decodedLocked(&l.decoded, maxDecoded, keyRev{key, e.rev, i}, true)
		} else {
			l.decodedLocked(&l.reads, maxDecodedReads, keyRev{key, e.rev, i}, false)
		}
	}
	l.shrinkLocked(i)
	return true
}

// knownStatusLocked gives e, a value read decoded, the status side's
// record of the Store's own write of its key that the memory keeps
// (recordLocked) when that write's status side is e's (statusSideOf): the
// status apply of a Loop after another writer changed the spec then
// decodes no record. When looked, r is that record (nil: there is none),
// which the caller looked up already.
func (l *lastValues) knownStatusLocked(e *lastValue, r *statusRecord, looked bool) {
	if e.written || e.raw == nil || e.sides.status != nil {
		return
	}
	if !looked {
		r = l.recordOf(e)
	}
	if r != nil && r.rev < e.rev && r.side.same(e.raw) {
		e.sides.status = r.status
	}
}

// shrinkLocked forgets keys other than the one at keep, the position of
// the value just remembered, at random, then the oldest status records,
// while the memory holds more than its bound. It ends: that value alone
// fits. Empty slots are at most half of items (see remove), so a random
// pick takes two tries or fewer on average. Positions are compared, not
// keys: the key of a value picked at random is a cold cache miss at 1M
// keys.
func (l *lastValues) shrinkLocked(keep int) {
	for l.bytes > l.max {
		if l.index.n <= 1 { // keep's alone
			l.forgetOldestRecordLocked()
			continue
		}
		if i := l.pick.IntN(len(l.items)); l.items[i].key != "" && i != keep {
			n, key := len(l.items), l.items[keep].key
			l.remove(i)
			if len(l.items) != n { // packed: keep moved
				keep, _ = l.index.lookup(l.items, key)
			}
		}
	}
}

// recordLocked keeps the status side's record of e, about to lose it (its
// decoded value displaced, or replaced by a later value of its key), among
// the status records, when e is the Store's own write decoded and knows
// it. The memory may then hold more than its bound: the caller shrinks it
// (shrinkLocked) once done with e, which shrinking may move. When it
// looked the key's record up (looked), it returns it as it leaves it (nil:
// there is none), for the caller to use again (see knownStatusLocked).
func (l *lastValues) recordLocked(e *lastValue) (r *statusRecord, looked bool) {
	if !e.written || e.raw == nil || e.sides.status == nil {
		return nil, false
	}
	rs := &l.records
	r = l.recordOf(e)
	if r != nil && r.rev >= e.rev {
		return r, true
	}
	// The record's entry in the ring: past maxStatusRecords the oldest
	// one's, whose record (unless it is this key's, about to be recorded
	// again) is forgotten first, its room free for this one.
	at := len(rs.order.recs)
	if at < maxStatusRecords {
		rs.order.recs = append(rs.order.recs, recordAt{})
	} else {
		at = rs.order.next
		rs.order.next = (at + 1) % maxStatusRecords
		if gone := rs.order.recs[at]; gone.r != r {
			l.forgetRecordLocked(gone)
		}
	}
	if r != nil {
		l.bytes -= r.size
	} else {
		if n := len(rs.free); n > 0 {
			r, rs.free[n-1] = rs.free[n-1], nil
			rs.free = rs.free[:n-1]
		} else {
			r = new(statusRecord)
		}
		if rs.byKey == nil {
			rs.byKey = map[string]*statusRecord{}
		}
		rs.byKey[e.key] = r
	}
	// In place: the ring's entries of the key's older records no longer
	// name it (forgetRecordLocked).
	*r = statusRecord{key: e.key, rev: e.rev, status: e.sides.status, size: l.recordBytesLocked(e.key, e.raw), side: sideOf(e.raw, e.ownStatus)}
	e.rec = r
	l.bytes += r.size
	rs.order.recs[at] = recordAt{e.key, e.rev, r}
	return r, true
}

// recordOf returns the status record of e's key, nil when there is none:
// e.rec when it is still that record (a record forgotten is emptied, and
// its room may be another key's since: see recordLocked), else the one
// looked up, which e.rec then holds. It runs under l.mu.
func (l *lastValues) recordOf(e *lastValue) *statusRecord {
	if r := e.rec; r != nil && r.key == e.key {
		return r
	}
	e.rec = l.records.byKey[e.key]
	return e.rec
}

// forgetRecordLocked forgets the status record a, if it is still its
// key's record of that revision: the ring's other entries that name the
// same record are of its older revisions, or of a record its room held
// before (see statusRecords.free).
func (l *lastValues) forgetRecordLocked(a recordAt) bool {
	if a.r.rev != a.rev || a.r.key != a.key {
		return false // recorded again since, or forgotten
	}
	delete(l.records.byKey, a.key)
	l.bytes -= a.r.size
	// Emptied, so that what still names it (an entry of the ring, a
	// value's hint) holds none of what the record held (the memory no
	// longer counts it), and free for the next record.
	*a.r = statusRecord{}
	l.records.free = append(l.records.free, a.r)
	return true
}

// forgetOldestRecordLocked forgets the oldest status record there is.
func (l *lastValues) forgetOldestRecordLocked() {
	o := &l.records.order
	for i := range o.recs {
		if l.forgetRecordLocked(o.recs[(o.next+i)%len(o.recs)]) {
			return
		}
	}
}

// statusRecordBytes is what the status record of raw, the value of key,
// counts (statusRecords): the record's place in the map and the ring, its
// statusSideOf (the record's entries and their strings, the status's
// text, the conditions), and per status-side entry of meta.Managed, its Entry, Set and
// strings, and the Set's nodes: at most one per name its Fields text
// holds, each after a comma or a parenthesis but the first, and a decoder
// allocates no more than one per 6 bytes of the text beyond them.
// managed is what raw's ownership record counts (managedRecordBytes).
func statusRecordBytes(key string, raw *rawObject, managed int) int {
	return len(key) + entryOverhead + 16 + len(raw.Status) + 160*len(raw.Conditions) + managed
}

// managedRecordBytes is what an ownership record counts in a status
// record (see statusRecordBytes).
func managedRecordBytes(managed []ManagedFields) int {
	n := 0
	for i := range managed {
		// statusSideOf's: the entry, and strings of its own (an object's
		// Fields text, say), rounded up.
		e := &managed[i]
		n += 64 + 16 + len(e.Manager) + len(e.Fields)
	}
	for i := range managed {
		if e := &managed[i]; e.Subresource == statusSide {
			nodes := 2 + strings.Count(e.Fields, ",") + strings.Count(e.Fields, "(") + len(e.Fields)/6
			n += 64 + 32*nodes + len(e.Fields) + len(e.Manager) + len(e.Operation)
		}
	}
	return n
}

// recordBytesLocked is statusRecordBytes of raw, the value of key, with
// what raw's ownership record counts taken from l.recordList when that is
// the same list (sameList's shortcut: the very elements of the same
// array), which it remembers otherwise: a Store's status writes keep the
// record they were computed from (a controller's own fields), which its
// watch's decoder shares from object to object (keptLists), so the
// records of one write after another are mostly one list, whose entries
// are never modified in place. It runs under l.mu.
func (l *lastValues) recordBytesLocked(key string, raw *rawObject) int {
	m := raw.Meta.Managed
	if k := &l.recordList; len(m) == 0 || len(k.managed) != len(m) || unsafe.SliceData(k.managed) != unsafe.SliceData(m) {
		*k = recordList{managed: m, bytes: managedRecordBytes(m)}
	}
	return statusRecordBytes(key, raw, l.recordList.bytes)
}

// sameSpecAs returns what e, remembered over old, records as the value
// whose spec it left as it was (see lastValue.sameSpecAs): old's revision
// when e is a write and both are remembered decoded with the same spec
// bytes, else 0.
func sameSpecAs(old, e *lastValue) int64 {
	if e.written && e.raw != nil && old.raw != nil && old.rev < e.rev && sameBytes(old.raw.Spec, e.raw.Spec) {
		return old.rev
	}
	return 0
}

// sameHeadAs returns what e, remembered over old, records as the value
// whose head it left as it was (see lastValue.headAs): old's revision when
// e is a write, old was read whole, and both heads are known and the same
// bytes, else 0.
func sameHeadAs(old, e *lastValue) int64 {
	n := e.headEnd
	if e.written && old.whole && old.rev < e.rev && n > 0 && old.headEnd == n && string(old.value[:n]) == string(e.value[:n]) {
		return old.rev
	}
	return 0
}

// forget drops key's value when it is older than rev (a deletion at rev).
func (l *lastValues) forget(key string, rev int64) {
	if l == nil {
		return
	}
	l.mu.Lock()
	if i, ok := l.at(key, readSide); ok && l.items[i].rev < rev {
		l.remove(i)
	}
	l.mu.Unlock()
}

// remove forgets items[i], leaving its slot empty for the next new key.
// When more than half of the slots are empty (a kind's values forgotten as
// its objects were deleted), it packs the values into the first slots
// (compact), so that shrinkLocked's random picks seldom land on an empty
// one.
func (l *lastValues) remove(i int) {
	gone := &l.items[i]
	l.bytes -= gone.size
	l.index.remove(i, gone.hash)
	*gone = lastValue{}
	l.free = append(l.free, i)
	if len(l.free) > len(l.items)/2 {
		l.compact()
	}
}

// compact moves the values into the first slots and drops the empty
// ones. Hints and rings that name a moved value's old position are
// checked when used (see find), as after the value was forgotten.
func (l *lastValues) compact() {
	n := 0
	for j := range l.items {
		if e := &l.items[j]; e.key != "" {
			if j != n {
				l.index.move(j, n, e.hash)
				l.items[n] = *e
			}
			n++
		}
	}
	clear(l.items[n:])
	l.items, l.free = l.items[:n], l.free[:0]
}

// keptLists is what a watch's decoder keeps of the ownership records it
// gave the Store's memory lately (see Store.rememberKept): the memory's
// own copies, which it never modifies and never hands out. A kind's
// objects mostly hold one or two lists of records (one manager owns the
// same fields of every object), so the value remembered of each event
// shares the list the memory holds already for another key, where a
// clone of the event's object's Meta copied it (an allocation per event,
// the object being the caller's). It is not safe for concurrent use.
type keptLists struct {
	managed [maxSharedManaged][]ManagedFields
	next    int
}

// own gives m, a copy of a Meta handed out, its own copies of the maps
// and slices it holds, as clone does, but for ownership records equal to
// a list k kept, which it shares; a copy of other records k keeps. A nil
// k keeps none.
func (k *keptLists) own(m *Meta) {
	if k == nil || len(m.Managed) == 0 {
		m.ownBut(&noMeta)
		return
	}
	for _, list := range k.managed {
		if len(list) == len(m.Managed) && slices.Equal(list, m.Managed) {
			m.Managed = nil // not to be copied
			m.ownBut(&noMeta)
			m.Managed = list
			return
		}
	}
	m.ownBut(&noMeta)
	k.managed[k.next] = m.Managed
	k.next = (k.next + 1) % len(k.managed)
}

// noMeta is a zero Meta, which shares nothing: never modified.
var noMeta Meta

// clone returns m with its own copies of the maps and slices it holds.
func (m Meta) clone() Meta { return m.cloneBut(&Meta{}) }

// cloneBut is clone but for the maps and slices m shares with held, which
// it keeps as they are.
func (m Meta) cloneBut(held *Meta) Meta {
	m.ownBut(held)
	return m
}

// ownBut is cloneBut in place: it replaces the maps and slices of m that
// it does not share with held by copies.
func (m *Meta) ownBut(held *Meta) {
	if !sharedMap(m.Labels, held.Labels) {
		m.Labels = maps.Clone(m.Labels)
	}
	if !sharedMap(m.Annotations, held.Annotations) {
		m.Annotations = maps.Clone(m.Annotations)
	}
	if !sharedSlice(m.Owners, held.Owners) {
		m.Owners = slices.Clone(m.Owners)
	}
	if !sharedSlice(m.Finalizers, held.Finalizers) {
		m.Finalizers = slices.Clone(m.Finalizers)
	}
	if !sharedSlice(m.Managed, held.Managed) {
		m.Managed = slices.Clone(m.Managed)
	}
}

// sharedMap reports whether a and b are the same map (not nil), not merely
// equal ones.
func sharedMap[K comparable, V any](a, b map[K]V) bool {
	return a != nil && *(*unsafe.Pointer)(unsafe.Pointer(&a)) == *(*unsafe.Pointer)(unsafe.Pointer(&b))
}

// sharedSlice reports whether every element of a is b's (a holds a prefix of
// b's elements, in b's array), so that a copy of b covers a; true for an
// empty a, which holds nothing to copy.
func sharedSlice[E any](a, b []E) bool {
	return len(a) == 0 || len(a) <= len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}
