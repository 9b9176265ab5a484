package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/goroutines"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/pgstore"
)

// closeTimeout bounds each wait of these tests, so that a Close or a watch
// that hangs fails the test instead of the test binary.
const closeTimeout = 10 * time.Second

// within runs fn and fails the test if it has not returned within
// closeTimeout.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(closeTimeout):
		t.Fatalf("%s did not return within %v", what, closeTimeout)
	}
}

// drainWatch reads ch until it closes and returns the last event,
// failing the test if it is not closed within closeTimeout.
func drainWatch(t *testing.T, ch <-chan kv.Event) kv.Event {
	t.Helper()
	timer := time.NewTimer(closeTimeout)
	defer timer.Stop()
	var last kv.Event
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return last
			}
			last = ev
		case <-timer.C:
			t.Fatalf("watch not closed within %v", closeTimeout)
		}
	}
}

// watchGoroutines counts the goroutines running a watch or a listener of a
// Backend.
func watchGoroutines() int {
	return goroutines.Count("kvwatch.Watch.Run(", "pgstore.(*hub).listen(")
}

// Close ends every watch, the one its receiver reads with an event wrapping
// store.ErrClosed, the one whose receiver stopped reading too, and waits
// for their goroutines; it leaves the pool, the caller's, open. Before,
// Backend had no Close: its watches ran until their ctx ended.
func TestCloseEndsWatches(t *testing.T) {
	pool := newPool(t)
	b := newBackend(t, pool, pgstore.WithWatchBuffer(1))
	ctx := t.Context()
	before := watchGoroutines()
	rev, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "a/0", Value: []byte("v")})
	require.NoError(t, err)
	read, err := b.Watch(ctx, "a/", rev)
	require.NoError(t, err)
	stalled, err := b.Watch(ctx, "a/", rev) // never read until Close returns
	require.NoError(t, err)
	for i := range 5 {
		rev, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("a/%d", i+1), Value: []byte("v")})
		require.NoError(t, err)
	}
	// Read every change first: Close's last event goes into a channel with
	// room, and a receiver still taking the changes when Close comes may
	// miss it, as the doc says.
	for ev := range read {
		require.NoError(t, ev.Err)
		if ev.Revision == rev {
			break
		}
	}

	closed := make(chan error, 1)
	go func() { closed <- b.Close() }()
	last := drainWatch(t, read)
	require.ErrorIs(t, last.Err, store.ErrClosed, "the read watch's last event")
	within(t, "Close, with a watch whose receiver stopped reading", func() { require.NoError(t, <-closed) })
	require.LessOrEqual(t, watchGoroutines(), before, "Close returns once the watches' and the listener's goroutines have ended")
	drainWatch(t, stalled)
	require.Zero(t, b.HeldEvents(), "the watches hold nothing once Close returned")
	require.NoError(t, pool.Ping(ctx), "Close leaves the caller's pool open")
}

// Close is idempotent and safe to call concurrently, with Watches starting
// at the same time: each Watch either fails with store.ErrClosed or ends
// with Close. (The calls after Close are storetest's Close/CallsAfterCloseFail,
// which TestConformance runs.)
func TestCloseConcurrentAndIdempotent(t *testing.T) {
	pool := newPool(t)
	b := newBackend(t, pool)
	ctx := t.Context()
	var wg sync.WaitGroup
	watches := make(chan (<-chan kv.Event), 64)
	for i := range 16 {
		wg.Go(func() {
			if i%2 == 0 {
				if err := b.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
				return
			}
			ch, err := b.Watch(ctx, "w/", 1)
			if err != nil {
				if !errors.Is(err, store.ErrClosed) {
					t.Errorf("Watch racing Close: %v, want store.ErrClosed", err)
				}
				return
			}
			watches <- ch
		})
	}
	within(t, "concurrent Closes and Watches", wg.Wait)
	close(watches)
	for ch := range watches {
		last := drainWatch(t, ch)
		require.ErrorIs(t, last.Err, store.ErrClosed)
	}
	require.NoError(t, b.Close(), "Close again")
}

// A pool the caller closed is store.ErrClosed, not store.ErrUnavailable: a
// call fails at once with it, and a watch ends with it rather than retry
// for ever. Before, a watch on a closed pool retried every poll interval
// until its ctx ended, and calls said a write may have committed.
func TestClosedPoolIsErrClosed(t *testing.T) {
	pool := newPool(t)
	b := newBackend(t, pool, pgstore.WithPollInterval(50*time.Millisecond))
	ctx := t.Context()
	l, err := b.List(ctx, "p/", kv.ListOptions{})
	require.NoError(t, err)
	ch, err := b.Watch(ctx, "p/", l.Revision)
	require.NoError(t, err)
	pool.Close()

	last := drainWatch(t, ch)
	require.ErrorIs(t, last.Err, store.ErrClosed, "the watch's last event")
	require.False(t, errors.Is(last.Err, store.ErrExpired), "the watch ended because the pool is closed, not for a history to relist")
	_, err = b.Get(ctx, "k")
	require.ErrorIs(t, err, store.ErrClosed, "Get")
	require.False(t, errors.Is(err, store.ErrUnavailable), "a closed pool sent nothing: no write can have committed")
	_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("v")})
	require.ErrorIs(t, err, store.ErrClosed, "Txn")
	_, err = pgstore.New(ctx, pool, pgstore.WithSchema("closed_pool"))
	require.ErrorIs(t, err, store.ErrClosed, "New")
	within(t, "Close after the pool closed", func() { require.NoError(t, b.Close()) })
}

// TestWithSchemaRefusesWhatPostgreSQLRefuses: a schema name starting with
// "pg_" matches WithSchema's identifier rule, but PostgreSQL reserves the
// prefix for its own schemas (CREATE SCHEMA, even IF NOT EXISTS of
// pg_catalog, fails with "unacceptable schema name", SQLSTATE 42939), so
// New refuses it with store.ErrInvalid before asking the server. Before,
// the server's error came back wrapping no sentinel.
func TestWithSchemaRefusesWhatPostgreSQLRefuses(t *testing.T) {
	pool := newPool(t)
	ctx := t.Context()
	for _, name := range []string{"pg_steady", "pg_", "pg_catalog", "pg_toast", "pg_temp"} {
		b, err := pgstore.New(ctx, pool, pgstore.WithSchema(name))
		require.ErrorIs(t, err, store.ErrInvalid, "schema %q", name)
		require.ErrorContains(t, err, "reserves", "schema %q", name)
		require.Nil(t, b)
	}
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = 'pg_steady'`).Scan(&n))
	require.Zero(t, n, "nothing was created")
	for _, name := range []string{"_pg_steady", "pgsteady", "p_g"} {
		cctx, cancel := context.WithTimeout(ctx, closeTimeout)
		b, err := pgstore.New(cctx, pool, pgstore.WithSchema(name))
		cancel()
		require.NoError(t, err, "schema %q is not reserved", name)
		require.NoError(t, b.Close())
	}
}
