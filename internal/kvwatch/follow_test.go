package kvwatch_test

import (
	"errors"
	"sync"
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

// eager is a Reader that, as memstore's, reads every revision left in one
// batch and returns its wake with the events when it has read up to the
// end; a change then sends on the wake once. It counts its reads.
type eager struct {
	mu      sync.Mutex
	keys    []string
	wake    chan struct{}
	waiting bool
	reads   int
}

func newEager(keys ...string) *eager { return &eager{keys: keys, wake: make(chan struct{}, 1)} }

func (e *eager) add(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.keys = append(e.keys, key)
	if e.waiting {
		e.waiting = false
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
}

func (e *eager) readCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.reads
}

func (e *eager) Read(q []kv.Event, cursor int64) ([]kv.Event, int64, <-chan struct{}, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reads++
	for ; cursor < int64(len(e.keys)); cursor++ {
		if k := e.keys[cursor]; k[0] == 'a' {
			q = append(q, kv.Event{Type: kv.EventPut, KV: kv.KeyValue{Key: k, ModRevision: cursor + 1}, Revision: cursor + 1})
		}
	}
	e.waiting = true
	return q, cursor, e.wake, nil
}

// A Reader that returns its wake with the events it read up to the end
// spares the Cursor a read that finds nothing new: once they (and a
// Progress mark for a skipped revision) are delivered, Next returns that
// wake without reading, and reads again once it has received. A change
// that came while the events were delivered is read at once.
func TestCursorWaitsOnTheWakeReadWithTheEvents(t *testing.T) {
	e := newEager("a1", "b2", "a3", "b4")
	c := kvwatch.NewCursor(e, 0)
	var got []int64
	for range 3 {
		ev, _, ok := c.Next()
		require.True(t, ok)
		got = append(got, ev.Revision)
	}
	require.Equal(t, []int64{1, 3, 4}, got, "events 1 and 3, then a mark at 4 for the skipped b4")
	_, wake, ok := c.Next()
	require.False(t, ok)
	require.NotNil(t, wake)
	require.Equal(t, 1, e.readCount(), "the events' read told of the wake: no read to find nothing")

	e.add("a5")
	<-wake
	ev, _, ok := c.Next()
	require.True(t, ok, "the wake received: Next reads")
	require.Equal(t, int64(5), ev.Revision)
	require.Equal(t, 2, e.readCount())

	// A change while the batch is delivered: the wake has received by the
	// time it is drained, so Next reads on rather than hand it out.
	e.add("a6")
	ev, _, ok = c.Next()
	require.True(t, ok, "the change that came after the last read is read")
	require.Equal(t, int64(6), ev.Revision)
	_, wake, ok = c.Next()
	require.False(t, ok)
	require.NotNil(t, wake)
	require.Equal(t, 3, e.readCount())

	// A caller that is woken, then calls Next again before any change
	// reaches the store, gets a wake from a fresh read, never the one it
	// took the value of.
	e.add("b7")
	<-wake
	ev, wake, ok = c.Next()
	require.True(t, ok)
	require.True(t, ev.Progress, "a mark at 7")
	require.Equal(t, int64(7), ev.Revision)
	_, wake, ok = c.Next()
	require.False(t, ok)
	require.Equal(t, 4, e.readCount())
	e.add("a8")
	select {
	case <-wake:
	default:
		require.Fail(t, "the wake handed out after the mark is not told of the change")
	}
	ev, _, ok = c.Next()
	require.True(t, ok)
	require.Equal(t, int64(8), ev.Revision)
}

// The event Next returns is the Cursor's until the next call, which
// releases its values (the key and value a Reader read): a watch keeps no
// value delivered once its receiver has moved on. A Progress mark, from
// no read, is as valid until then.
func TestCursorReleasesAnEventAtTheNextCall(t *testing.T) {
	e := newEager("a1", "a2", "b3")
	c := kvwatch.NewCursor(e, 0)
	first, _, ok := c.Next()
	require.True(t, ok)
	require.Equal(t, "a1", first.KV.Key)
	require.Equal(t, int64(1), first.Revision)
	second, _, ok := c.Next()
	require.True(t, ok)
	require.Equal(t, kv.Event{}, *first, "the first event's values are released")
	require.Equal(t, "a2", second.KV.Key)
	mark, _, ok := c.Next()
	require.True(t, ok)
	require.Equal(t, kv.Event{}, *second)
	require.Equal(t, kv.Event{Progress: true, Revision: 3}, *mark)
	_, wake, ok := c.Next()
	require.False(t, ok)
	require.NotNil(t, wake)
}
