package memstore_test

// Black-box tests of memstore, written from the kv.Backend contract and
// memstore's documentation alone: each test quotes the promise it checks.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

func put51(t *testing.T, s *memstore.Store, key, value string) int64 {
	t.Helper()
	rev, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(value)})
	require.NoError(t, err)
	return rev
}

// "New returns an empty Store at revision 0"; "Every successful Txn advances
// the revision by one, starting from 1"; "a Txn that fails writes nothing and
// leaves the revision where it was".
func TestBlackbox51RevisionsAdvanceByOneOnlyOnSuccess(t *testing.T) {
	s := memstore.New()
	require.Zero(t, s.Revision())
	ctx := t.Context()
	require.EqualValues(t, 1, put51(t, s, "a", "1"))
	failures := []struct {
		conds []kv.Cond
		w     kv.Write
		is    error
	}{
		{nil, kv.Write{Kind: kv.WriteDelete, Key: "absent"}, kv.ErrNotFound},
		{nil, kv.Write{Kind: kv.WritePut, Key: ""}, kv.ErrInvalid},
		{nil, kv.Write{Kind: 0, Key: "a"}, kv.ErrInvalid},
		{nil, kv.Write{Kind: 99, Key: "a"}, kv.ErrInvalid},
		{[]kv.Cond{{Key: "", Revision: 0}}, kv.Write{Kind: kv.WritePut, Key: "a"}, kv.ErrInvalid},
		{[]kv.Cond{{Key: "a", Target: 7}}, kv.Write{Kind: kv.WritePut, Key: "a"}, kv.ErrInvalid},
		{[]kv.Cond{{Key: "a", Revision: -1}}, kv.Write{Kind: kv.WritePut, Key: "a"}, kv.ErrInvalid},
		{nil, kv.Write{Kind: kv.WritePut, Key: "a", Value: make([]byte, kv.MaxValueSize+1)}, kv.ErrTooLarge},
		{[]kv.Cond{{Key: "a", Target: kv.CreateRevision, Revision: 0}}, kv.Write{Kind: kv.WritePut, Key: "a"}, kv.ErrCondFailed},
	}
	for i, f := range failures {
		rev, err := s.Txn(ctx, f.conds, f.w)
		require.ErrorIs(t, err, f.is, "case %d", i)
		require.Zero(t, rev, "case %d: a failed Txn returns no revision", i)
		require.EqualValues(t, 1, s.Revision(), "case %d: a failed Txn leaves the revision", i)
	}
	kvp, err := s.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, "1", string(kvp.Value), "no failed Txn wrote")

	// Exactly MaxValueSize is allowed: the limit is "a value over MaxValueSize".
	rev, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "big", Value: make([]byte, kv.MaxValueSize)})
	require.NoError(t, err)
	require.EqualValues(t, 2, rev)
	kvp, err = s.Get(ctx, "big")
	require.NoError(t, err)
	require.Len(t, kvp.Value, kv.MaxValueSize)
	require.EqualValues(t, 2, kvp.CreateRevision)
	require.EqualValues(t, 2, kvp.ModRevision)
}

// Txn: "Conds are checked in order; when one fails nothing is written and
// the error is a *CondFailedError naming the first cond that failed";
// "ModRevision compares the key's ModRevision (0 when the key is absent)";
// "CreateRevision == 0 means 'the key does not exist'". A cond may name any
// key, and the same key twice.
func TestBlackbox51TxnCondsNameTheFirstFailure(t *testing.T) {
	s := memstore.New()
	ctx := t.Context()
	put51(t, s, "fence", "x")   // rev 1
	put51(t, s, "obj", "v1")    // rev 2
	put51(t, s, "obj", "v2")    // rev 3, create 2
	put51(t, s, "other", "zzz") // rev 4
	w := kv.Write{Kind: kv.WritePut, Key: "obj", Value: []byte("v3")}

	_, err := s.Txn(ctx, []kv.Cond{
		{Key: "fence", Target: kv.CreateRevision, Revision: 1},
		{Key: "obj", Target: kv.ModRevision, Revision: 2},
		{Key: "absent", Target: kv.ModRevision, Revision: 5},
	}, w)
	var cf *kv.CondFailedError
	require.ErrorAs(t, err, &cf)
	require.ErrorIs(t, err, kv.ErrCondFailed)
	require.Equal(t, 1, cf.Index)
	require.Equal(t, kv.Cond{Key: "obj", Target: kv.ModRevision, Revision: 2}, cf.Cond)
	require.EqualValues(t, 3, cf.Actual)

	_, err = s.Txn(ctx, []kv.Cond{{Key: "absent", Target: kv.ModRevision, Revision: 5}}, w)
	require.ErrorAs(t, err, &cf)
	require.Zero(t, cf.Index)
	require.Zero(t, cf.Actual, "an absent key's ModRevision is 0")

	rev, err := s.Txn(ctx, []kv.Cond{
		{Key: "absent", Target: kv.ModRevision, Revision: 0},
		{Key: "absent", Target: kv.CreateRevision, Revision: 0},
		{Key: "obj", Target: kv.CreateRevision, Revision: 2},
		{Key: "obj", Target: kv.CreateRevision, Revision: 2},
		{Key: "obj", Target: kv.ModRevision, Revision: 3},
	}, w)
	require.NoError(t, err)
	require.EqualValues(t, 5, rev)
	kvp, err := s.Get(ctx, "obj")
	require.NoError(t, err)
	require.Equal(t, kv.KeyValue{Key: "obj", Value: []byte("v3"), CreateRevision: 2, ModRevision: 5}, kvp,
		"an update keeps CreateRevision")

	// A deleted and recreated key has a new CreateRevision.
	_, err = s.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: "obj"})
	require.NoError(t, err)
	_, err = s.Get(ctx, "obj")
	require.ErrorIs(t, err, kv.ErrNotFound)
	rev = put51(t, s, "obj", "again")
	kvp, err = s.Get(ctx, "obj")
	require.NoError(t, err)
	require.Equal(t, rev, kvp.CreateRevision)
}

// "It copies w.Value, so the caller may reuse it, unless w.Owned hands it
// over"; "the Value slices a Backend returns ... must not be modified by the
// caller, nor by the Backend afterwards": a later write does not change a
// value already returned.
func TestBlackbox51TxnCopiesTheValueUnlessOwned(t *testing.T) {
	s := memstore.New()
	ctx := t.Context()
	buf := []byte("first")
	_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: buf})
	require.NoError(t, err)
	copy(buf, "XXXXX")
	kvp, err := s.Get(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, "first", string(kvp.Value))

	got := kvp.Value
	_, err = s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("secnd")})
	require.NoError(t, err)
	require.Equal(t, "first", string(got), "a returned value is not modified by later writes")
}

// kv.Backend: "A cancelled ctx ends any call with ctx's error." A cancelled
// Txn writes nothing.
func TestBlackbox51CancelledCtxEndsEveryCall(t *testing.T) {
	s := memstore.New()
	put51(t, s, "k", "v")
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(errors.New("gone"))

	_, err := s.Get(ctx, "k")
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.List(ctx, "", kv.ListOptions{})
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("w")})
	require.ErrorIs(t, err, context.Canceled)
	require.EqualValues(t, 1, s.Revision(), "a cancelled Txn writes nothing")
	err = s.Compact(ctx, 1)
	require.ErrorIs(t, err, context.Canceled)
	ch, err := s.Watch(ctx, "", 0)
	if err == nil {
		for ev := range ch {
			require.NoError(t, ev.Err, "on ctx's end the channel is closed without an error event")
		}
	} else {
		require.ErrorIs(t, err, context.Canceled)
	}
}

// List: "a negative Limit or revision give an error wrapping ErrInvalid";
// "one above the current revision gives an error wrapping ErrInvalid";
// "Every page of one listing reflects the same revision".
func TestBlackbox51ListPagesKeepTheirRevision(t *testing.T) {
	s := memstore.New()
	ctx := t.Context()
	for i := range 10 {
		put51(t, s, fmt.Sprintf("k/%02d", i), "v")
	}
	_, err := s.List(ctx, "k/", kv.ListOptions{Limit: -1})
	require.ErrorIs(t, err, kv.ErrInvalid)
	_, err = s.List(ctx, "k/", kv.ListOptions{Revision: -1})
	require.ErrorIs(t, err, kv.ErrInvalid)
	_, err = s.List(ctx, "k/", kv.ListOptions{Revision: 11})
	require.ErrorIs(t, err, kv.ErrInvalid)

	var keys []string
	page, err := s.List(ctx, "k/", kv.ListOptions{Limit: 3})
	require.NoError(t, err)
	rev := page.Revision
	require.EqualValues(t, 10, rev)
	for {
		for _, p := range page.KVs {
			keys = append(keys, p.Key)
		}
		// Writes between pages: a delete of a listed-to-come key, a new
		// key, an update; none shows in the listing.
		_, err = s.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: fmt.Sprintf("k/%02d", 9-len(keys)/3)})
		if err != nil {
			require.ErrorIs(t, err, kv.ErrNotFound)
		}
		put51(t, s, fmt.Sprintf("k/%02d-new", len(keys)), "new")
		if page.Continue == "" {
			break
		}
		page, err = s.List(ctx, "k/", kv.ListOptions{Limit: 3, Continue: page.Continue, Revision: rev})
		require.NoError(t, err)
		require.Equal(t, rev, page.Revision)
	}
	var want []string
	for i := range 10 {
		want = append(want, fmt.Sprintf("k/%02d", i))
	}
	require.Equal(t, want, keys)
}

// Keys are "non-empty strings": any bytes, unicode, NUL, 0xff, very long,
// list in key order, and prefixes are byte prefixes.
func TestBlackbox51OddKeys(t *testing.T) {
	s := memstore.New()
	ctx := t.Context()
	long := strings.Repeat("λ", 1<<16)
	keys := []string{"\x00", "a\x00b", "a", "a/", "a/\xff", "\xff\xff", "ключ", "🔑", long, " ", "a/b/c"}
	for _, k := range keys {
		put51(t, s, k, k)
	}
	for _, k := range keys {
		kvp, err := s.Get(ctx, k)
		require.NoError(t, err)
		require.Equal(t, k, string(kvp.Value))
	}
	all, err := s.List(ctx, "", kv.ListOptions{})
	require.NoError(t, err)
	require.Len(t, all.KVs, len(keys), "the empty prefix lists every key")
	for i := 1; i < len(all.KVs); i++ {
		require.Less(t, all.KVs[i-1].Key, all.KVs[i].Key, "key order")
	}
	sub, err := s.List(ctx, "a/", kv.ListOptions{})
	require.NoError(t, err)
	var got []string
	for _, p := range sub.KVs {
		got = append(got, p.Key)
	}
	require.Equal(t, []string{"a/", "a/b/c", "a/\xff"}, got, "byte order: 0xff sorts last")
	ff, err := s.List(ctx, "\xff", kv.ListOptions{})
	require.NoError(t, err)
	require.Len(t, ff.KVs, 1)

	// Pages of one key at a time walk every key, odd ones included.
	var n int
	opts := kv.ListOptions{Limit: 1}
	for {
		p, err := s.List(ctx, "", opts)
		require.NoError(t, err)
		n += len(p.KVs)
		if p.Continue == "" {
			break
		}
		opts.Continue, opts.Revision = p.Continue, p.Revision
	}
	require.Equal(t, len(keys), n)
}

// Watch: "streams the changes under
// prefix with revisions strictly greater than fromRevision, in revision
// order"; "For an EventDelete it carries the key, the deleting revision as
// ModRevision, no value and CreateRevision 0"; Prev "for a create it is the
// zero KeyValue"; "When writes outside prefix advance the store revision,
// the watch sends a Progress event".
func TestBlackbox51WatchDeliversEventsAndProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := memstore.New()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		before := put51(t, s, "w/before", "0") // 1, not seen by a watch from it
		ch, err := s.Watch(ctx, "w/", before)
		require.NoError(t, err)
		put51(t, s, "w/a", "1")                                              // 2
		put51(t, s, "w/a", "2")                                              // 3
		_, err = s.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: "w/a"}) // 4
		require.NoError(t, err)
		put51(t, s, "x/outside", "x") // 5
		synctest.Wait()

		var evs []kv.Event
		for len(ch) > 0 {
			evs = append(evs, <-ch)
		}
		require.Len(t, evs, 4)
		require.Equal(t, kv.Event{Type: kv.EventPut, Revision: 2,
			KV: kv.KeyValue{Key: "w/a", Value: []byte("1"), CreateRevision: 2, ModRevision: 2}}, evs[0])
		require.Equal(t, kv.EventPut, evs[1].Type)
		require.Equal(t, "1", string(evs[1].Prev.Value))
		require.Equal(t, kv.Event{Type: kv.EventDelete, Revision: 4,
			KV:   kv.KeyValue{Key: "w/a", ModRevision: 4},
			Prev: kv.KeyValue{Key: "w/a", Value: []byte("2"), CreateRevision: 2, ModRevision: 3}}, evs[2])
		require.True(t, evs[3].Progress)
		require.EqualValues(t, 5, evs[3].Revision)

		// From a past revision: strictly after it.
		past, err := s.Watch(ctx, "w/", 2)
		require.NoError(t, err)
		synctest.Wait()
		ev := <-past
		require.EqualValues(t, 3, ev.Revision)

		// From the future: waits for new writes.
		future, err := s.Watch(ctx, "w/", 100)
		require.NoError(t, err)
		synctest.Wait()
		for len(future) > 0 {
			ev := <-future
			require.True(t, ev.Progress, "nothing under the prefix before the revision: %+v", ev)
		}

		cancel()
		synctest.Wait()
		for _, c := range []<-chan kv.Event{ch, past, future} {
			for ev := range c {
				require.NoError(t, ev.Err, "on ctx's end the channel is closed without an error event")
			}
		}
	})
}

// Watch: "a negative Limit or revision give an error wrapping ErrInvalid."
func TestBlackbox51WatchNegativeRevision(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := memstore.New()
		ch, err := s.Watch(t.Context(), "", -1)
		require.ErrorIs(t, err, kv.ErrInvalid)
		require.Nil(t, ch)
	})
}

// Compact: "afterwards a List pinned to a revision below rev, or a Watch
// from a revision below rev-1, fails with ErrExpired, including a running
// watch that has not yet read that far. Compacting to a revision already
// compacted is a no-op; one above the current revision is an error wrapping
// store.ErrInvalid."
func TestBlackbox51CompactExpiresOldRevisions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := memstore.New(memstore.WithWatchBuffer(1))
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		for i := range 10 {
			put51(t, s, fmt.Sprintf("c/%d", i), "v")
		}
		slow, err := s.Watch(ctx, "c/", 1) // will not read past its buffer of 1
		require.NoError(t, err)
		synctest.Wait()

		require.ErrorIs(t, s.Compact(ctx, 11), kv.ErrInvalid)
		require.NoError(t, s.Compact(ctx, 6))
		require.NoError(t, s.Compact(ctx, 6), "already compacted: a no-op")
		require.NoError(t, s.Compact(ctx, 3), "below the compaction: a no-op")

		_, err = s.List(ctx, "c/", kv.ListOptions{Revision: 5})
		require.ErrorIs(t, err, kv.ErrExpired)
		p, err := s.List(ctx, "c/", kv.ListOptions{Revision: 6})
		require.NoError(t, err)
		require.Len(t, p.KVs, 6)

		_, err = s.Watch(ctx, "c/", 5)
		require.NoError(t, err, "a watch from rev-1 is still served")
		old, err := s.Watch(ctx, "c/", 4)
		if err == nil {
			synctest.Wait()
			var last kv.Event
			for ev := range old {
				last = ev
				if ev.Err != nil {
					break
				}
			}
			require.ErrorIs(t, last.Err, kv.ErrExpired)
		} else {
			require.ErrorIs(t, err, kv.ErrExpired)
		}

		var last kv.Event
		for ev := range slow {
			last = ev
			if ev.Err != nil {
				break
			}
		}
		require.ErrorIs(t, last.Err, kv.ErrExpired, "a running watch that had not read that far ends with ErrExpired")
	})
}

// WithHistorySize: "A Watch from, or a List pinned to, a revision more than n
// writes old ends with ErrExpired. Values below 1 mean 1." And WithWatchBuffer:
// "Values below 1 mean 1."
func TestBlackbox51TinyAndNegativeOptions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, n := range []int{-5, 0, 1} {
			s := memstore.New(memstore.WithHistorySize(n), memstore.WithWatchBuffer(n), memstore.WithHistoryBytes(n))
			ctx, cancel := context.WithCancel(t.Context())
			for i := range 5 {
				put51(t, s, "h", fmt.Sprint(i))
			}
			_, err := s.List(ctx, "", kv.ListOptions{Revision: 3})
			require.ErrorIs(t, err, kv.ErrExpired, "n=%d", n)
			p, err := s.List(ctx, "", kv.ListOptions{Revision: 4})
			require.NoError(t, err, "n=%d: one write old is inside a window of 1", n)
			require.Equal(t, "3", string(p.KVs[0].Value))

			ch, err := s.Watch(ctx, "", 4)
			require.NoError(t, err)
			synctest.Wait()
			ev := <-ch
			require.NoError(t, ev.Err)
			require.Equal(t, "4", string(ev.KV.Value))
			require.Equal(t, "3", string(ev.Prev.Value))
			cancel()
			synctest.Wait()
		}
	})
}

// "a receiver that falls WithHistorySize writes behind gets a final
// ErrExpired event"; "the events before it are valid"; "A watch never
// blocks writers and never silently skips an event".
func TestBlackbox51SlowWatcherExpiresWithoutSkipping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := memstore.New(memstore.WithHistorySize(8), memstore.WithWatchBuffer(2))
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ch, err := s.Watch(ctx, "", 0)
		require.NoError(t, err)
		for i := range 100 {
			put51(t, s, fmt.Sprintf("k%03d", i), "v") // never blocks
		}
		synctest.Wait()
		var prev int64
		var last kv.Event
		for ev := range ch {
			last = ev
			if ev.Err != nil {
				break
			}
			require.Equal(t, prev+1, ev.Revision, "no event skipped before the error")
			prev = ev.Revision
		}
		require.ErrorIs(t, last.Err, kv.ErrExpired)
	})
}

// "A Store is safe for concurrent use": writers, readers, listers and
// watchers at once; every watcher sees every write under its prefix, in
// revision order, and the final revision counts every write.
func TestBlackbox51ConcurrentUse(t *testing.T) {
	s := memstore.New()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	const writers, each = 4, 200
	ch, err := s.Watch(ctx, "p/", 0)
	require.NoError(t, err)
	got := make(chan int, 1)
	go func() {
		n, prev := 0, int64(0)
		for ev := range ch {
			if ev.Err != nil {
				break
			}
			if ev.Progress {
				continue
			}
			if ev.Revision <= prev {
				n = -1 << 30
			}
			prev = ev.Revision
			n++
			if n == writers*each {
				break
			}
		}
		got <- n
	}()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				key := fmt.Sprintf("p/%d/%d", w, i%7)
				for {
					cur, err := s.Get(ctx, key)
					var conds []kv.Cond
					if err == nil {
						conds = []kv.Cond{{Key: key, Target: kv.ModRevision, Revision: cur.ModRevision}}
					} else {
						conds = []kv.Cond{{Key: key, Target: kv.CreateRevision}}
					}
					_, err = s.Txn(ctx, conds, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(fmt.Sprint(i))})
					if err == nil {
						break
					}
					if !assert.ErrorIs(t, err, kv.ErrCondFailed) {
						return
					}
				}
				_, _ = s.List(ctx, "p/", kv.ListOptions{Limit: 2})
				put51(t, s, fmt.Sprintf("q/%d", w), "noise")
			}
		})
	}
	wg.Wait()
	select {
	case n := <-got:
		require.Equal(t, writers*each, n, "every write under p/, in order")
	case <-time.After(time.Minute):
		t.Fatal("watcher did not see every write")
	}
	require.EqualValues(t, 2*writers*each, s.Revision())
	st := s.Stats()
	require.EqualValues(t, 1, st.Watches)
	require.GreaterOrEqual(t, st.Txns, int64(2*writers*each))
}

// Stats: "each call counts once, whether or not it succeeded"; Sub "returns
// the calls made between an earlier snapshot and s".
func TestBlackbox51StatsCountFailedCallsToo(t *testing.T) {
	s := memstore.New()
	ctx := t.Context()
	before := s.Stats()
	_, _ = s.Get(ctx, "absent")
	_, _ = s.Get(ctx, "")
	_, _ = s.List(ctx, "", kv.ListOptions{Limit: -1})
	_, _ = s.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: "absent"})
	_, _ = s.Txn(ctx, nil, kv.Write{})
	ch, err := s.Watch(ctx, "", -1)
	if err == nil {
		t.Fatal("a negative revision must be refused")
	}
	_ = ch
	require.Equal(t, memstore.Stats{Gets: 2, Lists: 1, Txns: 2, Watches: 1}, s.Stats().Sub(before))
}

// Values: nil and empty values are values; Get returns a key whose value is
// empty, not ErrNotFound.
func TestBlackbox51EmptyValues(t *testing.T) {
	s := memstore.New()
	ctx := t.Context()
	_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "nil"})
	require.NoError(t, err)
	_, err = s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "empty", Value: []byte{}, Owned: true})
	require.NoError(t, err)
	for _, k := range []string{"nil", "empty"} {
		kvp, err := s.Get(ctx, k)
		require.NoError(t, err)
		require.Empty(t, kvp.Value)
	}
	_, err = s.Txn(ctx, []kv.Cond{{Key: "nil", Target: kv.CreateRevision, Revision: 1}},
		kv.Write{Kind: kv.WriteDelete, Key: "nil"})
	require.NoError(t, err, "an empty-valued key exists")
	require.True(t, bytes.Equal(nil, []byte{}))
}
