package memstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// No wake-up is lost: watches on overlapping prefixes follow writers that
// write in bursts, from several goroutines, with idle gaps in which every
// watch goes back to waiting (and progress marks leave wake-ups behind).
// Each watch receives every change under its prefix, once and in order,
// and a progress mark up to the last revision.
func TestWatchesMissNoChangeAcrossIdleGaps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := memstore.New(memstore.WithHistorySize(1<<12), memstore.WithWatchBuffer(2))
		prefixes := []string{"", "a/", "b/", "a/1", "c/"}
		type result struct {
			prefix string
			revs   []int64
		}
		results := make(chan result, len(prefixes))
		done := make(chan struct{})
		var final atomicRev
		for _, p := range prefixes {
			ch, err := s.Watch(t.Context(), p, 0)
			require.NoError(t, err)
			go func() {
				var revs []int64
				for ev := range ch {
					require.NoError(t, ev.Err)
					if !ev.Progress {
						revs = append(revs, ev.Revision)
					}
					if last := final.get(); last > 0 && ev.Revision >= last {
						break
					}
				}
				results <- result{p, revs}
				<-done
			}()
		}
		synctest.Wait()
		require.Equal(t, len(prefixes), s.Waiting(), "every idle watch waits")

		keys := []string{"a/1", "a/2", "b/1", "d/1"}
		var mu sync.Mutex
		written := map[int64]string{}
		var wg sync.WaitGroup
		for g := range 3 {
			wg.Go(func() {
				rnd := rand.New(rand.NewPCG(uint64(g), 1))
				for burst := range 40 {
					for range rnd.IntN(4) + 1 {
						k := keys[rnd.IntN(len(keys))]
						rev, err := s.Txn(context.Background(), nil, kv.Write{Kind: kv.WritePut, Key: k, Value: fmt.Append(nil, burst)})
						require.NoError(t, err)
						mu.Lock()
						written[rev] = k
						mu.Unlock()
					}
					time.Sleep(time.Duration(rnd.IntN(3)) * time.Millisecond)
				}
			})
		}
		wg.Wait()
		synctest.Wait()
		require.Equal(t, len(prefixes), s.Waiting(), "after the last write every watch waits again")
		final.set(s.Revision())
		// One more write outside every prefix wakes them all to a progress
		// mark at or past the final revision.
		rev, err := s.Txn(context.Background(), nil, kv.Write{Kind: kv.WritePut, Key: "z", Value: []byte("v")})
		require.NoError(t, err)
		written[rev] = "z"
		for range prefixes {
			r := <-results
			var want []int64
			for rev := int64(1); rev <= s.Revision(); rev++ {
				if k := written[rev]; len(k) >= len(r.prefix) && k[:len(r.prefix)] == r.prefix {
					want = append(want, rev)
				}
			}
			require.Equal(t, want, r.revs, "prefix %q", r.prefix)
		}
		close(done)
	})
}

// A watch that ends leaves the waiting list, so the Store holds on to
// nothing of it until the next write.
func TestEndedWatchLeavesTheWaitingList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := memstore.New()
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := s.Watch(ctx, "", 0)
		require.NoError(t, err)
		other, err := s.Watch(t.Context(), "", 0)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 2, s.Waiting())
		cancel()
		for range ch {
		}
		synctest.Wait()
		require.Equal(t, 1, s.Waiting())
		rev, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("v")})
		require.NoError(t, err)
		require.Equal(t, rev, (<-other).Revision, "the other watch still wakes")
	})
}

type atomicRev struct {
	mu  sync.Mutex
	rev int64
}

func (a *atomicRev) get() int64  { a.mu.Lock(); defer a.mu.Unlock(); return a.rev }
func (a *atomicRev) set(r int64) { a.mu.Lock(); a.rev = r; a.mu.Unlock() }
