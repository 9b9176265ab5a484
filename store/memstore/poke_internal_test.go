package memstore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/kvwatch"
	"github.com/steady-go/steady/store/kv"
)

// A followed watch can be poked (kvwatch.Poker): the channel a caught-up
// Cursor waits on receives without a change, the Cursor then reads
// nothing new and returns the same channel, and a write after the poke is
// still delivered. A poke while events wait to be delivered costs no
// event either.
func TestPokedWatchWakesItsCursorWithoutAChange(t *testing.T) {
	ctx := context.Background()
	s := New()
	put := func(key string) int64 {
		r, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(`{}`)})
		require.NoError(t, err)
		return r
	}
	put("k/a")
	r, end, err := follower{s}.Follow("k/", s.hist.last)
	require.NoError(t, err)
	defer end()
	c := kvwatch.NewCursor(r, s.hist.last)
	poke := c.Poker()
	require.NotNil(t, poke, "memstore's watch can be poked")

	_, wake, ok := c.Next()
	require.False(t, ok)
	require.NotNil(t, wake)
	require.Len(t, wake, 0, "nothing changed")
	poke()
	poke() // a poke pending will do
	require.Len(t, wake, 1, "a poke fills the channel the Cursor waits on")
	<-wake
	_, again, ok := c.Next()
	require.False(t, ok, "a poke is no change")
	require.Equal(t, wake, again, "the same channel, for the watch's life")

	rev := put("k/b")
	require.Len(t, wake, 1, "a write fills it too")
	poke()
	<-wake
	ev, _, ok := c.Next()
	require.True(t, ok)
	require.Equal(t, rev, ev.Revision)
	require.Equal(t, "k/b", ev.KV.Key)
	_, _, ok = c.Next()
	require.False(t, ok, "the poke taken with the event's read brings none")

	rev = put("k/c")
	poke() // while the event waits to be read: its read takes the poke
	ev, _, ok = c.Next()
	require.True(t, ok)
	require.Equal(t, rev, ev.Revision)
	_, wake, ok = c.Next()
	require.False(t, ok)
	require.Len(t, wake, 0)
}

// A Cursor over a Reader that cannot be poked has no Poker: its caller
// waits on its other channels beside the Reader's.
func TestCursorOverAPlainReaderHasNoPoker(t *testing.T) {
	require.Nil(t, kvwatch.NewCursor(plainReader{}, 0).Poker())
}

type plainReader struct{}

func (plainReader) Read(q []kv.Event, cursor int64) ([]kv.Event, int64, <-chan struct{}, error) {
	return q, cursor, make(chan struct{}), nil
}
