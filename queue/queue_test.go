package queue_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/queue"
	"github.com/stretchr/testify/require"
)

func TestKeysAreDeduplicated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		for range 3 {
			q.Add("a")
			q.Add("b")
		}
		require.Equal(t, 2, q.Len())
		require.Equal(t, []string{"a", "b"}, drain(q))
	})
}

func TestOneWorkerHoldsAKeyAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		q.Add("a")
		require.Equal(t, "a", mustGet(t, q))
		q.Add("a") // while processing
		requireEmpty(t, q)
		require.Equal(t, queue.KeyState{Processing: true, Dirty: true}, q.State("a"))

		// A second worker blocks until the first hands the key back.
		got := make(chan string)
		go func() {
			k, _ := q.Get(context.Background())
			got <- k
		}()
		synctest.Wait()
		select {
		case k := <-got:
			t.Fatalf("second worker got %q while the first held it", k)
		default:
		}
		q.Done("a")
		require.Equal(t, "a", <-got)
		q.Done("a")
	})
}

func TestConcurrentWorkersNeverShareAKey(t *testing.T) {
	q := queue.New[int]()
	var (
		mu     sync.Mutex
		held   = map[int]bool{}
		wg     sync.WaitGroup
		shared bool
	)
	for range 4 {
		wg.Go(func() {
			for {
				k, ok := q.Get(context.Background())
				if !ok {
					return
				}
				mu.Lock()
				shared = shared || held[k]
				held[k] = true
				mu.Unlock()
				q.Add(k % 7) // adds while processing, some to the held key
				mu.Lock()
				held[k] = false
				mu.Unlock()
				q.Done(k)
			}
		})
	}
	for i := range 2000 {
		q.Add(i % 13)
	}
	require.NoError(t, q.ShutDownWithDrain(context.Background()))
	wg.Wait()
	require.False(t, shared, "a key was handed to two workers at once")
}

func TestAddsWhileProcessingGiveExactlyOneRerunAfterDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		q.Add("a")
		require.Equal(t, "a", mustGet(t, q))
		for range 5 {
			q.Add("a")
			q.AddLow("a")
		}
		requireEmpty(t, q)
		q.Done("a")
		require.Equal(t, []string{"a"}, drain(q), "one rerun, not five")
		require.True(t, q.State("a").Idle())
	})
}

func TestDoneOfAKeyNeverHandedOutChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		q.Done("never-added")
		require.True(t, q.State("never-added").Idle())

		q.Add("queued")
		q.AddAfter("delayed", time.Second)
		q.Done("queued")
		q.Done("delayed")
		require.Equal(t, queue.KeyState{Queued: true}, q.State("queued"))
		require.Equal(t, queue.KeyState{Delayed: true, ReadyAt: time.Now().Add(time.Second)}, q.State("delayed"))

		// Done twice: the second changes nothing either.
		require.Equal(t, "queued", mustGet(t, q))
		q.Done("queued")
		q.Done("queued")
		require.True(t, q.State("queued").Idle())
		require.Equal(t, 0, q.Len())
	})
}

func TestGetReturnsFalseWhenCtxIsDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()

		// Blocked on an empty queue: returns when ctx ends.
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan bool)
		go func() {
			_, ok := q.Get(ctx)
			done <- ok
		}()
		synctest.Wait()
		cancel()
		require.False(t, <-done)

		// Already done: no key is taken even though one is ready.
		q.Add("a")
		_, ok := q.Get(ctx)
		require.False(t, ok)
		require.Equal(t, queue.KeyState{Queued: true}, q.State("a"))
	})
}

func TestNewWorksWithNoOptionsAndAnyComparableKey(t *testing.T) {
	type key struct {
		kind, name string
	}
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[key]()
		defer q.ShutDown()
		q.Add(key{"Pod", "a"})
		q.Add(key{"Pod", "a"})
		q.Add(key{"Node", "a"})
		require.Equal(t, []key{{"Pod", "a"}, {"Node", "a"}}, drain(q))
		require.Equal(t, "", q.Name())
	})
}

func TestManyKeysSurviveTableGrowthAndRemoval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[int]()
		defer q.ShutDown()
		const n = 5000
		for i := range n {
			q.Add(i)
		}
		for i := range n {
			q.Add(i) // all deduplicated after growth
		}
		require.Equal(t, n, q.Len())
		// Take half, then re-add everything: only the taken half is new.
		for range n / 2 {
			q.Done(mustGet(t, q))
		}
		for i := range n {
			q.Add(i)
		}
		got := drain(q)
		require.Len(t, got, n)
		seen := map[int]bool{}
		for _, k := range got {
			require.False(t, seen[k], "key %d handed out twice", k)
			seen[k] = true
		}
	})
}

// TestNoAddIsLostUnderConcurrency checks the property deduplication must
// keep: every Add is followed by a run that starts after it. Adders bump a
// key's version before adding it; a worker records the version it saw when
// it started. Once everything is quiet, every key's last run must have seen
// its final version.
func TestNoAddIsLostUnderConcurrency(t *testing.T) {
	const keys, adders, addsEach = 64, 4, 3000
	q := queue.New[string]()
	names := make([]string, keys)
	var (
		mu      sync.Mutex
		version = make([]int, keys)
		seen    = make([]int, keys)
		index   = map[string]int{}
	)
	for i := range names {
		names[i] = "key-" + string(rune('A'+i%26)) + string(rune('a'+i/26))
		index[names[i]] = i
	}
	var workers sync.WaitGroup
	for range 3 {
		workers.Go(func() {
			for {
				k, ok := q.Get(context.Background())
				if !ok {
					return
				}
				mu.Lock()
				seen[index[k]] = version[index[k]]
				mu.Unlock()
				q.Done(k)
			}
		})
	}
	var adds sync.WaitGroup
	for a := range adders {
		adds.Go(func() {
			for j := range addsEach {
				i := (j*7 + a) % keys
				mu.Lock()
				version[i]++
				mu.Unlock()
				if j%5 == 0 {
					q.Add(strings.Clone(names[i])) // equal key, different string data
				} else {
					q.Add(names[i])
				}
			}
		})
	}
	adds.Wait()
	require.NoError(t, q.ShutDownWithDrain(context.Background()))
	workers.Wait()
	require.Equal(t, version, seen, "a key's last run saw every add before it")
}
