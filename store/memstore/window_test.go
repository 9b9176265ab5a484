package memstore_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// The default watch window grows with the keys: it holds at least a tenth
// as many writes as the Store holds keys. A watcher that falls out of the
// window relists, which costs a listing of every key: at 1M keys, with the
// 10,000-write window, a controller's cache relisted again and again (each
// relist longer than the window lasted, the writer running ahead) and spent
// half its CPU listing. A window set with WithHistorySize stays as set.
func TestDefaultWindowGrowsWithTheKeys(t *testing.T) {
	const keys = 20 * memstore.BaseWindow
	behind := memstore.BaseWindow + memstore.BaseWindow/2 // past the default, within keys/10
	for _, tc := range []struct {
		name    string
		opts    []memstore.Option
		expires bool
	}{
		{"default", nil, false},
		{"default, old values as deltas", []memstore.Option{memstore.WithHistoryBytes(0)}, false},
		{"set", []memstore.Option{memstore.WithHistorySize(memstore.BaseWindow)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s := memstore.New(tc.opts...)
			for i := range keys {
				_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%07d", i), Value: []byte(`{}`)})
				require.NoError(t, err)
			}
			from := s.Revision()
			for i := range behind {
				_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%07d", i), Value: []byte(`{"a":1}`)})
				require.NoError(t, err)
			}
			ch, err := s.Watch(ctx, "k/", from)
			require.NoError(t, err)
			ev := <-ch
			if tc.expires {
				require.ErrorIs(t, ev.Err, kv.ErrExpired)
				return
			}
			require.NoError(t, ev.Err)
			require.Equal(t, from+1, ev.Revision, "the watch resumes %d writes behind", behind)
			require.Equal(t, "k/0000000", ev.KV.Key)
			require.Equal(t, `{"a":1}`, string(ev.KV.Value))
			require.Equal(t, `{}`, string(ev.Prev.Value))
			l, err := s.List(ctx, "k/", kv.ListOptions{Revision: from, Limit: 2})
			require.NoError(t, err, "and a page pinned there is served")
			require.Len(t, l.KVs, 2)
			for _, got := range l.KVs {
				require.Equal(t, `{}`, string(got.Value), "%s as it was", got.Key)
			}
		})
	}
}

// A watch that merely lags is not expired by the default window: while a
// live watch is about to fall out of it, the window doubles, up to as many
// writes as the Store holds keys (and MaxLagHistory times the window the
// keys call for), so the backlog it has yet to read stays. A controller's
// cache fell ~14,000 writes behind at 10,000 keys and ~28,000 at 100,000
// (a writer running ahead of it), past the 10,000-write window, and
// relisted two or three times in a five-second run. A watch further behind
// than the Store holds keys expires: its relist, a listing of every key
// that decodes only those changed, costs less than replaying the backlog,
// a decode a write: at 10,000 keys and ~14,000 writes behind, a
// controller kept from relisting took ~20% more CPU per event. A Store
// of BaseWindow keys, whose window at rest is DefaultHistorySize, grows it
// as far as the keys for a watch that lags. A window set with
// WithHistorySize stays as set.
func TestDefaultWindowKeepsWhatALaggingWatchHasYetToRead(t *testing.T) {
	const keys = 4 * memstore.BaseWindow
	for _, tc := range []struct {
		name    string
		opts    []memstore.Option
		keys    int
		behind  int
		expires bool
	}{
		{"default", nil, keys, 3 * memstore.BaseWindow, false},
		{"default, a window at rest of DefaultHistorySize", nil, memstore.BaseWindow, 9 * memstore.BaseWindow / 10, false},
		{"default, old values as deltas", []memstore.Option{memstore.WithHistoryBytes(0)}, keys, 3 * memstore.BaseWindow, false},
		{"default, further behind than the keys", nil, keys, keys + memstore.BaseWindow, true},
		{"default, few keys", nil, 10, 3 * memstore.BaseWindow / 2, true},
		{"default, past the most it grows to", nil, 10 * memstore.BaseWindow, (memstore.MaxLagHistory + 1) * memstore.BaseWindow, true},
		{"set", []memstore.Option{memstore.WithHistorySize(memstore.BaseWindow)}, keys, 3 * memstore.BaseWindow, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s := memstore.New(tc.opts...)
			put := func(i int) {
				_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%07d", i%tc.keys), Value: fmt.Appendf(nil, `{"i":%d}`, i)})
				require.NoError(t, err)
			}
			for i := range tc.keys {
				put(i)
			}
			from := s.Revision()
			ch, err := s.Watch(ctx, "k/", from)
			require.NoError(t, err)
			for i := range tc.behind { // the watch reads nothing meanwhile
				put(tc.keys + i)
			}
			want := from + 1
			for want <= s.Revision() {
				ev := <-ch
				if ev.Progress {
					continue
				}
				if tc.expires {
					if ev.Err != nil {
						require.ErrorIs(t, ev.Err, kv.ErrExpired)
						return
					}
				} else {
					require.NoError(t, ev.Err, "the watch lagging %d writes behind keeps its backlog", tc.behind)
				}
				require.Equal(t, want, ev.Revision)
				require.Equal(t, fmt.Sprintf(`{"i":%d}`, want-1), string(ev.KV.Value))
				want++
			}
			require.False(t, tc.expires, "the watch %d writes behind expires", tc.behind)
		})
	}
}

// The window a lagging watch grew keeps its values in full within the
// default WithHistoryBytes budget grown in proportion past BaseWindow
// writes, so that the writes
// made while a watch lags encode no deltas, nor does the watch apply any:
// with the budget as it was, ageing the grown window cost ~13% of a
// controller's CPU at 100,000 keys (each write encoding an old value as a
// delta), more than the relists it saved. A budget set with
// WithHistoryBytes stays as set.
func TestALaggingWatchsWindowKeepsItsValuesInFull(t *testing.T) {
	const keys, behind = 4 * memstore.BaseWindow, 3 * memstore.BaseWindow
	value := func(i int) []byte { return fmt.Appendf(nil, `{"i":%d,"pad":"%0500d"}`, i, 0) }
	for _, tc := range []struct {
		name   string
		opts   []memstore.Option
		deltas bool
	}{
		{"default", nil, false},
		{"budget set", []memstore.Option{memstore.WithHistoryBytes(memstore.DefaultHistoryBytes)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s := memstore.New(tc.opts...)
			put := func(i int) {
				_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%07d", i%keys), Value: value(i)})
				require.NoError(t, err)
			}
			for i := range keys {
				put(i)
			}
			from := s.Revision()
			ch, err := s.Watch(ctx, "k/", from)
			require.NoError(t, err)
			for i := range behind { // the watch reads nothing meanwhile
				put(keys + i)
			}
			if tc.deltas {
				require.LessOrEqual(t, s.HistoryBytes(), memstore.DefaultHistoryBytes)
				require.NotZero(t, s.HistoryDeltas())
			} else {
				require.Greater(t, s.HistoryBytes(), memstore.DefaultHistoryBytes, "the backlog's values, more than the default budget, are kept")
				require.Zero(t, s.HistoryDeltas(), "in full")
			}
			for want := from + 1; want <= s.Revision(); {
				ev := <-ch
				require.NoError(t, ev.Err)
				if !ev.Progress {
					require.Equal(t, string(value(int(want-1))), string(ev.KV.Value))
					want++
				}
			}
		})
	}
}

// The window the keys call for keeps its values in full within the default
// WithHistoryBytes budget grown in proportion past BaseWindow writes, as a
// lagging watch's window does: at 1M keys the window is 160,000 writes,
// and with the budget sized for BaseWindow every write once ~13,000 had
// filled it aged an old value (a delta encoding), a fifth of a
// controller's CPU per event at 1M objects and nothing at 100,000. Here
// 200,000 keys call for 20,000 writes, and as many writes of 1.5 KB
// values (30 MB, twice the default budget and within the grown one) keep
// them all in full. A budget set with WithHistoryBytes stays as set.
func TestTheKeysWindowKeepsItsValuesInFull(t *testing.T) {
	const keys, writes = 20 * memstore.BaseWindow, 2 * memstore.BaseWindow
	value := fmt.Appendf(nil, `{"pad":"%01500d"}`, 0)
	for _, tc := range []struct {
		name   string
		opts   []memstore.Option
		deltas bool
	}{
		{"default", nil, false},
		{"budget set", []memstore.Option{memstore.WithHistoryBytes(memstore.DefaultHistoryBytes)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s := memstore.New(tc.opts...)
			put := func(i int, v []byte) {
				_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%07d", i), Value: v})
				require.NoError(t, err)
			}
			for i := range keys {
				put(i, []byte(`{}`))
			}
			from := s.Revision()
			for i := range writes {
				put(i, value)
			}
			if tc.deltas {
				require.NotZero(t, s.HistoryDeltas())
				return
			}
			require.Greater(t, s.HistoryBytes(), 3*memstore.DefaultHistoryBytes/2, "the writes' values, more than the default budget, are kept")
			require.Zero(t, s.HistoryDeltas(), "in full")
			ch, err := s.Watch(ctx, "k/", from)
			require.NoError(t, err, "and a watch from before them replays them")
			for want := from + 1; want <= s.Revision(); {
				ev := <-ch
				require.NoError(t, ev.Err)
				if !ev.Progress {
					require.Equal(t, want, ev.Revision)
					require.Equal(t, string(value), string(ev.KV.Value))
					require.Equal(t, `{}`, string(ev.Prev.Value))
					want++
				}
			}
		})
	}
}

// The default window at rest is DefaultHistorySize, but the budget of its
// values is sized for BaseWindow writes, and a lagging watch's window
// grown no further than that keeps it: as when the default window started
// at BaseWindow, a backlog of old values over the budget keeps the
// oldest as deltas, where the budget grown in proportion from the smaller
// window (four times over) would keep them all in full.
func TestALaggingWatchsWindowWithinTheBaseWindowKeepsTheBudget(t *testing.T) {
	const keys, written, behind = memstore.BaseWindow, 1000, 3 * memstore.BaseWindow / 4
	pad := 2 * memstore.DefaultHistoryBytes / (behind - written) // the backlog's old values are twice the budget
	value := func(i int) []byte { return fmt.Appendf(nil, `{"i":%d,"pad":"%0*d"}`, i, pad, 0) }
	ctx := t.Context()
	s := memstore.New()
	for i := range keys {
		_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%07d", i), Value: []byte(`{}`)})
		require.NoError(t, err)
	}
	from := s.Revision()
	ch, err := s.Watch(ctx, "k/", from)
	require.NoError(t, err)
	for i := range behind { // the watch reads nothing meanwhile
		_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%07d", i%written), Value: value(i)})
		require.NoError(t, err)
	}
	require.NotZero(t, s.HistoryDeltas(), "old values kept as deltas")
	// The latest 1,024 events never age, and they hold every current value.
	require.LessOrEqual(t, s.HistoryBytes(), memstore.DefaultHistoryBytes+2*1024*len(value(0)), "the default budget")
	for want := from + 1; want <= s.Revision(); {
		ev := <-ch
		require.NoError(t, ev.Err, "the watch lagging %d writes behind keeps its backlog", behind)
		if !ev.Progress {
			require.Equal(t, string(value(int(want-from-1))), string(ev.KV.Value))
			want++
		}
	}
}

// At rest, with a watch that keeps up, a default Store of 10,000 keys holds
// the old values of DefaultHistorySize writes at most, not one per key:
// the 10,000-write window it held before was a sixth of a 10,000-object
// controller's heap (5 of 28 MiB), where client-go's informer keeps no old
// state at all.
func TestDefaultWindowAtRestHoldsFewOldValues(t *testing.T) {
	const keys = 10_000
	value := func(i int) []byte { return fmt.Appendf(nil, `{"i":%d,"pad":"%0500d"}`, i, 0) }
	ctx := t.Context()
	s := memstore.New()
	ch, err := s.Watch(ctx, "k/", 0)
	require.NoError(t, err)
	for i := range 3 * keys {
		_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%07d", i%keys), Value: value(i)})
		require.NoError(t, err)
		ev := <-ch // the watch keeps up
		require.NoError(t, ev.Err)
		require.Equal(t, int64(i+1), ev.Revision)
	}
	// Each event holds its value and, for the oldest of its key, the one
	// before: at most two values an event.
	require.LessOrEqual(t, s.HistoryBytes(), 2*2048*len(value(3*keys)), "bytes of values the history holds")
}

// A watch that reads slower than the writes arrive, as a controller's
// cache does while another writer runs ahead of it (ctl-steady at 10,000
// objects, one core: the cache fell 10,041 to 12,724 writes behind and
// relisted once or twice a run), keeps its backlog while it lags less
// than the Store holds keys: the window at rest, DefaultHistorySize,
// grows in time as the lag rises a write at a time, and the watch's reads
// (which ask the Store to settle) do not shrink it under the lag. Once it
// lags further than the keys, it expires, as the default window is meant
// to (see TestDefaultWindowKeepsWhatALaggingWatchHasYetToRead): the
// cache's relist lists the keys and decodes only those changed. The watch
// may read up to two batches (2*DefaultWatchBuffer) ahead of what the test
// received, hence the margin.
func TestAWatchReadingSlowerThanTheWritesExpiresOnlyPastTheKeys(t *testing.T) {
	const keys = memstore.BaseWindow
	const margin = 4 * memstore.DefaultWatchBuffer
	ctx := t.Context()
	s := memstore.New()
	put := func(i int) {
		_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%07d", i%keys), Value: fmt.Appendf(nil, `{"i":%d}`, i)})
		require.NoError(t, err)
	}
	for i := range keys {
		put(i)
	}
	from := s.Revision()
	ch, err := s.Watch(ctx, "k/", from)
	require.NoError(t, err)
	want := from + 1
	for i := 0; ; i++ {
		put(keys + i)
		if i%2 == 1 {
			continue // the watch reads one event for two writes
		}
		ev := <-ch
		for ev.Progress {
			ev = <-ch
		}
		lag := s.Revision() - want
		if ev.Err != nil {
			require.ErrorIs(t, ev.Err, kv.ErrExpired)
			require.Greater(t, lag, int64(keys-margin), "the watch expired %d writes behind, with %d keys", lag, keys)
			return
		}
		require.Equal(t, want, ev.Revision)
		require.Equal(t, fmt.Sprintf(`{"i":%d}`, want-1), string(ev.KV.Value))
		want++
		require.Less(t, lag, int64(keys+margin), "the watch %d writes behind, more than the %d keys, expires", lag, keys)
	}
}
