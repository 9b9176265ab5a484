package memstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/kvwatch"
	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// A Store offers the project's packages its watch to be read on their own
// goroutine (kvwatch.Direct): the reader reads the changes under its
// prefix in order, at most WithWatchBuffer a Read; the Read that reaches
// the store's revision, with events or without, also gives it a channel
// that receives after the next write; stop
// takes it off the waiting list; and a reader that falls the history
// behind gets ErrExpired. It counts as a Watch call.
func TestDirectWatchIsReadByItsReceiver(t *testing.T) {
	s := memstore.New(memstore.WithHistorySize(4), memstore.WithWatchBuffer(2))
	d, ok := storeaccess.Of(s).(kvwatch.Direct)
	require.True(t, ok, "a Store offers a direct watch")
	require.Same(t, s, d.Backend())
	put(t, s, "a/1", "x") // 1, before the watch's revision
	r, stop := d.WatchDirect("a/", 1)
	require.Equal(t, int64(1), s.Stats().Watches)

	read := func(cursor int64) ([]int64, int64, <-chan struct{}) {
		t.Helper()
		q, cursor, wake, err := r.Read(nil, cursor)
		require.NoError(t, err)
		var revs []int64
		for _, ev := range q {
			require.Equal(t, kv.EventPut, ev.Type)
			revs = append(revs, ev.Revision)
		}
		return revs, cursor, wake
	}
	revs, cursor, wake := read(1)
	require.Empty(t, revs)
	require.NotNil(t, wake, "caught up: it waits")
	require.Equal(t, 1, s.Waiting())
	put(t, s, "a/2", "x") // 2
	put(t, s, "b/1", "x") // 3, another prefix
	put(t, s, "a/3", "x") // 4
	put(t, s, "a/4", "x") // 5
	<-wake
	revs, cursor, wake = read(cursor)
	require.Equal(t, []int64{2, 4}, revs, "a batch of WithWatchBuffer")
	require.Nil(t, wake, "more to read")
	revs, cursor, wake = read(cursor)
	require.Equal(t, []int64{5}, revs)
	require.Equal(t, int64(5), cursor)
	require.NotNil(t, wake, "the batch that reaches the store's revision comes with the wait")
	require.Equal(t, 1, s.Waiting())
	put(t, s, "b/2", "x") // 6, another prefix
	<-wake
	revs, cursor, wake = read(cursor)
	require.Empty(t, revs)
	require.Equal(t, int64(6), cursor)
	require.NotNil(t, wake)
	stop()
	require.Zero(t, s.Waiting(), "stop takes the watch off the waiting list")

	r, stop = d.WatchDirect("a/", 6)
	defer stop()
	for i := range 5 {
		put(t, s, "a/1", string(rune('a'+i))) // 7..11: 7 leaves the ring of 4
	}
	_, _, _, err := r.Read(nil, 6)
	require.ErrorIs(t, err, store.ErrExpired, "a reader the history left behind")
}
