package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

var watchTests = []test{
	{"StrictlyAfterFromRevision", func(t *testing.T, b kv.Backend) {
		r1 := put(t, b, "k/1", "a")
		r2 := put(t, b, "k/2", "b")
		r3 := put(t, b, "k/3", "c")
		ch := watch(t, b, "k/", r1)
		require.Equal(t, r2, nextChange(t, ch).Revision, "the event at fromRevision is not sent")
		require.Equal(t, r3, nextChange(t, ch).Revision)

		live := watch(t, b, "k/", r3)
		r4 := put(t, b, "k/4", "d")
		require.Equal(t, r4, nextChange(t, live).Revision, "a watch from the current revision sees the next write")
	}},
	{"ListThenWatchOnAFreshStore", func(t *testing.T, b kv.Backend) {
		// The way to follow a listing is a Watch from its Revision, which
		// on a fresh store is 0 (on most backends): a write between the
		// List and the Watch must reach the watch, so 0 cannot mean
		// "from now".
		l, err := b.List(t.Context(), "k/", kv.ListOptions{})
		require.NoError(t, err)
		require.Empty(t, l.KVs, "a fresh store holds no keys")
		r1 := put(t, b, "k/1", "a")
		ch := watch(t, b, "k/", l.Revision)
		r2 := put(t, b, "k/2", "b")
		require.Equal(t, r1, nextChange(t, ch).Revision,
			"a write between a List and a Watch from its Revision (%d) reaches the watch", l.Revision)
		require.Equal(t, r2, nextChange(t, ch).Revision)
	}},
	{"FromZero", func(t *testing.T, b kv.Backend) {
		// 0 is no special case: a watch from 0 replays every change from
		// revision 1 on, or ends with ErrExpired when that history is gone.
		base := currentRevision(t, b)
		r1 := put(t, b, "k/1", "a")
		put(t, b, "x/1", "outside")
		r3 := put(t, b, "k/1", "b")
		ch := watch(t, b, "k/", 0)
		r4 := put(t, b, "k/2", "c") // so that a watch from now fails at once rather than wait
		ev := nextChangeOrErr(t, ch)
		if ev.Err != nil {
			// Only a key space sharing an older history (etcd's revisions
			// are the cluster's) may have lost revision 1 to a compaction.
			require.ErrorIs(t, ev.Err, store.ErrExpired, "a watch from 0 fails only with ErrExpired")
			require.Positive(t, base, "a watch from 0 on a fresh store whose history is whole replays it: got %v", ev.Err)
			t.Logf("the store's history before revision %d is compacted: %v", base, ev.Err)
		} else {
			require.Equal(t, r1, ev.Revision, "a watch from 0 replays the first change (revision %d), not from now", r1)
			requireKV(t, kv.KeyValue{Key: "k/1", Value: []byte("a"), CreateRevision: r1, ModRevision: r1}, ev.KV, "replayed create")
			ev = nextChange(t, ch)
			require.Equal(t, r3, ev.Revision, "then every later change under the prefix")
			requireKV(t, kv.KeyValue{Key: "k/1", Value: []byte("a"), CreateRevision: r1, ModRevision: r1}, ev.Prev, "replayed update's Prev")
			require.Equal(t, r4, nextChange(t, ch).Revision, "and then the new ones")
		}
		c, ok := b.(Compactor)
		if !ok {
			return
		}
		require.NoError(t, c.Compact(t.Context(), r3))
		last := drain(t, watch(t, b, "k/", 0))
		require.ErrorIs(t, last.Err, store.ErrExpired, "a watch from 0 once revision 1 is compacted ends with ErrExpired")
	}},
	{"FromCurrentRevision", func(t *testing.T, b kv.Backend) {
		put(t, b, "k/1", "a")
		put(t, b, "k/2", "b")
		l, err := b.List(t.Context(), "k/", kv.ListOptions{})
		require.NoError(t, err)
		r3 := put(t, b, "k/3", "c") // between the List and the Watch
		ch := watch(t, b, "k/", l.Revision)
		r4 := put(t, b, "k/4", "d")
		require.Equal(t, r3, nextChange(t, ch).Revision,
			"a watch from the current revision sends neither the changes up to it nor skips those after it")
		require.Equal(t, r4, nextChange(t, ch).Revision)
	}},
	{"FromFutureRevision", func(t *testing.T, b kv.Backend) {
		now := currentRevision(t, b)
		ch := watch(t, b, "k/", now+2)
		put(t, b, "k/1", "a")
		put(t, b, "k/2", "b")
		r3 := put(t, b, "k/3", "c")
		require.Equal(t, now+3, r3)
		require.Equal(t, r3, nextChange(t, ch).Revision, "a watch from a future revision waits for the writes after it")
	}},
	{"OrderAndContent", func(t *testing.T, b kv.Backend) {
		from := currentRevision(t, b)
		ch := watch(t, b, "w/", from)
		type write struct {
			del bool
			key string
		}
		var want []kv.Event
		for i := range 40 {
			w := write{key: fmt.Sprintf("w/%d", i%5)}
			if i%7 == 6 {
				if _, err := b.Get(t.Context(), w.key); err == nil {
					w.del = true
				}
			}
			if w.del {
				rev := del(t, b, w.key)
				want = append(want, kv.Event{Type: kv.EventDelete, Revision: rev, KV: kv.KeyValue{Key: w.key, ModRevision: rev}})
				continue
			}
			v := fmt.Sprintf("v%d", i)
			rev := put(t, b, w.key, v)
			want = append(want, kv.Event{Type: kv.EventPut, Revision: rev, KV: get(t, b, w.key)})
		}
		for i, w := range want {
			ev := nextChange(t, ch)
			require.Equal(t, w.Type, ev.Type, "event %d", i)
			require.Equal(t, w.Revision, ev.Revision, "event %d arrives in revision order", i)
			requireKV(t, w.KV, ev.KV, fmt.Sprintf("event %d", i))
		}
	}},
	{"Prefix", func(t *testing.T, b kv.Backend) {
		from := currentRevision(t, b)
		ch := watch(t, b, "w/", from)
		put(t, b, "x/1", "v")
		r2 := put(t, b, "w/1", "v")
		put(t, b, "w", "v")
		put(t, b, "w0", "v")
		r5 := put(t, b, "w/sub/2", "v")
		require.Equal(t, r2, nextChange(t, ch).Revision)
		require.Equal(t, r5, nextChange(t, ch).Revision, "keys outside the prefix are not sent")
	}},
	{"Prev", func(t *testing.T, b kv.Backend) {
		from := currentRevision(t, b)
		ch := watch(t, b, "k", from)
		r1 := put(t, b, "k", "v1")
		r2 := put(t, b, "k", "v2")
		r3 := del(t, b, "k")
		v1 := kv.KeyValue{Key: "k", Value: []byte("v1"), CreateRevision: r1, ModRevision: r1}
		v2 := kv.KeyValue{Key: "k", Value: []byte("v2"), CreateRevision: r1, ModRevision: r2}

		ev := nextChange(t, ch)
		require.Equal(t, kv.EventPut, ev.Type)
		requireKV(t, v1, ev.KV, "create")
		requireKV(t, kv.KeyValue{}, ev.Prev, "a create has no Prev")

		ev = nextChange(t, ch)
		require.Equal(t, kv.EventPut, ev.Type)
		requireKV(t, v2, ev.KV, "update")
		requireKV(t, v1, ev.Prev, "an update's Prev is the value before it")

		ev = nextChange(t, ch)
		require.Equal(t, kv.EventDelete, ev.Type)
		require.Equal(t, r3, ev.Revision)
		requireKV(t, kv.KeyValue{Key: "k", ModRevision: r3}, ev.KV, "a delete carries the key and the deleting revision")
		requireKV(t, v2, ev.Prev, "a delete's Prev is the last value")
	}},
	{"ProgressForWritesOutsidePrefix", func(t *testing.T, b kv.Backend) {
		from := currentRevision(t, b)
		ch := watch(t, b, "w/", from)
		rx := put(t, b, "x/1", "v")
		requireProgress(t, ch, rx)

		// A watch whose backlog lies wholly outside its prefix catches up
		// with a progress mark too.
		put(t, b, "x/2", "v")
		ry := put(t, b, "x/3", "v")
		requireProgress(t, watch(t, b, "w/", rx), ry)
	}},
	{"ExpiredHistory", func(t *testing.T, b kv.Backend) {
		c := compactor(t, b)
		r1 := put(t, b, "e/1", "v")
		put(t, b, "e/2", "v")
		put(t, b, "e/3", "v")
		r4 := put(t, b, "e/4", "v")
		r5 := put(t, b, "e/5", "v")
		require.NoError(t, c.Compact(t.Context(), r4))

		ch := watch(t, b, "e/", r1)
		last := drain(t, ch)
		require.ErrorIs(t, last.Err, store.ErrExpired, "a watch from compacted history ends with ErrExpired")

		ok := watch(t, b, "e/", r4)
		require.Equal(t, r5, nextChange(t, ok).Revision, "a watch from the compaction revision works")
	}},
	{"CancelClosesChannel", func(t *testing.T, b kv.Backend) {
		from := currentRevision(t, b)
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := b.Watch(ctx, "k/", from)
		require.NoError(t, err)
		put(t, b, "k/1", "v")
		nextChange(t, ch)
		cancel()
		put(t, b, "k/2", "v")
		last := drain(t, ch)
		require.NoError(t, last.Err, "a cancelled watch ends without an error event")
	}},
}

// watch starts a watch that ends with the test.
func watch(t *testing.T, b kv.Backend, prefix string, from int64) <-chan kv.Event {
	t.Helper()
	ch, err := b.Watch(t.Context(), prefix, from)
	require.NoError(t, err)
	return ch
}

// next returns the next event, failing the test if the channel closes or
// nothing arrives within WaitTimeout.
func next(t *testing.T, ch <-chan kv.Event) kv.Event {
	t.Helper()
	ev, ok := recvWithin(ch, WaitTimeout)
	require.True(t, ok, "watch channel closed, or no event within %v", WaitTimeout)
	require.NoError(t, ev.Err, "watch failed")
	return ev
}

// recvWithin receives from ch; ok is false if ch is closed or nothing
// arrives within d. It does not fail the test, so goroutines may call it.
func recvWithin(ch <-chan kv.Event, d time.Duration) (kv.Event, bool) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case ev, ok := <-ch:
		return ev, ok
	case <-timer.C:
		return kv.Event{}, false
	}
}

// nextChange returns the next Put or Delete, skipping progress marks.
func nextChange(t *testing.T, ch <-chan kv.Event) kv.Event {
	t.Helper()
	for {
		if ev := next(t, ch); !ev.Progress {
			return ev
		}
	}
}

// nextChangeOrErr returns the next Put or Delete, or the error event that
// ends the watch, skipping progress marks.
func nextChangeOrErr(t *testing.T, ch <-chan kv.Event) kv.Event {
	t.Helper()
	for {
		ev, ok := recvWithin(ch, WaitTimeout)
		require.True(t, ok, "watch channel closed, or no event within %v", WaitTimeout)
		if !ev.Progress || ev.Err != nil {
			return ev
		}
	}
}

// requireProgress waits for a progress mark at rev or later, failing on any
// change event.
func requireProgress(t *testing.T, ch <-chan kv.Event, rev int64) {
	t.Helper()
	for {
		ev := next(t, ch)
		require.True(t, ev.Progress, "no change under the prefix, only progress: got %+v", ev)
		if ev.Revision >= rev {
			return
		}
	}
}

// drain reads ch until it closes and returns the last event (the zero Event
// if none came), checking that only the last one carries an error.
func drain(t *testing.T, ch <-chan kv.Event) kv.Event {
	t.Helper()
	timer := time.NewTimer(WaitTimeout)
	defer timer.Stop()
	var last kv.Event
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return last
			}
			require.NoError(t, last.Err, "an error event is the last one")
			last = ev
		case <-timer.C:
			require.FailNow(t, "watch channel not closed", "waited %v", WaitTimeout)
		}
	}
}
