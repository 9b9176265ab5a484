package kvwatch_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/internal/kvwatch"
	"github.com/steady-go/steady/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// history is a Reader over a fixed history of revisions 1..len(keys), of
// which the watch wants the keys under prefix "a"; it reads one revision
// per call and, once it has read everything, waits on wake.
type history struct {
	keys []string
	wake chan struct{}
}

func (h *history) Read(q []store.KVEvent, cursor int64) ([]store.KVEvent, int64, <-chan struct{}, error) {
	if cursor >= int64(len(h.keys)) {
		return q, cursor, h.wake, nil
	}
	cursor++
	if k := h.keys[cursor-1]; k[0] == 'a' {
		q = append(q, store.KVEvent{Type: store.KVPut, KV: store.KV{Key: k, ModRevision: cursor}, Revision: cursor})
	}
	return q, cursor, nil, nil
}

func TestRunSendsTheMatchingEventsThenAProgressMarkThenEndsOnStop(t *testing.T) {
	h := &history{keys: []string{"a1", "b2", "a3", "b4"}, wake: make(chan struct{})}
	out, stop := make(chan store.KVEvent, 8), make(chan struct{})
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
	out, closing := make(chan store.KVEvent, 8), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		kvwatch.Watch{Out: out, Stop: make(chan struct{}), Closing: closing, Closed: func() error { return errClosed }}.Run(h, 0)
	}()
	require.Equal(t, int64(1), (<-out).Revision)
	close(closing)
	<-done
	var last store.KVEvent
	for ev := range out {
		last = ev
	}
	require.ErrorIs(t, last.Err, errClosed)
	require.Equal(t, int64(1), last.Revision, "the error event carries the last revision sent")
}
