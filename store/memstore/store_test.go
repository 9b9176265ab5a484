package memstore_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
	"github.com/steady-go/steady/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) kv.Backend { return memstore.New() })
}

// The suite must also hold with the smallest watch buffer and a history
// just long enough for its longest backlog (200 writes).
func TestConformanceSmallBuffers(t *testing.T) {
	storetest.Run(t, func(t *testing.T) kv.Backend {
		return memstore.New(memstore.WithHistorySize(256), memstore.WithWatchBuffer(1))
	})
}

// And with every old value kept as a delta (see TestOldValuesReadBackExactly).
func TestConformanceOldValuesAsDeltas(t *testing.T) {
	storetest.Run(t, func(t *testing.T) kv.Backend {
		return memstore.New(memstore.WithHistorySize(256), memstore.WithAgingLag(1), memstore.WithHistoryBytes(0))
	})
}

func put(t *testing.T, s *memstore.Store, key, value string) int64 {
	t.Helper()
	rev, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(value)})
	require.NoError(t, err)
	return rev
}

func TestRevisionStartsAtOne(t *testing.T) {
	s := memstore.New()
	require.Zero(t, s.Revision())
	require.EqualValues(t, 1, put(t, s, "a", "v"))
	require.EqualValues(t, 2, put(t, s, "b", "v"))
	require.EqualValues(t, 2, s.Revision())
}

func TestHistorySize(t *testing.T) {
	const size = 8
	s := memstore.New(memstore.WithHistorySize(size))
	for i := range 20 {
		put(t, s, fmt.Sprintf("k/%d", i%3), fmt.Sprint(i))
	}
	head := s.Revision()
	for _, tc := range []struct {
		rev     int64
		expired bool
	}{
		{head, false},
		{head - size, false}, // every later event is in the ring
		{head - size - 1, true},
		{1, true},
	} {
		_, err := s.List(t.Context(), "k/", kv.ListOptions{Revision: tc.rev})
		ch, werr := s.Watch(t.Context(), "k/", tc.rev)
		require.NoError(t, werr)
		if tc.expired {
			require.ErrorIs(t, err, store.ErrExpired, "List at %d", tc.rev)
			ev := <-ch
			require.ErrorIs(t, ev.Err, store.ErrExpired, "Watch from %d", tc.rev)
			_, open := <-ch
			require.False(t, open, "the error event is the last")
			continue
		}
		require.NoError(t, err, "List at %d", tc.rev)
		if tc.rev < head {
			require.Equal(t, tc.rev+1, (<-ch).Revision, "Watch from %d resumes at the next event", tc.rev)
		}
	}
}

func TestCompact(t *testing.T) {
	s := memstore.New()
	for i := range 5 {
		put(t, s, "k", fmt.Sprint(i))
	}
	require.ErrorIs(t, s.Compact(t.Context(), 6), store.ErrInvalid, "compacting the future")
	require.NoError(t, s.Compact(t.Context(), 3))
	require.NoError(t, s.Compact(t.Context(), 2), "compacting less is a no-op")

	_, err := s.List(t.Context(), "", kv.ListOptions{Revision: 2})
	require.ErrorIs(t, err, store.ErrExpired)
	res, err := s.List(t.Context(), "", kv.ListOptions{Revision: 3})
	require.NoError(t, err)
	require.Equal(t, "2", string(res.KVs[0].Value), "the state at the compaction revision")

	ch, err := s.Watch(t.Context(), "", 2)
	require.NoError(t, err)
	require.EqualValues(t, 3, (<-ch).Revision, "a watch from rev-1 still sees event rev, as on etcd")
}

func TestCompactExpiresRunningWatch(t *testing.T) {
	// With WithWatchBuffer(1) the watch holds at most two events (one in the
	// channel, one waiting), so while the receiver is away it cannot read
	// past revision 2. Compacting to 5 removes event 3, which it still
	// needs: it must deliver what it holds and then fail, never skip.
	s := memstore.New(memstore.WithWatchBuffer(1))
	ch, err := s.Watch(t.Context(), "k", 0)
	require.NoError(t, err)
	for i := range 5 {
		put(t, s, "k", fmt.Sprint(i))
	}
	require.NoError(t, s.Compact(t.Context(), 5))
	var revs []int64
	for ev := range ch {
		if ev.Err != nil {
			require.ErrorIs(t, ev.Err, store.ErrExpired)
			break
		}
		revs = append(revs, ev.Revision)
	}
	require.LessOrEqual(t, len(revs), 2)
	for i, r := range revs {
		require.EqualValues(t, i+1, r, "no gap before the error")
	}
}

func TestStats(t *testing.T) {
	s := memstore.New()
	ctx := t.Context()
	before := s.Stats()
	put(t, s, "a", "v")
	_, _ = s.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: "missing"})
	_, _ = s.Get(ctx, "a")
	_, _ = s.Get(ctx, "missing")
	_, _ = s.List(ctx, "", kv.ListOptions{})
	_, err := s.Watch(ctx, "", 0)
	require.NoError(t, err)
	require.Equal(t, memstore.Stats{Gets: 2, Lists: 1, Txns: 2, Watches: 1}, s.Stats().Sub(before),
		"every call counts once, failed or not")

	mark := s.Stats()
	require.Equal(t, memstore.Stats{}, s.Stats().Sub(mark), "no calls, no counts")
}

// A Txn keeps a value its caller hands over (Owned) itself, and copies
// any other: the caller may reuse that one's buffer.
func TestTxnKeepsAnOwnedValueAndCopiesAnyOther(t *testing.T) {
	ctx := t.Context()
	s := memstore.New()
	owned, lent := []byte(`{"a":1}`), []byte(`{"b":2}`)
	_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "owned", Value: owned, Owned: true})
	require.NoError(t, err)
	_, err = s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "lent", Value: lent})
	require.NoError(t, err)
	got, err := s.Get(ctx, "owned")
	require.NoError(t, err)
	require.Same(t, &owned[0], &got.Value[0], "an owned value is kept, not copied")
	lent[0] = 'x'
	got, err = s.Get(ctx, "lent")
	require.NoError(t, err)
	require.Equal(t, `{"b":2}`, string(got.Value), "a lent value is copied")
}
