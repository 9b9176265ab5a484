package store

import (
	"hash/maphash"

	"github.com/steady-go/steady/store/kv"
)

// lastValueShards is a Store's memory of values (see WithLastValues),
// split by key into shards, each a lastValues with its own lock: the
// goroutines that use it on every event (a cache's watch decoding one
// key, a writer and a Loop's workers writing others) then rarely take the
// same lock, nor write the same cache lines (a lock, a counter, a ring),
// where with one lock each hold moved them between the CPUs' caches. A
// key is always in the same shard (its hash's), so what the memory keeps
// of one key, and the order of the steps over it, are as with one lock.
//
// The bound is shared out evenly: each shard holds at most its share of
// the bytes, so the whole holds at most the bound, and a value larger
// than a shard's share is not remembered. So are the rings of the latest
// decoded writes, decoded reads and status records (maxDecoded,
// maxDecodedReads, maxStatusRecords): each shard keeps the latest of its
// own keys, their share of the whole's latest, and forgets its own keys
// at random past its bytes, its oldest records past its records. A bound
// under 2 MiB (minShardBytes each) keeps one shard, which is one
// lastValues as it was. It is safe for concurrent use; a nil
// *lastValueShards remembers nothing.
type lastValueShards struct {
	seed   maphash.Seed
	mask   uint64 // len(shards)-1, a power of two less one
	shards []paddedShard
}

// paddedShard is a shard apart from its neighbours' cache lines (two, for
// the CPUs that fetch lines in pairs): its lock and fields are its alone.
type paddedShard struct {
	lastValues
	_ [128]byte
}

// maxShards is how many shards a large memory has: enough that the few
// goroutines using it at once (one per CPU) rarely meet in one.
const maxShards = 16

// minShardBytes is the least bound a shard gets: a value larger than its
// shard's bound is not remembered, and an object is at most about 1.5 MB
// in etcd.
const minShardBytes = 1 << 20

// newLastValueShards returns the memory of values bounded by max bytes
// (see WithLastValues), nil when max is 0 or less.
func newLastValueShards(max int) *lastValueShards {
	n := 1
	for n < maxShards && max/(2*n) >= minShardBytes {
		n *= 2
	}
	return newLastValueShardsOf(max, n)
}

// newLastValueShardsOf is newLastValueShards with n shards, a power of two.
func newLastValueShardsOf(max, n int) *lastValueShards {
	if max <= 0 {
		return nil
	}
	m := &lastValueShards{seed: maphash.MakeSeed(), mask: uint64(n - 1), shards: make([]paddedShard, n)}
	for i := range m.shards {
		l := &m.shards[i].lastValues
		*l = *newLastValues(max / n)
		// Rounded up: a shard with few keys keeps its share, the whole
		// about the bound's (what they hold is bounded by bytes).
		l.decodedMax = (maxDecoded + n - 1) / n
		l.readsMax = (maxDecodedReads + n - 1) / n
		l.recordsMax = (maxStatusRecords + n - 1) / n
	}
	return m
}

// of returns the shard of key, nil when m is.
func (m *lastValueShards) of(key string) *lastValues {
	if m == nil {
		return nil
	}
	if m.mask == 0 {
		return &m.shards[0].lastValues
	}
	return &m.shards[maphash.String(m.seed, key)&m.mask].lastValues
}

// ofBytes is of for a key built on the stack: the same key's shard.
func (m *lastValueShards) ofBytes(key []byte) *lastValues {
	if m.mask == 0 {
		return &m.shards[0].lastValues
	}
	return &m.shards[maphash.Bytes(m.seed, key)&m.mask].lastValues
}

// The methods below are lastValues', each on its key's shard.

func (m *lastValueShards) writtenStatus(prefix, name string, rev int64) *decodedSide {
	if m == nil || rev == 0 {
		return nil
	}
	var buf [64]byte
	key := append(append(buf[:0], prefix...), name...)
	return m.ofBytes(key).writtenStatusAt(key, rev)
}

func (m *lastValueShards) latest(key string) (lastValue, bool) { return m.of(key).latest(key) }

func (m *lastValueShards) latestOf(prefix, name string) (lastValue, bool) {
	if m == nil {
		return lastValue{}, false
	}
	var buf [64]byte
	key := append(append(buf[:0], prefix...), name...)
	return m.ofBytes(key).latestAt(key)
}

func (m *lastValueShards) read(kv kv.KeyValue) { m.of(kv.Key).read(kv) }

func (m *lastValueShards) readWhole(kv kv.KeyValue, whole bool) { m.of(kv.Key).readWhole(kv, whole) }

func (m *lastValueShards) readDecoded(kv kv.KeyValue, raw *rawObject) {
	m.of(kv.Key).readDecoded(kv, raw)
}

func (m *lastValueShards) wroteGiven(key string, rev int64, cur, raw *rawObject, value []byte, sides decodedSides, given, done bool) {
	m.of(key).wroteGiven(key, rev, cur, raw, value, sides, given, done)
}

func (m *lastValueShards) forget(key string, rev int64) { m.of(key).forget(key, rev) }

func (m *lastValueShards) writing(key string, value []byte, status *decodedSide) {
	m.of(key).writing(key, value, status)
}

func (m *lastValueShards) doneWriting(key string, value []byte) { m.of(key).doneWriting(key, value) }
