package storetest

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

var concurrencyTests = []test{
	{"CASIncrementsLoseNothing", testCASIncrements},
	{"WritersAndWatchers", testWritersAndWatchers},
	{"PinnedListsUnderWrites", testPinnedListsUnderWrites},
}

// testCASIncrements has goroutines increment one counter by
// read-modify-write, retrying on a failed cond: every increment must land.
func testCASIncrements(t *testing.T, b kv.Backend) {
	const workers, each = 8, 50
	ctx := t.Context()
	var (
		mu   sync.Mutex
		revs []int64
	)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				for {
					n, cond := 0, kv.Cond{Key: "counter", Target: kv.CreateRevision}
					kvp, err := b.Get(ctx, "counter")
					switch {
					case errors.Is(err, store.ErrNotFound):
					case err != nil:
						t.Error(err)
						return
					default:
						if n, err = strconv.Atoi(string(kvp.Value)); err != nil {
							t.Error(err)
							return
						}
						cond = kv.Cond{Key: "counter", Target: kv.ModRevision, Revision: kvp.ModRevision}
					}
					runtime.Gosched() // widen the read-to-write window, as real work would
					rev, err := b.Txn(ctx, []kv.Cond{cond}, kv.Write{Kind: kv.WritePut, Key: "counter", Value: []byte(strconv.Itoa(n + 1))})
					if errors.Is(err, kv.ErrCondFailed) {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					revs = append(revs, rev)
					mu.Unlock()
					break
				}
			}
		})
	}
	wg.Wait()
	require.Equal(t, strconv.Itoa(workers*each), string(get(t, b, "counter").Value), "no increment is lost")
	slices.Sort(revs)
	require.Len(t, slices.Compact(revs), workers*each, "every successful Txn has a revision of its own")
}

// testWritersAndWatchers runs writers and watchers at once: every watcher
// must see every written revision exactly once, in order. A watcher that
// gets ErrExpired resumes from the last revision it saw, as clients do. A
// last write of c/end, after the writers are done, tells the watchers to
// stop, so a lost event fails the comparison instead of a wait.
func testWritersAndWatchers(t *testing.T, b kv.Backend) {
	const writers, each, watchers = 4, 50, 3
	ctx := t.Context()
	from := currentRevision(t, b)

	seen := make([][]int64, watchers)
	var watching sync.WaitGroup
	chans := make([]<-chan kv.Event, watchers)
	for i := range watchers {
		chans[i] = watch(t, b, "c/", from)
	}
	for i := range watchers {
		watching.Go(func() {
			ch, last, resumedAt := chans[i], from, int64(-1)
			for {
				ev, ok := recvWithin(ch, WaitTimeout)
				if !ok {
					t.Errorf("watcher %d: channel closed, or no event within %v, after %d events", i, WaitTimeout, len(seen[i]))
					return
				}
				switch {
				case errors.Is(ev.Err, store.ErrExpired):
					if resumedAt == last {
						t.Errorf("watcher %d: a watch from %d expired before delivering anything: history shorter than %d writes?",
							i, last, writers*each)
						return
					}
					resumedAt = last
					var err error
					if ch, err = b.Watch(ctx, "c/", last); err != nil {
						t.Error(err)
						return
					}
				case ev.Err != nil:
					t.Errorf("watcher %d: %v", i, ev.Err)
					return
				case ev.Progress:
				case ev.KV.Key == "c/end":
					return
				default:
					seen[i] = append(seen[i], ev.Revision)
					last = ev.Revision
				}
			}
		})
	}

	var (
		mu      sync.Mutex
		written []int64
	)
	var writing sync.WaitGroup
	for w := range writers {
		writing.Go(func() {
			for i := range each {
				rev, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("c/%d/%d", w, i%3), Value: []byte("v")})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				written = append(written, rev)
				mu.Unlock()
			}
		})
	}
	writing.Wait()
	put(t, b, "c/end", "")
	watching.Wait()
	slices.Sort(written)
	for i := range watchers {
		require.Equal(t, written, seen[i], "watcher %d sees every revision once, in order", i)
	}
}

// testPinnedListsUnderWrites pages through listings while a writer updates
// the keys: every listing must be the exact state at its revision.
func testPinnedListsUnderWrites(t *testing.T, b kv.Backend) {
	const nkeys, writes = 12, 150
	ctx := t.Context()
	// history[key] lists the revisions at which key was written, in order.
	history := make(map[string][]int64)
	for i := range nkeys {
		k := fmt.Sprintf("s/%02d", i)
		history[k] = []int64{put(t, b, k, "0")}
	}

	var (
		mu   sync.Mutex
		done bool
	)
	log := make([]struct {
		key string
		rev int64
	}, 0, writes)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer func() { mu.Lock(); done = true; mu.Unlock() }()
		for i := range writes {
			k := fmt.Sprintf("s/%02d", i%nkeys)
			rev, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: k, Value: []byte(strconv.Itoa(i))})
			if err != nil {
				t.Error(err)
				return
			}
			log = append(log, struct {
				key string
				rev int64
			}{k, rev})
			runtime.Gosched() // let the lister interleave
		}
	})

	type snapshot struct {
		rev int64
		kvs []kv.KeyValue
	}
	var snaps []snapshot
	for {
		mu.Lock()
		finished := done
		mu.Unlock()
		var s snapshot
		opts := kv.ListOptions{Limit: 5}
		for {
			res, err := b.List(ctx, "s/", opts)
			if errors.Is(err, store.ErrExpired) {
				s, opts = snapshot{}, kv.ListOptions{Limit: 5} // history moved on; list again
				continue
			}
			require.NoError(t, err)
			s.rev = res.Revision
			s.kvs = append(s.kvs, res.KVs...)
			if res.Continue == "" {
				break
			}
			opts.Continue, opts.Revision = res.Continue, res.Revision
		}
		snaps = append(snaps, s)
		if finished {
			break
		}
	}
	wg.Wait()

	for _, e := range log {
		history[e.key] = append(history[e.key], e.rev)
	}
	for _, s := range snaps {
		require.Len(t, s.kvs, nkeys, "listing at %d has every key once", s.rev)
		for _, kvp := range s.kvs {
			revs := history[kvp.Key]
			i, _ := slices.BinarySearch(revs, s.rev+1)
			require.Positive(t, i)
			require.Equal(t, revs[i-1], kvp.ModRevision, "listing at %d shows %q as of its last write at or before %d", s.rev, kvp.Key, s.rev)
		}
	}
}
