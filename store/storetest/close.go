package storetest

import (
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
)

// closeTests check what kv.Backend promises of a backend that can be
// closed: Close ends every watch with a final event wrapping kv.ErrClosed,
// the calls after it fail with an error wrapping kv.ErrClosed, and Close is
// idempotent and safe to call concurrently. A backend that is not an
// io.Closer skips them.
var closeTests = []test{
	{"EndsWatchesWithErrClosed", func(t *testing.T, b kv.Backend) {
		c := closer(t, b)
		from := currentRevision(t, b)
		ch := watch(t, b, "c/", from)
		idle := watch(t, b, "idle/", from) // waiting for a change when Close comes
		rev := put(t, b, "c/1", "v")
		require.Equal(t, rev, nextChange(t, ch).Revision)
		closed := make(chan error, 1)
		go func() { closed <- c.Close() }() // the watches' receivers are here meanwhile
		for _, w := range []struct {
			name string
			ch   <-chan kv.Event
		}{{"a watch that delivered an event", ch}, {"an idle watch", idle}} {
			last := drain(t, w.ch)
			require.ErrorIs(t, last.Err, kv.ErrClosed, "%s ends with an event wrapping kv.ErrClosed", w.name)
		}
		select {
		case err := <-closed:
			require.NoError(t, err, "Close")
		case <-time.After(WaitTimeout):
			require.FailNow(t, "Close did not return", "waited %v", WaitTimeout)
		}
	}},
	{"CallsAfterCloseFail", func(t *testing.T, b kv.Backend) {
		c := closer(t, b)
		put(t, b, "k", "v")
		first := c.Close()
		require.NoError(t, first, "Close")
		require.Equal(t, first, c.Close(), "a second Close returns what the first did")
		ctx := t.Context()
		_, err := b.Get(ctx, "k")
		require.ErrorIs(t, err, kv.ErrClosed, "Get after Close")
		_, err = b.List(ctx, "", kv.ListOptions{})
		require.ErrorIs(t, err, kv.ErrClosed, "List after Close")
		_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("w")})
		require.ErrorIs(t, err, kv.ErrClosed, "Txn after Close")
		ch, err := b.Watch(ctx, "", 1)
		require.ErrorIs(t, err, kv.ErrClosed, "Watch after Close")
		require.Nil(t, ch, "Watch after Close")
		if cp, ok := b.(Compactor); ok {
			require.ErrorIs(t, cp.Compact(ctx, 1), kv.ErrClosed, "Compact after Close")
		}
	}},
	{"ConcurrentClose", func(t *testing.T, b kv.Backend) {
		c := closer(t, b)
		ch := watch(t, b, "c/", currentRevision(t, b))
		const n = 4
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = c.Close() })
		}
		last := drain(t, ch)
		require.ErrorIs(t, last.Err, kv.ErrClosed)
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(WaitTimeout):
			require.FailNow(t, "concurrent Closes did not return", "waited %v", WaitTimeout)
		}
		for i, err := range errs {
			require.NoError(t, err, "Close %d", i)
		}
		_, err := b.Get(t.Context(), "k")
		require.True(t, errors.Is(err, kv.ErrClosed), "Get after Close: %v", err)
	}},
}

// closer returns b as an io.Closer, skipping the test when it is not one.
func closer(t *testing.T, b kv.Backend) io.Closer {
	t.Helper()
	c, ok := b.(io.Closer)
	if !ok {
		t.Skipf("%T is not an io.Closer", b)
	}
	return c
}
