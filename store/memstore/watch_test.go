package memstore_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// A receiver that never reads must not hold writers up: every write returns
// while its watch is stuck, and once the history has moved past what the
// watch had read, it ends with ErrExpired after only valid events.
func TestSlowWatcherExpiresWithoutBlockingWriters(t *testing.T) {
	const history, buffer = 64, 4
	s := memstore.New(memstore.WithHistorySize(history), memstore.WithWatchBuffer(buffer))
	ch, err := s.Watch(t.Context(), "k/", 0)
	require.NoError(t, err)

	// 100 times the history: if writers waited for the stuck receiver,
	// this loop would deadlock and the test would hang instead of pass.
	const writes = 100 * history
	for i := range writes {
		put(t, s, fmt.Sprintf("k/%d", i%4), "v")
	}
	require.EqualValues(t, writes, s.Revision())

	var got []kv.Event
	for ev := range ch {
		got = append(got, ev)
	}
	require.NotEmpty(t, got)
	last := got[len(got)-1]
	require.ErrorIs(t, last.Err, store.ErrExpired, "the slow watch ends with ErrExpired")
	require.LessOrEqual(t, len(got)-1, 2*buffer, "it held at most 2×WithWatchBuffer events of its own")
	for i, ev := range got[:len(got)-1] {
		require.NoError(t, ev.Err)
		require.EqualValues(t, i+1, ev.Revision, "the events before the error are the first ones, without gaps")
	}
}

// A receiver that is slow but stays within the history loses nothing: the
// ring is its backlog, whatever the watch buffer.
func TestSlowWatcherWithinHistoryCatchesUp(t *testing.T) {
	s := memstore.New(memstore.WithHistorySize(1000), memstore.WithWatchBuffer(4))
	ch, err := s.Watch(t.Context(), "k/", 0)
	require.NoError(t, err)
	for i := range 500 {
		put(t, s, fmt.Sprintf("k/%d", i%4), "v")
	}
	for i := range 500 {
		ev := <-ch
		require.NoError(t, ev.Err)
		require.EqualValues(t, i+1, ev.Revision)
	}
}

// WithWatchBuffer bounds what a stuck watch holds: however long the backlog, it
// delivers at most 2×WithWatchBuffer events (a channel and a batch) before it
// reports the history gone.
func TestWatchBufferBoundsAStuckWatch(t *testing.T) {
	for _, buffer := range []int{1, 4, 16} {
		t.Run(fmt.Sprint(buffer), func(t *testing.T) {
			s := memstore.New(memstore.WithHistorySize(32), memstore.WithWatchBuffer(buffer))
			ch, err := s.Watch(t.Context(), "", 0)
			require.NoError(t, err)
			for i := range 200 {
				put(t, s, "k", fmt.Sprint(i))
			}
			n := 0
			for ev := range ch {
				if ev.Err != nil {
					require.ErrorIs(t, ev.Err, store.ErrExpired)
					break
				}
				n++
			}
			require.LessOrEqual(t, n, 2*buffer)
		})
	}
}

// A receiver that keeps up never expires, however small its buffer and
// history.
func TestPromptReceiverNeverExpires(t *testing.T) {
	s := memstore.New(memstore.WithWatchBuffer(1), memstore.WithHistorySize(1))
	ch, err := s.Watch(t.Context(), "k", 0)
	require.NoError(t, err)
	for i := range 100 {
		rev := put(t, s, "k", fmt.Sprint(i))
		ev := <-ch
		require.NoError(t, ev.Err)
		require.Equal(t, rev, ev.Revision)
	}
}

func TestWatchBufferIsTheChannelCapacity(t *testing.T) {
	for _, tc := range []struct {
		opts []memstore.Option
		want int
	}{
		{nil, memstore.DefaultWatchBuffer},
		{[]memstore.Option{memstore.WithWatchBuffer(5)}, 5},
		{[]memstore.Option{memstore.WithWatchBuffer(0)}, 1},
		{[]memstore.Option{memstore.WithWatchBuffer(-3)}, 1},
	} {
		ch, err := memstore.New(tc.opts...).Watch(t.Context(), "", 0)
		require.NoError(t, err)
		require.Equal(t, tc.want, cap(ch))
	}
}

func TestProgressIsCoalesced(t *testing.T) {
	const buffer = 2
	s := memstore.New(memstore.WithWatchBuffer(buffer))
	ch, err := s.Watch(t.Context(), "w/", 0)
	require.NoError(t, err)
	for i := range 50 {
		put(t, s, fmt.Sprintf("x/%d", i), "v")
	}
	// The receiver was away for 50 writes outside its prefix: it finds a
	// full channel of marks and one more, not 50, and they never go
	// backwards.
	var marks []int64
	for ev := range ch {
		require.True(t, ev.Progress)
		marks = append(marks, ev.Revision)
		if ev.Revision == 50 {
			break
		}
	}
	require.LessOrEqual(t, len(marks), buffer+2, "progress marks are coalesced: %v", marks)
	require.IsIncreasing(t, marks)
}

// kv.Backend: a watch from 0 "replays every change from revision 1 on, or
// ends with ErrExpired when that history is gone" (it is not "from now"):
// once revision 1 has rolled out of the window, the watch's one event is
// ErrExpired, never a later change.
func TestWatchFromZeroAfterTheWindowRolledIsExpired(t *testing.T) {
	s := memstore.New(memstore.WithHistorySize(2))
	for i := range 5 {
		put(t, s, fmt.Sprintf("k/%d", i), "old")
	}
	ch, err := s.Watch(t.Context(), "k/", 0)
	require.NoError(t, err)
	put(t, s, "k/new", "v")
	ev, ok := <-ch
	require.True(t, ok, "the watch ends with an event")
	require.ErrorIs(t, ev.Err, store.ErrExpired, "a watch from 0 whose revision 1 is gone: got %+v", ev)
	_, ok = <-ch
	require.False(t, ok, "the channel closes after the error event")
}
