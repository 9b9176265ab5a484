package kvwatch_test

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/kvwatch"
	"github.com/steady-go/steady/store/kv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// history is a Reader over a fixed history of revisions 1..len(keys), of
// which the watch wants the keys under prefix "a"; it reads one revision
// per call and, once it has read everything, waits on wake.
type history struct {
	mu   sync.Mutex
	keys []string
	wake chan struct{}
}

func (h *history) add(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.keys = append(h.keys, key)
}

func (h *history) Read(q []kv.Event, cursor int64) ([]kv.Event, int64, <-chan struct{}, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cursor >= int64(len(h.keys)) {
		return q, cursor, h.wake, nil
	}
	cursor++
	if k := h.keys[cursor-1]; k[0] == 'a' {
		q = append(q, kv.Event{Type: kv.EventPut, KV: kv.KeyValue{Key: k, ModRevision: cursor}, Revision: cursor})
	}
	return q, cursor, nil, nil
}

func TestRunSendsTheMatchingEventsThenAProgressMarkThenEndsOnStop(t *testing.T) {
	h := &history{keys: []string{"a1", "b2", "a3", "b4"}, wake: make(chan struct{})}
	out, stop := make(chan kv.Event, 8), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		kvwatch.Watch{Out: out, Stop: stop}.Run(h, 0)
	}()
	var got []int64
	for range 3 {
		ev := <-out
		require.NoError(t, ev.Err)
		got = append(got, ev.Revision)
		if ev.Progress {
			break
		}
	}
	require.Equal(t, []int64{1, 3, 4}, got, "events 1 and 3, then a mark at 4 for the skipped b4")
	close(stop)
	<-done
	_, open := <-out
	require.False(t, open, "Run closes Out when the watch's ctx ends")
}

func TestRunEndsWithTheClosedErrorWhenTheBackendCloses(t *testing.T) {
	errClosed := errors.New("closed")
	h := &history{keys: []string{"a1"}, wake: make(chan struct{})}
	out, closing := make(chan kv.Event, 8), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		kvwatch.Watch{Out: out, Stop: make(chan struct{}), Closing: closing, Closed: func() error { return errClosed }}.Run(h, 0)
	}()
	require.Equal(t, int64(1), (<-out).Revision)
	close(closing)
	<-done
	var last kv.Event
	for ev := range out {
		last = ev
	}
	require.ErrorIs(t, last.Err, errClosed)
	require.Equal(t, int64(1), last.Revision, "the error event carries the last revision sent")
}

// A backend whose change notices can be lost (pgstore's NOTIFY) sets Poll:
// a watch that waits for a change reads again after Poll without one.
func TestRunReadsAgainAfterPollWithoutAWake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &history{keys: []string{"a1"}, wake: make(chan struct{})} // never woken
		out, stop := make(chan kv.Event, 8), make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			kvwatch.Watch{Out: out, Stop: stop, Poll: time.Second, Clock: clock.Real{}}.Run(h, 0)
		}()
		require.Equal(t, int64(1), (<-out).Revision)
		synctest.Wait()
		h.add("a2") // a write whose notice is lost
		time.Sleep(time.Second)
		synctest.Wait()
		require.Len(t, out, 1, "the poll read the write")
		require.Equal(t, int64(2), (<-out).Revision)
		close(stop)
		<-done
	})
}

// failing is a Reader whose read fails because the watch's ctx ended
// meanwhile (a query cancelled by it).
type failing struct{ stop chan struct{} }

func (f failing) Read(q []kv.Event, cursor int64) ([]kv.Event, int64, <-chan struct{}, error) {
	close(f.stop)
	return q, cursor, nil, errors.New("context canceled")
}

// A watch ended by its ctx closes without an error event, also when its
// last read failed because of that end.
func TestRunSendsNoErrorEventAfterStop(t *testing.T) {
	for range 50 {
		f := failing{stop: make(chan struct{})}
		out := make(chan kv.Event, 8)
		kvwatch.Watch{Out: out, Stop: f.stop}.Run(f, 0)
		for ev := range out {
			require.NoError(t, ev.Err, "an event after the watch's ctx ended")
		}
	}
}

// Run, given a Reader that returns its wake with the events it read up to
// the end, sends them and a Progress mark for the skipped revision, then
// waits on that wake without reading again to find nothing; a change
// wakes it to read and send it, and a change that came while it sent is
// read at once.
func TestRunWaitsOnTheWakeReadWithTheEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEager("a1", "b2", "a3", "b4")
		out, stop := make(chan kv.Event), make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			kvwatch.Watch{Out: out, Stop: stop}.Run(e, 0)
		}()
		var got []int64
		for range 3 {
			got = append(got, (<-out).Revision)
		}
		require.Equal(t, []int64{1, 3, 4}, got)
		synctest.Wait()
		require.Equal(t, 1, e.readCount(), "the events' read told of the wake: no read to find nothing")

		e.add("a5")
		require.Equal(t, int64(5), (<-out).Revision)
		e.add("a6") // while Run has nothing more to send
		require.Equal(t, int64(6), (<-out).Revision)
		synctest.Wait()
		require.Equal(t, 3, e.readCount())
		e.add("b7")
		ev := <-out
		require.True(t, ev.Progress)
		require.Equal(t, int64(7), ev.Revision)
		e.add("a8")
		require.Equal(t, int64(8), (<-out).Revision)
		close(stop)
		<-done
	})
}
