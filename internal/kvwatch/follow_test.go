package kvwatch_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/kvwatch"
	"github.com/steady-go/steady/store/kv"
)

// A Cursor delivers what Run sends: the matching events in order, a
// Progress mark at the revision read up to once they are all delivered,
// then the wake channel to wait on; after a change, the next event.
func TestCursorDeliversTheEventsThenAProgressMarkThenWaits(t *testing.T) {
	h := &history{keys: []string{"a1", "b2", "a3", "b4"}, wake: make(chan struct{})}
	c := kvwatch.NewCursor(h, 0)
	var got []int64
	var progress []bool
	for i := 0; ; i++ {
		require.Less(t, i, 10, "the Cursor never waits")
		ev, wake, ok := c.Next()
		if !ok {
			if wake != nil {
				require.True(t, c.Drained())
				break
			}
			continue // another batch is due
		}
		require.NoError(t, ev.Err)
		got = append(got, ev.Revision)
		progress = append(progress, ev.Progress)
	}
	require.Equal(t, []int64{1, 3, 4}, got, "events 1 and 3, then a mark at 4 for the skipped b4")
	require.Equal(t, []bool{false, false, true}, progress)

	h.add("a5")
	ev, _, ok := c.Next()
	require.True(t, ok)
	require.Equal(t, int64(5), ev.Revision)
	require.False(t, ev.Progress)
	_, wake, ok := c.Next()
	require.False(t, ok, "caught up, and no mark: nothing was skipped")
	require.NotNil(t, wake)
}

// A failed read is delivered once, as an event carrying the error and the
// last revision delivered; the Cursor then delivers nothing.
func TestCursorDeliversAFailedReadOnceWithTheLastRevision(t *testing.T) {
	errGone := errors.New("gone")
	r := &failAfter{history: history{keys: []string{"a1"}, wake: make(chan struct{})}, err: errGone}
	c := kvwatch.NewCursor(r, 0)
	ev, _, ok := c.Next()
	require.True(t, ok)
	require.Equal(t, int64(1), ev.Revision)
	ev, _, ok = c.Next()
	require.True(t, ok)
	require.ErrorIs(t, ev.Err, errGone)
	require.Equal(t, int64(1), ev.Revision, "the error event carries the last revision delivered")
	for range 3 {
		_, wake, ok := c.Next()
		require.False(t, ok)
		require.Nil(t, wake)
	}
}

// failAfter reads its history, then fails.
type failAfter struct {
	history
	err error
}

func (f *failAfter) Read(q []kv.Event, cursor int64) ([]kv.Event, int64, <-chan struct{}, error) {
	if cursor >= int64(len(f.keys)) {
		return q, cursor, nil, f.err
	}
	return f.history.Read(q, cursor)
}
