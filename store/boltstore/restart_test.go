package boltstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/boltstore"
	"github.com/steady-go/steady/store/kv"
)

func put(t *testing.T, b kv.Backend, key, value string) int64 {
	t.Helper()
	rev, err := b.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(value)})
	require.NoError(t, err)
	return rev
}

func reopen(t *testing.T, s *boltstore.Store, opts ...boltstore.Option) *boltstore.Store {
	t.Helper()
	require.NoError(t, s.Close())
	s2, err := boltstore.Open(s.Path(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { s2.Close() })
	return s2
}

// recv returns the next event of ch, failing the test if none comes.
func recv(t *testing.T, ch <-chan kv.Event) kv.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		require.True(t, ok, "watch channel closed")
		return ev
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no watch event within 10s")
		return kv.Event{}
	}
}

func nextChange(t *testing.T, ch <-chan kv.Event) kv.Event {
	t.Helper()
	for {
		ev := recv(t, ch)
		require.NoError(t, ev.Err)
		if !ev.Progress {
			return ev
		}
	}
}

// TestRestartKeepsStateAndRevision: after Close and Open, the keys, their
// revisions and the store revision are as they were, and the next write
// continues the revision sequence.
func TestRestartKeepsStateAndRevision(t *testing.T) {
	s := open(t)
	var last int64
	for i := range 20 {
		last = put(t, s, fmt.Sprintf("k/%02d", i%7), fmt.Sprintf("v%d", i))
	}
	_, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WriteDelete, Key: "k/03"})
	require.NoError(t, err)
	last++
	before, err := s.List(t.Context(), "", kv.ListOptions{})
	require.NoError(t, err)

	s = reopen(t, s)
	require.Equal(t, last, s.Revision(), "the revision survives a restart")
	after, err := s.List(t.Context(), "", kv.ListOptions{})
	require.NoError(t, err)
	require.Equal(t, before, after, "every key, value and revision survives a restart")
	require.Equal(t, last+1, put(t, s, "k/new", "x"), "revisions continue after a restart, never repeat")
}

// TestWatchResumesAcrossRestart: a watcher that saw revision r before a
// restart resumes from r on the reopened file and gets every later change,
// with its previous value, and then the live ones.
func TestWatchResumesAcrossRestart(t *testing.T) {
	s := open(t)
	r1 := put(t, s, "w/a", "1")
	r2 := put(t, s, "w/b", "1")
	put(t, s, "x/other", "1")
	r4 := put(t, s, "w/a", "2")
	s = reopen(t, s)

	ch, err := s.Watch(t.Context(), "w/", r1)
	require.NoError(t, err)
	ev := nextChange(t, ch)
	require.Equal(t, r2, ev.Revision)
	require.Equal(t, "w/b", ev.KV.Key)
	ev = nextChange(t, ch)
	require.Equal(t, r4, ev.Revision)
	require.Equal(t, "2", string(ev.KV.Value))
	require.Equal(t, kv.KeyValue{Key: "w/a", Value: []byte("1"), CreateRevision: r1, ModRevision: r1}, ev.Prev,
		"the history keeps the value before each write across a restart")
	r5 := put(t, s, "w/c", "1")
	require.Equal(t, r5, nextChange(t, ch).Revision, "then the live writes")
}

// TestHistoryIsCompactedInTheBackground: once the history holds more than
// WithHistorySize writes, the background compaction trims it to about that
// many, so a watch from before them, also after a restart, ends with
// ErrExpired, while one within them works. synctest.Wait lets the
// compaction goroutine finish its work.
func TestHistoryIsCompactedInTheBackground(t *testing.T) {
	path := filepath.Join(t.TempDir(), "steady.db")
	synctest.Test(t, func(t *testing.T) {
		s, err := boltstore.Open(path, boltstore.WithHistorySize(10))
		require.NoError(t, err)
		defer s.Close()
		first := put(t, s, "h/0", "v")
		var last int64
		for i := range 40 {
			last = put(t, s, fmt.Sprintf("h/%d", i%5), "v")
		}
		synctest.Wait()

		requireExpired(t, s, first)
		_, err = s.List(t.Context(), "h/", kv.ListOptions{Revision: first})
		require.ErrorIs(t, err, store.ErrExpired, "a List pinned to compacted history")

		ch, err := s.Watch(t.Context(), "h/", last-10)
		require.NoError(t, err)
		require.Equal(t, last-9, nextChange(t, ch).Revision, "the last WithHistorySize writes are kept")

		require.NoError(t, s.Close())
		s, err = boltstore.Open(path, boltstore.WithHistorySize(10))
		require.NoError(t, err)
		defer s.Close()
		requireExpired(t, s, first)
	})
}

func requireExpired(t *testing.T, s *boltstore.Store, from int64) {
	t.Helper()
	ch, err := s.Watch(t.Context(), "", from)
	require.NoError(t, err)
	ev := recv(t, ch)
	require.ErrorIs(t, ev.Err, store.ErrExpired, "a watch from compacted history ends with ErrExpired, got %+v", ev)
	_, open := <-ch
	require.False(t, open, "the ErrExpired event is the last")
}

// TestSlowWatcherGetsExpiredNotTruncated: a receiver that stops reading
// while the writers run far past the history gets every event up to the
// point its backlog was compacted away, contiguous, and then ErrExpired;
// never a silent gap.
func TestSlowWatcherGetsExpiredNotTruncated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := boltstore.Open(filepath.Join(t.TempDir(), "steady.db"), boltstore.WithHistorySize(8), boltstore.WithWatchBuffer(2))
		require.NoError(t, err)
		defer s.Close()
		from := put(t, s, "s/0", "v")
		ch, err := s.Watch(t.Context(), "s/", from)
		require.NoError(t, err)
		for i := range 50 {
			put(t, s, fmt.Sprintf("s/%d", i%3), "v")
		}
		synctest.Wait()
		want := from + 1
		for ev := range ch {
			if ev.Err != nil {
				require.ErrorIs(t, ev.Err, store.ErrExpired)
				require.Less(t, want, from+50, "the watcher fell behind, so it cannot have seen everything")
				return
			}
			require.Equal(t, want, ev.Revision, "events are contiguous up to the expiry")
			want++
		}
		require.Fail(t, "the watch ended without ErrExpired")
	})
}

// TestCloseEndsWatches: Close ends a running watch with ErrClosed and
// refuses later calls.
func TestCloseEndsWatches(t *testing.T) {
	s, err := boltstore.Open(filepath.Join(t.TempDir(), "steady.db"))
	require.NoError(t, err)
	ch, err := s.Watch(context.Background(), "", 0)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	ev := recv(t, ch)
	require.ErrorIs(t, ev.Err, boltstore.ErrClosed)
	_, err = s.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: nil})
	require.ErrorIs(t, err, boltstore.ErrClosed)
	_, err = s.Get(t.Context(), "k")
	require.ErrorIs(t, err, boltstore.ErrClosed)
	_, err = s.List(t.Context(), "", kv.ListOptions{})
	require.ErrorIs(t, err, boltstore.ErrClosed)
	require.NoError(t, s.Close(), "Close is idempotent")
}

// TestSecondOpenerIsRefused: one Store owns the file; a second Open of it
// waits WithLockTimeout and fails with ErrLocked, and succeeds once the first
// is closed. (TestKill9 checks the same across processes.)
func TestSecondOpenerIsRefused(t *testing.T) {
	s := open(t)
	_, err := boltstore.Open(s.Path(), boltstore.WithLockTimeout(0))
	require.ErrorIs(t, err, boltstore.ErrLocked)
	require.ErrorContains(t, err, s.Path())
	reopen(t, s)
}
