package queue_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/queue"
)

// The package doc: adding a key that a worker is processing makes it run
// once more after Done, never concurrently, with events (Add) alone.
// (TestAddsWhileProcessingGiveExactlyOneRerunAfterDone mixes in AddLow,
// whose own rerun would hide a queue that dropped those Adds.)
func TestAddsAloneWhileProcessingGiveExactlyOneRerunAfterDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		q.Add("a")
		require.Equal(t, "a", mustGet(t, q))
		for range 10_000 {
			q.Add("a")
		}
		requireEmpty(t, q)
		q.Done("a")
		require.Equal(t, []string{"a"}, drain(q), "one rerun, not 10,000, not none")
		require.True(t, q.State("a").Idle())
	})
}

// Duplicate Adds from many goroutines at once, racing workers that take and
// finish the same keys, lose no update: every Add is followed by a run that
// starts after it. This is the promise a duplicate Add that finds its key
// already queued relies on when it returns without queuing anything (the
// queue's read-locked fast path): the Get that takes the key comes after
// it. An Add that finds its key processing must still make it rerun.
//
// Adders bump a key's version before each Add and do not otherwise
// synchronise with the workers; a worker records the version it sees when
// it starts a run and yields mid-run, so that Adds land while keys are
// processing. Once the adders are done and the workers have drained the
// queue, each key's last run must have seen its last version. A queue whose
// Add returned when it found its key processing failed this test in 8 runs
// of 8 under -race (and in every run without), within its 20 rounds.
func TestDuplicateAddsRacingWorkersLoseNoUpdate(t *testing.T) {
	const keys, adders, workers, addsEach = 64, 4, 4, 4000
	for round := range 20 {
		q := queue.New[int]()
		var version, seen [keys]atomic.Int64
		var running sync.WaitGroup
		for range workers {
			running.Go(func() {
				for {
					k, ok := q.Get(context.Background())
					if !ok {
						return
					}
					seen[k].Store(version[k].Load())
					runtime.Gosched()
					q.Done(k)
				}
			})
		}
		var adding sync.WaitGroup
		for a := range adders {
			adding.Go(func() {
				for j := range addsEach {
					k := (j + a*keys/adders) % keys
					version[k].Add(1)
					q.Add(k)
				}
			})
		}
		adding.Wait()
		q.ShutDown() // workers drain what is queued, reruns included
		running.Wait()
		for k := range keys {
			require.Equal(t, version[k].Load(), seen[k].Load(), "round %d: key %d's last run missed an Add", round, k)
		}
	}
}

// Done finds its key among the keys processing however many there are,
// and in whatever order they are handed back: each Done ends its own key
// (rerunning it if it was added meanwhile) and no other.
func TestDoneInAnyOrderEndsOnlyItsOwnKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for n := 1; n <= 10; n++ {
			q := queue.New[int]()
			for k := range n {
				q.Add(k)
			}
			for range n {
				mustGet(t, q)
			}
			for k := 0; k < n; k += 3 {
				q.Add(k) // due to rerun
			}
			q.Done(n) // never handed out
			order := rand.New(rand.NewPCG(uint64(n), 1)).Perm(n)
			for i, k := range order {
				q.Done(k)
				q.Done(k) // a second Done does nothing
				want := queue.KeyState{}
				if k%3 == 0 {
					want = queue.KeyState{Queued: true}
				}
				require.Equal(t, want, q.State(k), "n=%d: key %d after its Done", n, k)
				for _, other := range order[i+1:] {
					require.True(t, q.State(other).Processing, "n=%d: key %d after Done(%d)", n, other, k)
				}
			}
			require.Equal(t, (n+2)/3, q.Len())
			q.ShutDown()
		}
	})
}
