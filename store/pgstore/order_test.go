package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/pgstore"
)

// written is what a writer was told: its write of key with value committed
// at rev.
type written struct {
	rev        int64
	key, value string
}

// collect reads ch until it sees key stop, and returns the change events
// before it. It fails the test on an error event or a silence of 10s.
func collect(t *testing.T, ch <-chan kv.Event, stop string) []kv.Event {
	t.Helper()
	var got []kv.Event
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-ch:
			require.True(t, ok, "watch closed after %d events", len(got))
			require.NoError(t, ev.Err)
			if ev.Progress {
				continue
			}
			if ev.KV.Key == stop {
				return got
			}
			got = append(got, ev)
			timer.Reset(10 * time.Second)
		case <-timer.C:
			require.FailNow(t, "no event for 10s", "after %d events", len(got))
		}
	}
}

// requireEveryRevision checks that events are exactly the writes of acked,
// one per revision from from+1 on, with no revision skipped, repeated or
// out of order: every Txn advances the revision by one, so the acknowledged
// writes of a quiet schema are the whole revision range.
func requireEveryRevision(t *testing.T, from int64, acked []written, events []kv.Event, who string) {
	t.Helper()
	byRev := make(map[int64]written, len(acked))
	for _, w := range acked {
		byRev[w.rev] = w
	}
	require.Len(t, byRev, len(acked), "every acknowledged write has a revision of its own")
	for i, ev := range events {
		want := from + 1 + int64(i)
		require.Equal(t, want, ev.Revision, "%s: event %d is revision %d: none skipped, repeated or reordered", who, i, want)
		w, ok := byRev[want]
		require.True(t, ok, "%s: revision %d was never acknowledged", who, want)
		require.Equal(t, w.key, ev.KV.Key, "%s: key at revision %d", who, want)
		require.Equal(t, w.value, string(ev.KV.Value), "%s: value at revision %d", who, want)
	}
	require.Len(t, events, len(acked), "%s sees every acknowledged write", who)
}

// TestCommitOrderUnderConcurrentWriters has 8 writers commit at once while
// watches read: small-buffered ones (many short reads racing the commits),
// a default one, and one started in the middle of the storm from the
// storm's start. Each sees every revision exactly once, in order, with the
// value its writer was told committed there. With revisions from a
// sequence, a read between two commits that drew their numbers in the other
// order skips the late one for good.
func TestCommitOrderUnderConcurrentWriters(t *testing.T) {
	const writers, each = 8, 150
	pool := newPool(t)
	b := newBackend(t, pool, pgstore.WithWatchBuffer(7))
	ctx := t.Context()
	// A first write, whose revision the watches start from (once, 0 meant
	// "from now" to the late one; a watch from 0 now replays from 1).
	from, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "start", Value: []byte("")})
	require.NoError(t, err)

	var chans []<-chan kv.Event
	for range 3 {
		ch, err := b.Watch(ctx, "k/", from)
		require.NoError(t, err)
		chans = append(chans, ch)
	}
	big, err := pgstore.New(ctx, pool, pgstore.WithSchema(b.Schema()))
	require.NoError(t, err)
	ch, err := big.Watch(ctx, "k/", from)
	require.NoError(t, err)
	chans = append(chans, ch)

	var (
		mu    sync.Mutex
		acked []written
		wg    sync.WaitGroup
	)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				k, v := fmt.Sprintf("k/%d/%d", w, i%5), fmt.Sprintf("%d-%d", w, i)
				rev, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: k, Value: []byte(v)})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked = append(acked, written{rev, k, v})
				if len(acked) == writers*each/2 {
					// A late watch from the start reads the first half as
					// backlog while the second half commits.
					ch, err := b.Watch(ctx, "k/", from)
					if err != nil {
						t.Error(err)
					}
					chans = append(chans, ch)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "k/end", Value: []byte("")})
	require.NoError(t, err)
	require.Len(t, chans, 5)
	for i, ch := range chans {
		requireEveryRevision(t, from, acked, collect(t, ch, "k/end"), fmt.Sprintf("watch %d", i))
	}
}

// TestSlowConsumerMemoryIsBounded stalls a watch's reader while 2,000
// writes commit: the watch holds at most one batch besides its channel,
// and once the reader resumes it gets all 2,000, in order (the backlog
// waited in the database, not in memory).
func TestSlowConsumerMemoryIsBounded(t *testing.T) {
	const buffer, writes = 16, 2000
	pool := newPool(t)
	b := newBackend(t, pool, pgstore.WithWatchBuffer(buffer))
	ctx := t.Context()
	ch, err := b.Watch(ctx, "", 0)
	require.NoError(t, err)

	var acked []written
	for i := range writes {
		k, v := fmt.Sprintf("k/%d", i%10), fmt.Sprint(i)
		rev, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: k, Value: []byte(v)})
		require.NoError(t, err)
		acked = append(acked, written{rev, k, v})
		require.LessOrEqual(t, b.HeldEvents(), int64(buffer), "after write %d: a stalled watch holds at most one batch", i)
	}
	require.LessOrEqual(t, len(ch), buffer)
	_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "end", Value: []byte("")})
	require.NoError(t, err)
	requireEveryRevision(t, 0, acked, collect(t, ch, "end"), "the slow reader")
	require.Zero(t, b.HeldEvents())
}

// A watch past compaction ends with ErrExpired; one from the compaction's
// revision minus one still works, and so does a List at it.
func TestWatchFromCompactedRevisionExpires(t *testing.T) {
	b := newBackend(t, newPool(t))
	ctx := t.Context()
	var revs []int64
	for i := range 6 {
		rev, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte(fmt.Sprint(i))})
		require.NoError(t, err)
		revs = append(revs, rev)
	}
	require.NoError(t, b.Compact(ctx, revs[4]))
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := b.Watch(wctx, "", revs[2])
	require.NoError(t, err)
	ev := <-ch
	require.ErrorIs(t, ev.Err, store.ErrExpired)
	_, ok := <-ch
	require.False(t, ok, "the error event is the last")

	ch, err = b.Watch(wctx, "", revs[3])
	require.NoError(t, err)
	ev = <-ch
	require.NoError(t, ev.Err)
	require.Equal(t, revs[4], ev.Revision)
	require.Equal(t, "3", string(ev.Prev.Value), "the Prev of the first event after the floor is kept")
	_, err = b.List(ctx, "", kv.ListOptions{Revision: revs[3]})
	require.ErrorIs(t, err, store.ErrExpired)
	l, err := b.List(ctx, "", kv.ListOptions{Revision: revs[4]})
	require.NoError(t, err)
	require.Equal(t, "4", string(l.KVs[0].Value))
}

// 8 writers make 2,000 read-modify-write increments each (Get, then a Txn
// conditioned on the ModRevision read, again on a failed cond) on 4
// counters: no increment is lost, and every success has a revision of its
// own.
func TestReadModifyWriteLosesNoUpdate(t *testing.T) {
	const writers, each, counters = 8, 2000, 4
	b := newBackend(t, newPool(t))
	ctx := t.Context()
	var (
		mu   sync.Mutex
		revs = map[int64]bool{}
		wg   sync.WaitGroup
	)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				key := fmt.Sprintf("n/%d", (w+i)%counters)
				for {
					n, cond := 0, kv.Cond{Key: key, Target: kv.CreateRevision}
					kvp, err := b.Get(ctx, key)
					if err == nil {
						n, _ = strconv.Atoi(string(kvp.Value))
						cond = kv.Cond{Key: key, Target: kv.ModRevision, Revision: kvp.ModRevision}
					} else if !errors.Is(err, store.ErrNotFound) {
						t.Error(err)
						return
					}
					rev, err := b.Txn(ctx, []kv.Cond{cond}, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(strconv.Itoa(n + 1))})
					if errors.Is(err, kv.ErrCondFailed) {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					revs[rev] = true
					mu.Unlock()
					break
				}
			}
		})
	}
	wg.Wait()
	total := 0
	for c := range counters {
		kvp, err := b.Get(ctx, fmt.Sprintf("n/%d", c))
		require.NoError(t, err)
		n, err := strconv.Atoi(string(kvp.Value))
		require.NoError(t, err)
		total += n
	}
	require.Equal(t, writers*each, total, "no increment is lost")
	require.Len(t, revs, writers*each, "every increment has a revision of its own")
}

// With WithHistorySize(16), writes compact the log as they go: it never
// holds more than the last 16 writes, an eighth more awaiting compaction,
// and each key's last row before them; a watch from before them gets
// ErrExpired, one within them works.
func TestHistorySizeBoundsTheLog(t *testing.T) {
	const n, writes, keys = 16, 200, 3
	pool := newPool(t)
	b := newBackend(t, pool, pgstore.WithHistorySize(n))
	ctx := t.Context()
	var last int64
	for i := range writes {
		var err error
		last, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%d", i%keys), Value: []byte(fmt.Sprint(i))})
		require.NoError(t, err)
		var rows int
		require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM "+b.Schema()+".log").Scan(&rows))
		require.LessOrEqual(t, rows, n+n/8+keys, "after write %d", i)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := b.Watch(wctx, "", 1)
	require.NoError(t, err)
	require.ErrorIs(t, (<-ch).Err, store.ErrExpired)
	ch, err = b.Watch(wctx, "", last-n)
	require.NoError(t, err)
	for rev := last - n + 1; rev <= last; rev++ {
		ev := <-ch
		require.NoError(t, ev.Err)
		require.Equal(t, rev, ev.Revision)
	}
}
