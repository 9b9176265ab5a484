package store

import (
	"math/rand/v2"
	"reflect"

	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/store/kv"
)

// ForgetConversions makes the next converted read of s convert its
// ownership records anew (as for a revision not read before), and with
// codecs too make their codecs anew (as for a value of a new shape): for
// BenchmarkVersionedGet1KB.
func (s *Store[S, T]) ForgetConversions(codecs bool) {
	m := s.ver.converted
	m.mu.Lock()
	clear(m.m)
	m.bytes = 0
	m.mu.Unlock()
	if codecs {
		for _, v := range s.ver.list {
			c := v.schemas.codecs
			c.mu.Lock()
			clear(c.codecs)
			c.mu.Unlock()
		}
	}
}

// ForgetLastValues empties s's memory of values (WithLastValues), so that a
// test can weigh what the memory held.
func (s *Store[S, T]) ForgetLastValues() {
	l := s.last
	l.mu.Lock()
	l.index = lastIndex{seed: l.index.seed}
	l.items, l.free, l.bytes = nil, nil, 0
	l.records = statusRecords{}
	l.mu.Unlock()
}

// SeedForgetting seeds the choices of the values s's memory forgets past
// its bound (WithLastValues); it does nothing when s keeps no memory. The
// same calls then forget the same values; which values a watch's goroutine
// has remembered by a call is still up to its timing.
func (s *Store[S, T]) SeedForgetting(seed uint64) {
	if l := s.last; l != nil {
		l.seedForgetting(seed)
	}
}

// seedForgetting is SeedForgetting on the memory itself, for its own tests.
func (l *lastValues) seedForgetting(seed uint64) {
	l.mu.Lock()
	l.pick = rand.New(rand.NewPCG(seed, 0))
	l.mu.Unlock()
}

// ForgetStatusRecords empties the status records of s's memory of values
// (statusRecords) and returns how many it held and the bytes it counted
// them as, so that a test can weigh what they held.
func (s *Store[S, T]) ForgetStatusRecords() (n, counted int) {
	l := s.last
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.records.byKey {
		n, counted = n+1, counted+r.size
		*r = statusRecord{} // as forgetRecordLocked leaves it: no value's hint names it (recordOf)
	}
	l.bytes -= counted
	l.records = statusRecords{}
	return n, counted
}

// MaxStatusRecords and MaxDecoded are maxStatusRecords and maxDecoded, for the tests.
const (
	MaxStatusRecords = maxStatusRecords
	MaxDecoded       = maxDecoded
)

// InvalidNameError lets the tests read which rule a name broke.
type InvalidNameError = invalidNameError

// StorageVersion returns the version s writes, "" for a kind without
// versions.
func (s *Store[S, T]) StorageVersion() string {
	if s.ver == nil {
		return ""
	}
	return s.ver.storage.name
}

// Lean returns the view of s that store/cache and reconcile get through
// internal/storeaccess.Of: ListReusing, WatchWithoutPrev and ChangedBy.
func (s *Store[S, T]) Lean() *internalView[S, T] { return storeaccess.Of(s).(*internalView[S, T]) }

// DecodeMeta is decodeMeta, for the tests of the stored form.
var DecodeMeta = decodeMeta

// SetUIDs is internalView.SetUIDs (reconciletest calls it after New).
func (s *Store[S, T]) SetUIDs(next func() string) {
	storeaccess.Of(s).(*internalView[S, T]).SetUIDs(next)
}

// Version is internalView.Version.
func (s *Store[S, T]) Version() string { return storeaccess.Of(s).(*internalView[S, T]).Version() }

// DecodeWrittenAt is decodeWritten for the value of name at rev, given no
// bytes: it reports whether the Store decodes that value's watch event
// from its memory, and what it decodes.
func (s *Store[S, T]) DecodeWrittenAt(name string, rev int64) (*Object[S, T], bool) {
	from, ok := s.decodeWritten(kv.KeyValue{Key: s.prefix + name, ModRevision: rev}, 0, nil, nil, nil)
	return from.obj, ok
}

// LatestRead reports whether s remembers the latest value of name decoded
// as read (not as its own write), and whether that decoded form is what
// decoding the value's bytes gives.
func (s *Store[S, T]) LatestRead(name string) (decoded, same bool) {
	key := s.prefix + name
	e, ok := s.last.latest(key)
	if !ok || e.raw == nil || e.written {
		return false, false
	}
	want, err := s.decodeRaw(kv.KeyValue{Key: key, Value: e.value, ModRevision: e.rev}, false)
	return true, err == nil && reflect.DeepEqual(want, e.raw)
}

// MaxJSONDepth is maxJSONDepth, for the tests of values too deep to store.
const MaxJSONDepth = maxJSONDepth
