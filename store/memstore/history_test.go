package memstore_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// doc is a 1 KB document, as a controller's status write changes it: the
// write counter and a timestamp differ between two writes of one key.
func doc(key, write int) []byte {
	filler := make([]byte, 900)
	for i := range filler {
		filler[i] = 'a' + byte((i*7+key)%26)
	}
	return fmt.Appendf(nil, `{"metadata":{"name":"k-%d","statusGeneration":%d},"spec":%q,"status":{"at":"2026-12-02T02:50:%02d.%09dZ"}}`,
		key, write, filler, write%60, write*7919)
}

// The history keeps every event's value for watches and pinned List pages
// to replay, but past its byte budget an old value is kept as its
// difference from the key's next one: 40,000 writes of 4,000 keys, each a
// 1 KB document of which a write changes a few bytes, hold about the live
// values and the events, not 36,000 old values in full (the flagship
// demo's history was a third of its heap), and at most the budget more.
func TestHistoryKeepsOldValuesCompactly(t *testing.T) {
	for _, budget := range []int{0, memstore.DefaultHistoryBytes} {
		t.Run(fmt.Sprint("budget ", budget), func(t *testing.T) {
			const keys, writes = 4000, 10
			s := memstore.New(memstore.WithHistorySize(keys*writes), memstore.WithHistoryBytes(budget))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for w := range writes {
				for k := range keys {
					_, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%d", k), Value: doc(k, w)})
					require.NoError(t, err)
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			held := int(after.HeapAlloc) - int(before.HeapAlloc)
			size := len(doc(0, 0))
			live, old := keys*size, keys*(writes-1)*size
			t.Logf("held %d bytes: live values %d, old values %d in full", held, live, old)
			require.Less(t, held, budget+live+old/3, "bytes held: live values %d, old values %d in full", live, old)
			runtime.KeepAlive(s)
		})
	}
}

// Old values read back exactly as written, whether a watch replays them or
// a pinned List page shows them: with every value but the latest a delta,
// keys written hundreds of times in a row (past the longest chain of
// deltas), deleted and created again, a history that evicts as it goes,
// and Compact.
func TestOldValuesReadBackExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const size = 3000
	s := memstore.New(memstore.WithHistorySize(size), memstore.WithAgingLag(1), memstore.WithHistoryBytes(0))
	var log []kv.Event // every event, as a watch must send it
	state := map[string]kv.KeyValue{}
	snapshots := map[int64]map[string]kv.KeyValue{}
	for step := range 8000 {
		k := rng.IntN(40)
		if step%500 < 200 {
			k = 0 // a hot key, written 200 times in a row
		}
		key := fmt.Sprintf("k/%02d", k)
		prev, existed := state[key]
		var ev kv.Event
		if existed && rng.IntN(8) == 0 {
			rev, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WriteDelete, Key: key})
			require.NoError(t, err)
			ev = kv.Event{Type: kv.EventDelete, Revision: rev, KV: kv.KeyValue{Key: key, ModRevision: rev}, Prev: prev}
			delete(state, key)
		} else {
			v := doc(k, step)
			if rng.IntN(10) == 0 {
				v = []byte(fmt.Sprint(rng.Int())) // unlike the last
			}
			rev, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: key, Value: v})
			require.NoError(t, err)
			now := kv.KeyValue{Key: key, Value: v, CreateRevision: rev, ModRevision: rev}
			if existed {
				now.CreateRevision = prev.CreateRevision
			}
			ev = kv.Event{Type: kv.EventPut, Revision: rev, KV: now, Prev: prev}
			state[key] = now
		}
		log = append(log, ev)
		if step%400 == 0 {
			snapshots[ev.Revision] = maps.Clone(state)
		}
	}
	require.NoError(t, s.Compact(t.Context(), s.Revision()-size+500))

	head := s.Revision()
	for _, from := range []int64{head - size + 500 - 1, head - 1000, head - 1} {
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := s.Watch(ctx, "k/", from)
		require.NoError(t, err)
		for _, want := range log[from:] {
			got := <-ch
			require.NoError(t, got.Err)
			require.Equal(t, want, got, "watch from %d, event %d", from, want.Revision)
		}
		cancel()
		for range ch {
		}
	}
	checked := 0
	for rev, snap := range snapshots {
		if rev < head-size+500 {
			continue
		}
		var want []kv.KeyValue
		for _, k := range slices.Sorted(maps.Keys(snap)) {
			want = append(want, snap[k])
		}
		var got []kv.KeyValue
		opts := kv.ListOptions{Revision: rev, Limit: 7}
		for {
			page, err := s.List(t.Context(), "k/", opts)
			require.NoError(t, err)
			got = append(got, page.KVs...)
			if page.Continue == "" {
				break
			}
			opts.Continue = page.Continue
		}
		require.Equal(t, want, got, "list at %d", rev)
		checked++
	}
	require.Greater(t, checked, 2)
}

// A history whose values fit its byte budget keeps them in full, so a
// write encodes no delta: a controller's 3,000 writes of 1 KB documents,
// thousands of events old, are all still whole. Over the budget the
// oldest events age until the history fits it again.
func TestHistoryUnderItsBudgetEncodesNoDeltas(t *testing.T) {
	const keys, writes = 100, 30
	write := func(s *memstore.Store) {
		for w := range writes {
			for k := range keys {
				_, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%d", k), Value: doc(k, w)})
				require.NoError(t, err)
			}
		}
	}
	s := memstore.New()
	write(s)
	require.Zero(t, s.HistoryDeltas(), "old values kept as deltas under the default budget")

	const budget = 3 << 19 // more than the latest 1,024 events hold, which never age
	s = memstore.New(memstore.WithHistoryBytes(budget))
	write(s)
	require.NotZero(t, s.HistoryDeltas(), "old values kept as deltas over the budget")
	require.LessOrEqual(t, s.HistoryBytes(), budget)
}
