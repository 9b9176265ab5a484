package store

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
)

// A memory's shards share out its bound: a bound under 2 MiB keeps one
// shard (one lastValues, as it was), a larger one up to maxShards, a power
// of two, each with its share of the bytes and of the rings, and never
// more than the bound in all.
func TestLastValueShardsShareTheBound(t *testing.T) {
	require.Nil(t, newLastValueShards(0), "0 turns the memory off")
	require.Nil(t, newLastValueShards(-1))
	for _, c := range []struct{ max, shards int }{
		{1, 1}, {4 << 10, 1}, {2<<20 - 1, 1}, {2 << 20, 2}, {5 << 20, 4}, {defaultLastValueBytes, 16}, {1 << 30, maxShards},
	} {
		m := newLastValueShards(c.max)
		require.Len(t, m.shards, c.shards, "bound %d", c.max)
		sum, decoded, reads, records := 0, 0, 0, 0
		for i := range m.shards {
			l := &m.shards[i].lastValues
			sum += l.max
			decoded, reads, records = decoded+l.decodedMax, reads+l.readsMax, records+l.recordsMax
		}
		require.LessOrEqual(t, sum, c.max, "bound %d", c.max)
		require.Less(t, c.max-sum, c.shards, "bound %d: all of it but the rounding", c.max)
		require.Equal(t, []int{maxDecoded, maxDecodedReads, maxStatusRecords}, []int{decoded, reads, records}, "bound %d", c.max)
	}
}

// However the keys spread over the shards, the whole memory never holds
// more than its bound, each shard counting what it holds exactly; a key
// is only ever in its own shard, found there from a key built on the stack
// (latestOf, writtenStatus) as from its string; a key's latest value is the
// latest remembered of it (a later one is never replaced by an earlier
// one) until it is forgotten; and at most maxDecoded writes and
// maxDecodedReads reads are kept decoded in all.
func TestLastValueShardsKeepEachKeyInItsShard(t *testing.T) {
	const bound = 4 << 20
	m := newLastValueShardsOf(bound, 8)
	rng := rand.New(rand.NewPCG(7, 8))
	latest := map[string]int64{} // the latest revision remembered of each key, 0 once forgotten
	side := &decodedSide{}
	for i := range 20_000 {
		key := fmt.Sprint("p/Kind/k", rng.IntN(600))
		rev := int64(i + 1)
		switch rng.IntN(8) {
		case 0:
			m.forget(key, rev)
			latest[key] = 0
		case 1, 2:
			m.wroteGiven(key, rev, nil, &rawObject{Meta: Meta{Name: key}}, make([]byte, rng.IntN(20_000)), decodedSides{status: side}, false, false)
			latest[key] = rev
		case 3:
			m.readDecoded(kv.KeyValue{Key: key, Value: make([]byte, rng.IntN(30_000)), ModRevision: rev}, &rawObject{})
			latest[key] = rev
		case 4:
			// An older revision than the latest: never remembered over it.
			if e, ok := m.latest(key); ok && e.rev > 1 {
				m.read(kv.KeyValue{Key: key, Value: []byte("old"), ModRevision: e.rev - 1})
				got, _ := m.latest(key)
				require.Equal(t, e.rev, got.rev, "step %d: %s", i, key)
			}
		default:
			m.read(kv.KeyValue{Key: key, Value: make([]byte, rng.IntN(30_000)), ModRevision: rev})
			latest[key] = rev
		}
		if i%251 != 0 && i < 19_950 {
			continue
		}
		total, decoded, reads := 0, 0, 0
		where := map[string]int{}
		for s := range m.shards {
			l := &m.shards[s].lastValues
			sum := 0
			for j, e := range l.items {
				sum += e.size
				require.Equal(t, j, l.index[e.key])
				require.Same(t, l, m.of(e.key), "step %d: %s is in its own shard", i, e.key)
				where[e.key]++
				switch {
				case e.raw == nil:
				case e.written:
					decoded++
				default:
					reads++
				}
			}
			for _, r := range l.records.byKey {
				require.Same(t, l, m.of(r.key), "step %d: %s's record is in its own shard", i, r.key)
				sum += r.size
			}
			require.Equal(t, sum, l.bytes, "step %d: shard %d counts what it holds", i, s)
			require.LessOrEqual(t, l.bytes, l.max)
			total += l.bytes
		}
		require.LessOrEqual(t, total, bound, "step %d", i)
		require.LessOrEqual(t, decoded, maxDecoded, "step %d", i)
		require.LessOrEqual(t, reads, maxDecodedReads, "step %d", i)
		for key, rev := range latest {
			require.LessOrEqual(t, where[key], 1, "step %d: %s is in one shard", i, key)
			e, ok := m.latest(key)
			if rev == 0 {
				require.False(t, ok, "step %d: %s was forgotten", i, key)
				continue
			}
			if ok { // else forgotten past the bound
				require.Equal(t, rev, e.rev, "step %d: %s", i, key)
			}
			byName, okName := m.latestOf("p/Kind/", key[len("p/Kind/"):])
			require.Equal(t, ok, okName, "step %d: %s from a key built on the stack", i, key)
			require.Equal(t, e.rev, byName.rev, "step %d: %s from a key built on the stack", i, key)
			if ok && e.written && e.raw != nil {
				require.Same(t, side, m.writtenStatus("p/Kind/", key[len("p/Kind/"):], rev), "step %d: %s", i, key)
			}
		}
	}
	for s := range m.shards {
		require.NotEmpty(t, m.shards[s].items, "the keys spread over the shards: %d holds some", s)
	}
}

// A value larger than its shard's share of the bound is not remembered,
// one within it is, in whichever shard its key falls.
func TestLastValueShardsBoundAValueByTheShare(t *testing.T) {
	m := newLastValueShardsOf(8<<20, 4)
	for i := range 16 {
		key := fmt.Sprint("k", i)
		m.read(kv.KeyValue{Key: key, Value: make([]byte, 2<<20), ModRevision: 1})
		_, ok := m.lookup(key, 1)
		require.False(t, ok, "%s: over a shard's 2 MiB", key)
		m.read(kv.KeyValue{Key: key, Value: make([]byte, 1<<20), ModRevision: 2})
		_, ok = m.lookup(key, 2)
		require.True(t, ok, "%s: within a shard's 2 MiB", key)
	}
}

// The goroutines that use the memory at once (a watch's decoding, the
// writers, the change judge) may all use one key, each seeing its values
// in revision order: under -race, each step holds its shard's lock.
func TestLastValueShardsOneKeyFromManyGoroutines(t *testing.T) {
	m := newLastValueShardsOf(16<<20, 16)
	keys := []string{"p/Kind/a", "p/Kind/b", "p/Kind/c"}
	side := &decodedSide{}
	var wg sync.WaitGroup
	const steps = 2000
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			seen := map[string]int64{}
			for i := range steps {
				key := keys[rng.IntN(len(keys))]
				rev := int64(i*4 + g + 1)
				switch rng.IntN(5) {
				case 0:
					value := []byte(fmt.Sprint(rev))
					m.writing(key, value, side)
					m.wroteGiven(key, rev, nil, &rawObject{}, value, decodedSides{status: side}, true, true)
				case 1:
					m.readDecoded(kv.KeyValue{Key: key, Value: []byte("v"), ModRevision: rev}, &rawObject{})
				case 2:
					m.writtenStatus("p/Kind/", key[len("p/Kind/"):], rev)
				case 3:
					e, ok := m.latestOf("p/Kind/", key[len("p/Kind/"):])
					if ok {
						require.GreaterOrEqual(t, e.rev, seen[key], "%s: a later look finds no earlier value", key)
						seen[key] = e.rev
					}
				default:
					e, ok := m.latest(key)
					if ok {
						require.GreaterOrEqual(t, e.rev, seen[key], "%s: a later look finds no earlier value", key)
						seen[key] = e.rev
					}
				}
			}
		})
	}
	wg.Wait()
	for _, key := range keys {
		l := m.of(key)
		require.Empty(t, l.pending, "each write noted is done")
	}
}
