package store

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
)

// The memory never holds more than its bound, counts what it holds
// exactly (the status records of its writes too), keeps the latest
// revision of a key, and forgets a key deleted after the revision it holds.
// Which keys it forgets past the bound is random, so how many values it
// holds at the end of the run is too: that a few fit is checked over the
// whole run.
func TestLastValuesAccounting(t *testing.T) {
	const bound = 8 << 10
	l := newLastValues(bound)
	require.Nil(t, newLastValues(0), "0 turns the memory off")
	rng := rand.New(rand.NewPCG(1, 2))
	most, records := 0, 0
	for i := range 5000 {
		key := fmt.Sprint("k", rng.IntN(64))
		switch rev := int64(i + 1); rng.IntN(5) {
		case 0:
			l.forget(key, rev)
		case 1:
			var sides decodedSides
			meta := Meta{Name: key}
			if rng.IntN(2) == 0 { // a status write, whose record the memory may keep past its value
				sides.status = &decodedSide{}
				meta.Managed = []ManagedFields{{Manager: "ctrl", Operation: "Apply", Subresource: statusSide, Fields: "status(ready,message)"}}
			}
			l.wrote(key, rev, nil, &rawObject{Meta: meta}, make([]byte, rng.IntN(2000)), sides)
		case 2:
			l.readDecoded(kv.KeyValue{Key: key, Value: make([]byte, rng.IntN(3000)), ModRevision: rev}, &rawObject{})
		default:
			l.read(kv.KeyValue{Key: key, Value: make([]byte, rng.IntN(3000)), ModRevision: rev})
		}
		sum, empty := 0, 0
		for i, e := range l.items {
			if e.key == "" {
				empty++
				require.Zero(t, e, "an empty slot holds nothing")
				continue
			}
			sum += e.size
			require.Equal(t, i, l.position(e.key))
			require.Equal(t, l.index.hash(e.key), e.hash, "a value keeps its key's hash")
			if e.rec != nil && e.rec.key == e.key {
				require.Same(t, l.records.byKey[e.key], e.rec, "a value's hint that names its key is its key's record")
			}
		}
		for key, r := range l.records.byKey {
			sum += r.size
			require.Contains(t, l.records.order.recs, recordAt{key, r.rev, r}, "a record is in the order it is forgotten in")
		}
		require.Equal(t, len(l.items)-empty, l.index.n)
		require.Len(t, l.free, empty, "every empty slot is free for the next key")
		require.LessOrEqual(t, empty, len(l.items)/2, "no more than half the slots are empty")
		require.Equal(t, sum, l.bytes)
		require.LessOrEqual(t, l.bytes, bound)
		most, records = max(most, l.index.n), max(records, len(l.records.byKey))
	}
	require.Greater(t, most, 2, "a few values fit")
	require.Positive(t, records, "status records are kept")

	l.read(kv.KeyValue{Key: "a", Value: []byte("new"), ModRevision: 10_000})
	l.read(kv.KeyValue{Key: "a", Value: []byte("old"), ModRevision: 9_999})
	e, ok := l.lookup("a", 10_000)
	require.True(t, ok)
	require.Equal(t, "new", string(e.value), "an older revision does not replace a newer one")
	_, ok = l.lookup("a", 9_999)
	require.False(t, ok)
	l.wrote("a", 10_000, nil, &rawObject{}, []byte("new"), decodedSides{})
	e, _ = l.lookup("a", 10_000)
	require.NotNil(t, e.raw, "the Store's own write of a revision replaces its read")
	l.read(kv.KeyValue{Key: "a", Value: []byte("new"), ModRevision: 10_000})
	e, _ = l.lookup("a", 10_000)
	require.NotNil(t, e.raw, "and is not replaced by it")
	l.forget("a", 10_000)
	_, ok = l.lookup("a", 10_000)
	require.True(t, ok, "a deletion at the revision held is not after it")
	l.forget("a", 10_001)
	_, ok = l.lookup("a", 10_000)
	require.False(t, ok)
	l.read(kv.KeyValue{Key: "big", Value: make([]byte, bound), ModRevision: 10_002})
	_, ok = l.lookup("big", 10_002)
	require.False(t, ok, "a value over the bound is not remembered")
}

// Only the latest maxDecoded writes are remembered decoded: an older one
// keeps its value, and costs what a read does. A read of a decoded write's
// revision (its watch event, before or after it) lends it the Backend's
// value, which is what it keeps once it is displaced.
func TestLastValuesKeepOnlyTheLatestWritesDecoded(t *testing.T) {
	l := newLastValues(64 << 20)
	value := func(i int) []byte { return fmt.Appendf(nil, `{"metadata":{"name":"k%d"}}`, i) }
	backends := map[int][]byte{}
	for i := range maxDecoded + 10 {
		key := fmt.Sprint("k", i)
		if i < 5 {
			backends[i] = value(i)
		}
		if i < 3 { // the watch event first
			l.read(kv.KeyValue{Key: key, Value: backends[i], ModRevision: int64(i + 1)})
		}
		l.wrote(key, int64(i+1), nil, &rawObject{Meta: Meta{Name: key}}, value(i), decodedSides{})
		if i >= 3 && i < 5 { // the write first
			l.read(kv.KeyValue{Key: key, Value: backends[i], ModRevision: int64(i + 1)})
		}
	}
	decoded, sum := 0, 0
	for _, e := range l.items {
		sum += e.size
		if e.raw != nil {
			decoded++
			require.Equal(t, len(e.key)+3*len(e.value)+entryOverhead, e.size)
		} else {
			require.Equal(t, len(e.key)+len(e.value)+entryOverhead, e.size)
		}
	}
	require.Equal(t, maxDecoded, decoded)
	require.Equal(t, sum, l.bytes)
	for i := range 10 {
		e, ok := l.lookup(fmt.Sprint("k", i), int64(i+1))
		require.True(t, ok, "a displaced write is still remembered")
		require.Nil(t, e.raw, "but not decoded")
		require.Equal(t, value(i), e.value)
		if i < 5 {
			require.Same(t, &backends[i][0], &e.value[0], "the Backend's value, read back")
		}
	}
	// A listing that reads a displaced write's revision lends it the
	// Backend's value too.
	listed := value(7)
	l.read(kv.KeyValue{Key: "k7", Value: listed, ModRevision: 8})
	e, _ := l.lookup("k7", 8)
	require.Same(t, &listed[0], &e.value[0])

	e, _ = l.lookup(fmt.Sprint("k", maxDecoded+9), int64(maxDecoded+10))
	require.NotNil(t, e.raw, "the latest write is decoded")

	// A key written again is displaced by its own latest write only.
	again := fmt.Sprint("k", maxDecoded+5)
	l.wrote(again, 5000, nil, &rawObject{}, value(0), decodedSides{})
	for i := range maxDecoded {
		l.wrote(fmt.Sprint("x", i), int64(6000+i), nil, &rawObject{}, value(i), decodedSides{})
	}
	e, _ = l.lookup(again, 5000)
	require.Nil(t, e.raw)
}

// The memory keeps the last maxDecodedReads values read decoded, counting
// each as twice its bytes; an older one keeps only its bytes, and counts
// them alone. The Store's own write of a revision outranks its decoded
// read, which lends it the Backend's value, and stays decoded however many
// values are read since.
func TestLastValuesDecodedReads(t *testing.T) {
	l := newLastValues(1 << 30)
	backend := []byte("own")
	l.readDecoded(kv.KeyValue{Key: "own", Value: backend, ModRevision: 1}, &rawObject{})
	l.wrote("own", 1, nil, &rawObject{}, []byte("own"), decodedSides{})
	e, _ := l.lookup("own", 1)
	require.True(t, e.written, "the Store's own write of a revision replaces its decoded read")
	require.Same(t, &backend[0], &e.value[0], "with the Backend's value")
	l.readDecoded(kv.KeyValue{Key: "own", Value: []byte("own"), ModRevision: 1}, &rawObject{})
	e, _ = l.lookup("own", 1)
	require.True(t, e.written, "and is not replaced by it")
	const n = 3 * maxDecodedReads
	for i := range n {
		key := fmt.Sprint("k", i%(2*maxDecodedReads))
		l.readDecoded(kv.KeyValue{Key: key, Value: []byte("value"), ModRevision: int64(i + 2)}, &rawObject{})
	}
	decoded, sum := 0, 0
	for _, e := range l.items {
		sum += e.size
		switch {
		case e.key == "own":
		case e.raw == nil:
			require.Equal(t, len(e.key)+len("value")+entryOverhead, e.size, "%s keeps its bytes alone", e.key)
		default:
			decoded++
			require.GreaterOrEqual(t, e.rev, int64(n+2-maxDecodedReads), "%s at %d is among the last read", e.key, e.rev)
			require.Equal(t, len(e.key)+2*len("value")+entryOverhead, e.size)
		}
	}
	require.Equal(t, maxDecodedReads, decoded)
	require.Equal(t, sum, l.bytes)
	e, ok := l.lookup("own", 1)
	require.True(t, ok)
	require.NotNil(t, e.raw, "the Store's own write stays decoded")
}

// BenchmarkLastValuesRead measures what remembering a read costs List and
// Watch per object, on 200,000 keys of ~1 KB values: "replace" when the
// kind fits in the memory (a watch event of a remembered key), "evict" when
// it does not (every read a new key, forgetting another at random). The bar
// is ≤ 0.5 µs, a few percent of decoding the object (~20 µs, see
// BenchmarkTyped1KB/get).
//
//	go test -run '^$' -bench LastValuesRead -benchtime 200000x ./store/
func BenchmarkLastValuesRead(b *testing.B) {
	for _, c := range []struct {
		name string
		max  int
	}{{"replace", 1 << 40}, {"evict", defaultLastValueBytes}} {
		b.Run(c.name, func(b *testing.B) {
			l := newLastValues(c.max)
			keys := make([]string, 200_000)
			value := make([]byte, 1000)
			for i := range keys {
				keys[i] = fmt.Sprintf("prefix/Kind/object-%06d", i)
				l.read(kv.KeyValue{Key: keys[i], Value: value, ModRevision: int64(i + 1)})
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				l.read(kv.KeyValue{Key: keys[i%len(keys)], Value: value, ModRevision: int64(len(keys) + i)})
			}
			b.ReportMetric(float64(len(l.items)), "values")
		})
	}
}

// BenchmarkLastValuesLatest measures finding what the memory holds of a
// key no lookup touched lately, in random order over 10k and 1M keys (a
// kind's values), each looked up by a key string of its own, as a watch
// event's is: at 1M the index and the values miss the CPU's caches.
// This is the one case the index (lastIndex, a hashslot table) is slower
// in than the Go map it replaced: medians of five alternated runs 620 ns
// against the map's 528 at 1M, 54 against 50 at 10k. Its lookup reads
// the slot, then the item for the key's header, then the key's bytes,
// each load waiting for the one before, where the map's group holds the
// key's header beside the place, so that the key's bytes and the item
// load at once. A memory holds 1M keys only when told to (the default
// bound holds about 20k of them); under the bound, forgetting a value
// with no look at its key is what counts (BenchmarkLastValuesEvent,
// BenchmarkLastValuesRead).
//
//	go test -run '^$' -bench LastValuesLatest ./store/
func BenchmarkLastValuesLatest(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			l := newLastValues(1 << 40)
			keys := make([]string, n)
			value := make([]byte, 100)
			for i := range keys {
				keys[i] = fmt.Sprintf("prefix/Kind/object-%07d", i)
				l.read(kv.KeyValue{Key: keys[i], Value: value, ModRevision: int64(i + 1)})
			}
			for i := range keys {
				keys[i] = strings.Clone(keys[i])
			}
			rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, ok := l.latest(keys[i%n]); !ok {
					b.Fatalf("%s not remembered", keys[i%n])
				}
				i++
			}
		})
	}
}

// BenchmarkLastValuesEvent measures what one update costs the memory of a
// controller's Store, with the default bound, over 10k and 1M keys
// updated in turn (the controller benchmark's order): the spec's event
// read decoded (a cache's watch), the status write's look-up of it, the
// write remembered decoded with its status record, and the write's event.
// At 1M keys the bound holds about one value in 30, so every event's key
// is new to the memory and forgets another at random.
//
//	go test -run '^$' -bench LastValuesEvent -benchtime 2000000x ./store/
func BenchmarkLastValuesEvent(b *testing.B) {
	managed := []ManagedFields{{Manager: "user", Operation: "Update", Fields: "spec(replicas)"}, {Manager: "ctrl", Operation: "Apply", Subresource: statusSide, Fields: "status(ready)"}}
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			l := newLastValues(defaultLastValueBytes)
			keys := make([]string, n)
			for i := range keys {
				keys[i] = fmt.Sprintf("prefix/App/app-%07d", i)
			}
			value := make([]byte, 500)
			side := &decodedSide{}
			// The decoded objects, made ahead and used in turn: what
			// the caller allocates is not the memory's cost.
			raws, next := make([]rawObject, 4*maxDecodedReads), 0
			raw := func(k string) *rawObject {
				r := &raws[next%len(raws)]
				next++
				*r = rawObject{Meta: Meta{Name: k, Managed: managed}}
				return r
			}
			rev := int64(0)
			event := func(i int) {
				k := keys[i%n]
				rev++
				l.readDecoded(kv.KeyValue{Key: k, Value: value, ModRevision: rev}, raw(k))
				if e, ok := l.latestOf("", k); !ok || e.rev != rev {
					b.Fatalf("%s: the event just read is not remembered", k)
				}
				rev++
				l.wroteGiven(k, rev, nil, raw(k), value, decodedSides{status: side}, true, false)
				l.readDecoded(kv.KeyValue{Key: k, Value: value, ModRevision: rev}, raw(k))
			}
			for i := range n { // each key once, as the benchmark's warm-up
				event(i)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				event(i)
				i++
			}
			b.ReportMetric(float64(l.index.n), "values")
		})
	}
}

// writtenStatus gives the status side of the Store's own write of the
// revision asked, as lookup does, and nothing for another revision, for a
// value read rather than written, or for another key: the judge takes a
// record it did not decode only from there (see writtenManaged).
func TestWrittenStatusIsOnlyTheStoresOwnWriteOfThatRevision(t *testing.T) {
	side := &decodedSide{}
	l := newLastValues(1 << 20)
	l.put("p/Kind/a", lastValue{rev: 5, written: true, sides: decodedSides{status: side}, size: 10}, readSide)
	l.put("p/Kind/b", lastValue{rev: 6, sides: decodedSides{status: side}, size: 10}, readSide)
	if got := l.writtenStatus("p/Kind/", "a", 5); got != side {
		t.Fatalf("own write at its revision: got %p, want %p", got, side)
	}
	for _, c := range []struct {
		name string
		rev  int64
	}{{"a", 4}, {"a", 0}, {"b", 6}, {"c", 5}} {
		if got := l.writtenStatus("p/Kind/", c.name, c.rev); got != nil {
			t.Errorf("%s at %d: got a record, want none", c.name, c.rev)
		}
	}
	long := strings.Repeat("n", 100) // longer than the key's stack buffer
	l.put("p/Kind/"+long, lastValue{rev: 7, written: true, sides: decodedSides{status: side}, size: 10}, readSide)
	if got := l.writtenStatus("p/Kind/", long, 7); got != side {
		t.Errorf("long name: got %p, want %p", got, side)
	}
	if (*lastValues)(nil).writtenStatus("p/Kind/", "a", 5) != nil {
		t.Error("a nil memory remembers nothing")
	}
}

// sharedSlice says a slice's elements are another's only when each is:
// one that grew into the other's spare capacity has elements of its own.
func TestSharedSliceIsElementByElement(t *testing.T) {
	b := make([]int, 2, 4)
	require.True(t, sharedSlice(b, b))
	require.True(t, sharedSlice(b[:1], b))
	require.True(t, sharedSlice([]int(nil), b), "nothing to copy")
	require.False(t, sharedSlice(append(b, 3), b), "grew into b's capacity")
	require.False(t, sharedSlice(slices.Clone(b), b))
	m := map[string]int{}
	require.True(t, sharedMap(m, m))
	require.False(t, sharedMap(maps.Clone(m), m))
	require.False(t, sharedMap(map[string]int(nil), nil))
}

// The memory finds a key from where it last found it (lastValues.hints,
// and the position a ring entry was remembered at) before its index: a
// key forgotten, whose slot another key took since, or moved when the
// memory packed its values (compact), is never taken for the one now in
// its place.
// After every step of a random run, over a bound that forgets keys at
// random, each key's latest value is the one its index names, and every
// value remembered decoded is in its ring, the only way it is displaced
// (so at most maxDecoded writes and maxDecodedReads reads are decoded).
func TestLastValuesHintsNeverMisplaceAKey(t *testing.T) {
	const bound = 16 << 10
	l := newLastValues(bound)
	rng := rand.New(rand.NewPCG(3, 4))
	key := func() string { return fmt.Sprint("k", rng.IntN(48)) }
	for i := range 20_000 {
		// Keys share revisions, so that only its key tells a value from
		// another's in its place.
		rev := int64(i/3 + 1)
		switch k := key(); rng.IntN(6) {
		case 0:
			l.forget(k, rev)
		case 1:
			l.wrote(k, rev, nil, &rawObject{Meta: Meta{Name: k}}, make([]byte, rng.IntN(200)), decodedSides{})
		case 2:
			l.readDecoded(kv.KeyValue{Key: k, Value: make([]byte, rng.IntN(300)), ModRevision: rev}, &rawObject{})
		case 3:
			l.read(kv.KeyValue{Key: k, Value: make([]byte, rng.IntN(300)), ModRevision: rev})
		case 4:
			l.latestOf("", k) // the writes' hint
		default:
			l.latest(k) // the watches' hint
		}
		for range 4 {
			k := key()
			want, wantOK := lastValue{}, false
			if j, ok := l.index.lookup(l.items, k); ok {
				want, wantOK = l.items[j], true
			}
			got, ok := l.latest(k)
			require.Equal(t, wantOK, ok, "step %d: %s", i, k)
			require.Equal(t, want.key, got.key, "step %d: %s", i, k)
			require.Equal(t, want.rev, got.rev, "step %d: %s", i, k)
			got, ok = l.latestOf("", k)
			require.Equal(t, wantOK, ok, "step %d: %s (writes' side)", i, k)
			require.Equal(t, want.rev, got.rev, "step %d: %s (writes' side)", i, k)
		}
		written, reads := 0, 0
		for _, e := range l.items {
			if e.raw == nil {
				continue
			}
			ring := &l.reads
			if e.written {
				ring, written = &l.decoded, written+1
			} else {
				reads++
			}
			require.True(t, slices.ContainsFunc(ring.keys, func(w keyRev) bool { return w.key == e.key && w.rev == e.rev }),
				"step %d: %s at %d is decoded, so in its ring", i, e.key, e.rev)
		}
		require.LessOrEqual(t, written, maxDecoded)
		require.LessOrEqual(t, reads, maxDecodedReads)
	}

	// The ring's entry of a forgotten key names the position another
	// key's value of the same revision took: displacing the entry leaves
	// that value decoded. The value is there as the next new key's (the
	// slot left empty) or as moved there by compact.
	for _, packed := range []bool{false, true} {
		l = newLastValues(1 << 30)
		l.readDecoded(kv.KeyValue{Key: "a", Value: []byte("a"), ModRevision: 1}, &rawObject{})
		l.readDecoded(kv.KeyValue{Key: "b", Value: []byte("b"), ModRevision: 1}, &rawObject{})
		taker, reads := "c", 3 // a, b and c or d: a's ring entry is the oldest
		if packed {
			l.readDecoded(kv.KeyValue{Key: "d", Value: []byte("d"), ModRevision: 1}, &rawObject{})
			l.forget("a", 2) // the slots: empty, b, d
			l.forget("d", 2) // two empty of three: b moves into a's place
			require.Equal(t, 0, l.position("b"), "compact packed b into a's slot")
			taker = "b"
		} else {
			l.forget("a", 2)
			l.readDecoded(kv.KeyValue{Key: "c", Value: []byte("c"), ModRevision: 1}, &rawObject{})
			require.Equal(t, 0, l.position("c"), "c took a's empty slot")
		}
		for i := range maxDecodedReads - reads + 1 { // displaces a's entry alone
			l.readDecoded(kv.KeyValue{Key: fmt.Sprint("x", i), Value: []byte("x"), ModRevision: int64(i + 2)}, &rawObject{})
		}
		e, ok := l.lookup(taker, 1)
		require.True(t, ok)
		require.NotNil(t, e.raw, "%s is among the last %d reads decoded", taker, maxDecodedReads)
	}
}

// Past its bound the memory forgets values to remember new ones, and no
// value it keeps moves meanwhile: the position a hint or a ring found it
// at stays its own (see lastValues.items), where moving the last value
// into the gap moved the one remembered last, which its event's next
// steps look for. Only a memory more than half empty packs its values.
func TestLastValuesKeepEachValueWhereItWas(t *testing.T) {
	l := newLastValues(32 << 10)
	rng := rand.New(rand.NewPCG(5, 6))
	at := map[string]int{}
	for i := range 20_000 {
		k := fmt.Sprint("k", rng.IntN(1000))
		l.read(kv.KeyValue{Key: k, Value: make([]byte, 100+rng.IntN(400)), ModRevision: int64(i + 1)})
		for j, e := range l.items {
			k := e.key
			if k == "" {
				continue
			}
			if was, ok := at[k]; ok {
				require.Equal(t, was, j, "step %d: %s moved", i, k)
			}
			at[k] = j
		}
		for k := range at {
			if l.position(k) < 0 {
				delete(at, k)
			}
		}
		require.LessOrEqual(t, len(l.free), len(l.items)/2, "step %d", i)
	}
	require.Greater(t, len(at), 30, "many values fit")
	require.Less(t, len(at), 1000, "and forgetting went on")

	// Deleting most keys packs the rest: then they move, once.
	for k := range at {
		if l.index.n > 4 {
			l.forget(k, 1<<40)
		}
	}
	require.Len(t, l.items, 4+len(l.free))
	require.LessOrEqual(t, len(l.free), 2, "no more than half the slots are empty")
}

// Forgetting at random past the bound never forgets the value just
// remembered, also when forgetting packs the memory on the way (a value
// nearly the bound's size forgets all the others: see compact).
func TestLastValuesKeepTheValueJustRemembered(t *testing.T) {
	const bound = 16 * (entryOverhead + 100)
	l := newLastValues(bound)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 20_000 {
		k := fmt.Sprint("k", rng.IntN(500))
		size := rng.IntN(100)
		if rng.IntN(20) == 0 {
			// Nearly the bound: the shrink forgets all the others, and
			// packs the memory on the way.
			size = (bound - entryOverhead - len(k)) / 2
		}
		l.read(kv.KeyValue{Key: k, Value: make([]byte, size), ModRevision: int64(i + 1)})
		e, ok := l.latest(k)
		require.True(t, ok, "step %d: %s, just remembered, was forgotten", i, k)
		require.Equal(t, int64(i+1), e.rev, "step %d: %s", i, k)
	}
}

// Which values the memory forgets past its bound is its seed's choice:
// two memories seeded alike and given the same values keep the same ones,
// so that a test that failed replays it (see SeedForgetting), and one
// seeded otherwise keeps others.
func TestLastValuesForgetAsSeeded(t *testing.T) {
	kept := func(seed uint64) []string {
		l := newLastValues(8 << 10)
		l.seedForgetting(seed)
		var trace []string
		for i := range 2000 {
			k := fmt.Sprint("k", i%300)
			l.read(kv.KeyValue{Key: k, Value: make([]byte, 50+i%200), ModRevision: int64(i + 1)})
			if i%100 == 99 {
				var keys []string
				for _, e := range l.items {
					if e.key != "" {
						keys = append(keys, e.key)
					}
				}
				require.Greater(t, len(keys), 5, "step %d: a few values fit", i)
				require.Less(t, len(keys), 300, "step %d: and the memory forgot some", i)
				slices.Sort(keys)
				trace = append(trace, strings.Join(keys, ","))
			}
		}
		return trace
	}
	a := kept(7)
	require.Equal(t, a, kept(7), "two memories seeded alike kept different values")
	require.NotEqual(t, a, kept(8), "a memory seeded otherwise kept the same values: the seed chose nothing")
}

// A key's status record, recorded again at a later revision, is updated
// in place, and the ring's entry of its earlier revision, once it is the
// oldest and overwritten, does not forget it: the record of the later
// revision is forgotten only with its own entry.
func TestLastValuesStatusRecordOutlivesItsEarlierRevision(t *testing.T) {
	side := &decodedSide{}
	l := newLastValues(1 << 30)
	wrote := func(key string, rev int64) {
		l.wrote(key, rev, nil, &rawObject{Meta: Meta{Name: key}}, []byte("v"), decodedSides{status: side})
	}
	wrote("k", 1)
	wrote("k", 2) // k's record at 1
	require.Equal(t, int64(1), l.records.byKey["k"].rev)
	require.Equal(t, recordAt{"k", 1, l.records.byKey["k"]}, l.records.order.recs[0], "the oldest entry")
	rev := int64(3)
	for o := &l.records.order; len(o.recs) < maxStatusRecords || o.next == 0; rev++ {
		// Past the decoded ring, each write displaces one, whose
		// record it keeps: k's at 2 among them.
		wrote(fmt.Sprint("x", rev), rev)
	}
	require.Equal(t, 1, l.records.order.next, "k's entry at 1 is overwritten")
	require.Same(t, side, l.writtenStatus("", "k", 2), "k's record at 2 is kept")
	require.Nil(t, l.writtenStatus("", "k", 1))
}

// Past maxStatusRecords, a record takes the room of the oldest one it
// forgets: a Store writing the status of more objects than it keeps
// records of, in turn, allocates none for them. Whatever the order of the
// keys recorded, each record kept is its key's own, counted once, and
// named by the newest of its key's entries in the ring.
func TestLastValuesStatusRecordsTakeTheRoomOfTheOldest(t *testing.T) {
	side := &decodedSide{}
	l := newLastValues(1 << 30)
	const keys = maxStatusRecords + 500
	names := make([]string, keys)
	for i := range names {
		names[i] = fmt.Sprint("k", i)
	}
	rev, raw := int64(0), &rawObject{}
	record := func(key string) {
		rev++
		e := lastValue{key: key, rev: rev, written: true, raw: raw, sides: decodedSides{status: side}}
		l.mu.Lock()
		l.recordLocked(&e)
		l.mu.Unlock()
	}
	for i := range 2 * keys {
		record(names[i%keys])
	}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		record(names[i%keys]) // a key whose record was forgotten
		i++
	})
	require.Zero(t, allocs)

	// Keys recorded again soon leave older entries that no longer name
	// their record: their room is not taken.
	rng := rand.New(rand.NewPCG(5, 6))
	for range 4 * keys {
		record(names[rng.IntN(keys)])
	}
	inRing := map[recordAt]bool{}
	for _, a := range l.records.order.recs {
		inRing[a] = true
	}
	owner := map[*statusRecord]string{}
	sum := 0
	for key, r := range l.records.byKey {
		require.NotContains(t, owner, r, "%s's record is %s's too", key, owner[r])
		owner[r] = key
		sum += r.size
		require.True(t, inRing[recordAt{key, r.rev, r}], "%s's record at %d is in the ring", key, r.rev)
	}
	require.Equal(t, sum, l.bytes)
}

// A value holds its key's status record as a hint (lastValue.rec), which
// the record's room, once forgotten and taken by another key's record,
// no longer is: a read of the key then learns no status from the other
// key's record, whose status side it has.
func TestLastValuesStatusRecordHintIsItsKeysOnly(t *testing.T) {
	side, other := &decodedSide{}, &decodedSide{}
	l := newLastValues(1 << 30)
	l.wrote("A", 1, nil, &rawObject{}, []byte("a"), decodedSides{status: side})
	l.wrote("A", 2, nil, &rawObject{}, []byte("a"), decodedSides{status: side}) // A's record at 1
	l.read(kv.KeyValue{Key: "A", Value: []byte("a"), ModRevision: 3})           // at 2, and the read's hint
	x := l.records.byKey["A"]
	require.Same(t, x, l.items[l.position("A")].rec)
	rev := int64(3)
	for l.records.byKey["A"] != nil {
		rev++
		e := lastValue{key: fmt.Sprint("k", rev), rev: rev, written: true, raw: &rawObject{}, sides: decodedSides{status: other}}
		l.mu.Lock()
		l.recordLocked(&e)
		l.mu.Unlock()
	}
	require.Equal(t, fmt.Sprint("k", rev), x.key, "A's record's room is the last record's")
	require.Same(t, x, l.items[l.position("A")].rec, "which A's value still names")
	l.readDecoded(kv.KeyValue{Key: "A", Value: []byte("a"), ModRevision: rev + 1}, &rawObject{})
	e, ok := l.lookup("A", rev+1)
	require.True(t, ok)
	require.Nil(t, e.sides.status, "A has no status record: the one its hint names is another key's")
}

// The decoding of one event looks its key up once (rememberedOnce): each
// revision it asks about is answered from that look, what the memory holds
// then, by a value of that revision only; a value remembered afterwards is
// not seen. Without a memory, nothing is remembered.
func TestRememberedOnceAnswersFromOneLook(t *testing.T) {
	l := newLastValues(1 << 20)
	l.readWhole(kv.KeyValue{Key: "k", Value: []byte(`{"v":5}`), ModRevision: 5}, true, 0)
	mem := rememberedOnce{key: "k"}
	e, ok := mem.at(l, 5)
	require.True(t, ok)
	require.Equal(t, int64(5), e.rev)
	_, ok = mem.at(l, 0)
	require.False(t, ok, "revision 0 is no value's")
	l.readWhole(kv.KeyValue{Key: "k", Value: []byte(`{"v":6}`), ModRevision: 6}, true, 0)
	_, ok = mem.at(l, 6)
	require.False(t, ok, "revision 6 came after the look")
	e, ok = mem.at(l, 5)
	require.True(t, ok, "the look still answers for revision 5")
	require.Equal(t, `{"v":5}`, string(e.value))
	fresh := rememberedOnce{key: "k"}
	_, ok = fresh.at(l, 5)
	require.False(t, ok, "a new look finds revision 6 only")
	_, ok = fresh.at(l, 6)
	require.True(t, ok)
	none := rememberedOnce{key: "k"}
	_, ok = none.at(nil, 5)
	require.False(t, ok, "no memory remembers nothing")
}

// lookup returns what is remembered of key when it is its value at rev: the
// tests' way to read the memory (the Store's steps use rememberedOnce).
func (l *lastValues) lookup(key string, rev int64) (lastValue, bool) {
	if e, ok := l.latest(key); ok && rev != 0 && e.rev == rev {
		return e, true
	}
	return lastValue{}, false
}

// A watch's events of objects with equal ownership records are remembered
// sharing one list of the memory's own (keptLists), never the list of the
// object the event hands out; records that differ get a list of their own.
func TestWatchRemembersEqualRecordsOnce(t *testing.T) {
	st, err := New[fastSpec, fastStatus](newMapBackend(), "App")
	require.NoError(t, err)
	decode := st.decoder(false, nil, nil)
	records := func(manager string) []ManagedFields {
		return []ManagedFields{{Manager: manager, Operation: "Update", Fields: "~x"}, {Manager: "ctl", Operation: "Apply", Subresource: statusSide, Fields: "~y"}}
	}
	remembered := map[string]*rawObject{}
	for i, c := range []struct{ name, manager string }{{"a", "user"}, {"b", "user"}, {"c", "other"}, {"d", "user"}} {
		rev := int64(i + 1)
		obj := &Object[fastSpec, fastStatus]{Meta: Meta{Kind: "App", Name: c.name, Managed: records(c.manager),
			LastWrite: LastWrite{Manager: c.manager, Op: "Update"}, Generation: 1}, Spec: fastSpec{Replicas: i}}
		value, err := json.Marshal(obj)
		require.NoError(t, err)
		key := st.keyOf(c.name)
		ev := decode(kv.Event{Type: kv.EventPut, Revision: rev, KV: kv.KeyValue{Key: key, Value: value, ModRevision: rev}})
		require.Equal(t, Added, ev.Type)
		e, ok := st.last.lookup(key, rev)
		require.True(t, ok)
		require.NotNil(t, e.raw, "remembered decoded")
		require.Equal(t, records(c.manager), e.raw.Meta.Managed)
		require.NotSame(t, &ev.Object.Meta.Managed[0], &e.raw.Meta.Managed[0], "the memory's own list, not the object's")
		remembered[c.name] = e.raw
	}
	require.Same(t, &remembered["a"].Meta.Managed[0], &remembered["b"].Meta.Managed[0], "equal records: one list")
	require.Same(t, &remembered["a"].Meta.Managed[0], &remembered["d"].Meta.Managed[0], "equal records: one list")
	require.NotSame(t, &remembered["a"].Meta.Managed[0], &remembered["c"].Meta.Managed[0], "other records: a list of their own")
}

// The head length the memory keeps for a value (lastValue.headEnd) stays
// only while the value it cuts is byte for byte the one it was found in:
// when a read and a write of one revision meet, the entry kept takes the
// other's value, and a value that differs (a backend that rewrote it)
// keeps no head.
func TestHeadLengthFollowsTheValueKept(t *testing.T) {
	head := []byte(`{"metadata":{"kind":"App","name":"a"`)
	value := append(append([]byte{}, head...), `,"lastWrite":{}}}`...)
	raw := &rawObject{head: headText(value[:len(head):len(head)])}
	other := []byte(`{"metadata":{"kind":"App","name":"b","lastWrite":{}}}`)
	for _, c := range []struct {
		name      string
		read      []byte
		wantValue []byte
		wantHead  int
	}{
		{"the same bytes", append([]byte{}, value...), nil, len(head)},
		{"other bytes", other, other, 0},
	} {
		t.Run("write then read: "+c.name, func(t *testing.T) {
			l := newLastValues(64 << 20)
			l.wrote("k", 5, nil, raw, value, decodedSides{})
			l.read(kv.KeyValue{Key: "k", Value: c.read, ModRevision: 5})
			e, ok := l.latest("k")
			require.True(t, ok)
			require.Equal(t, string(c.read), string(e.value), "the Backend's value")
			require.Equal(t, c.wantHead, e.headEnd)
		})
		t.Run("read then write: "+c.name, func(t *testing.T) {
			l := newLastValues(64 << 20)
			l.read(kv.KeyValue{Key: "k", Value: c.read, ModRevision: 5})
			l.wrote("k", 5, nil, raw, value, decodedSides{})
			e, ok := l.latest("k")
			require.True(t, ok)
			require.Equal(t, string(c.read), string(e.value), "the watch's value, read first")
			require.Equal(t, c.wantHead, e.headEnd)
		})
	}
}

// A value a listing decodes is remembered with the length of its head
// (lastValue.headEnd), as a value a watch decodes is: after a Cache's
// relist, the watch event of the next write of each object takes its
// metadata up to their last write from the object listed (baseHead),
// rather than reading them again. A value read without being decoded
// knows none.
func TestListRemembersTheHeadOfWhatItDecodes(t *testing.T) {
	ctx := t.Context()
	be := newMapBackend()
	other, err := New[fastSpec, fastStatus](be, "App", WithLastValues(0))
	require.NoError(t, err)
	_, err = other.As("user").Create(ctx, &Object[fastSpec, fastStatus]{Meta: Meta{Name: "a", Labels: map[string]string{"app": "web"}},
		Spec: fastSpec{Image: "web:1", Replicas: 2}})
	require.NoError(t, err)
	st, err := New[fastSpec, fastStatus](be, "App")
	require.NoError(t, err)
	obj, derr := st.listed(be.m[st.keyOf("a")], nil, nil, nil) // a listing's decode of the value
	require.Nil(t, derr)
	require.Equal(t, "web:1", obj.Spec.Image)

	e, ok := st.last.latest(st.keyOf("a"))
	require.True(t, ok)
	require.True(t, e.whole)
	require.Greater(t, e.headEnd, len(`{"metadata":{`), "the head's length")
	require.Equal(t, `{"metadata":{"kind":"App","name":"a"`, string(e.value[:len(`{"metadata":{"kind":"App","name":"a"`)]))
	require.True(t, strings.HasPrefix(string(e.value[e.headEnd:]), `,"lastWrite":`), "the head ends at the last write: %s", e.value)
	require.Equal(t, e.headEnd, headIn(&rawObject{head: headText(e.value[:e.headEnd])}, e.value))
}

// position returns the position of key in l.items, -1 when it is not
// held.
func (l *lastValues) position(key string) int {
	if i, ok := l.index.lookup(l.items, key); ok {
		return i
	}
	return -1
}

// TestLastIndexPanicsOnAPositionItDoesNotHold is the index's guard on its
// own books: asked to remove or move a position it does not hold (a bug
// in the memory, not a caller's input), it panics at the end of the probe
// run, where it would otherwise probe forever under the memory's lock.
func TestLastIndexPanicsOnAPositionItDoesNotHold(t *testing.T) {
	x := lastIndex{seed: maphash.MakeSeed()}
	h := x.hash("a")
	x.add(0, h)
	require.PanicsWithValue(t, "store: the memory of values' index does not hold a position it gave", func() { x.remove(1, h) })
	require.PanicsWithValue(t, "store: the memory of values' index does not hold a position it gave", func() { x.move(0, 1, h+1) })
	x.remove(0, h)
	require.Zero(t, x.n)
}
