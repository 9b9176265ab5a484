package queue_test

// Black-box tests of queue, written from its documentation alone: each test
// quotes the promise it checks.

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/queue"
)

// "A key is queued at most once, however often it is added before a worker
// takes it." "A key taken by Get is never handed to a second worker before
// Done. Adds while it is processing are remembered as one rerun, queued at
// Done."
func TestBlackbox51DedupAndOneRerun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		for range 1000 {
			q.Add("k")
			q.AddLow("k")
			q.AddAfter("k", time.Second)
		}
		require.Equal(t, 1, q.Len())
		k, ok := q.Get(t.Context())
		require.True(t, ok)
		for range 1000 {
			q.Add(k)
		}
		require.Zero(t, q.Len(), "a processing key is not handed out again before Done")
		st := q.State(k)
		require.True(t, st.Processing)
		require.True(t, st.Dirty)
		q.Done(k)
		require.Equal(t, 1, q.Len(), "one rerun, queued at Done")
		k, ok = q.Get(t.Context())
		require.True(t, ok)
		q.Done(k)
		require.True(t, q.State(k).Idle())
	})
}

// "Done of a key that is not processing (never handed out, or already done)
// does nothing." "Forget ... Forgetting a key that never failed does
// nothing." Calling them with keys the queue never held, twice, or after
// ShutDown never panics and changes nothing.
func TestBlackbox51DoneAndForgetMisuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		q.Done("never")
		q.Forget("never")
		q.Add("a")
		q.Done("a") // queued, not processing
		require.Equal(t, queue.KeyState{Queued: true}, q.State("a"))
		k, _ := q.Get(t.Context())
		q.Done(k)
		q.Done(k)
		require.True(t, q.State(k).Idle())
		require.Zero(t, q.NumRequeues(k))
		q.ShutDown()
		q.ShutDown()
		q.Done("a")
		q.Forget("a")
		require.Equal(t, queue.Counts{}, q.Counts())
	})
}

// AddAfter: "If d ≤ 0 it is Add." "If key is already delayed, it keeps the
// earlier of its ready time and now+d."
func TestBlackbox51AddAfterZeroNegativeAndEarliest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[int]()
		defer q.ShutDown()
		q.AddAfter(1, 0)
		q.AddAfter(2, -time.Hour)
		q.AddAfter(3, time.Duration(math.MinInt64))
		require.Equal(t, 3, q.Len())
		require.Zero(t, q.Delayed())

		q.AddAfter(4, time.Hour)
		q.AddAfter(4, time.Minute)
		q.AddAfter(4, 2*time.Hour)
		require.Equal(t, time.Now().Add(time.Minute), q.State(4).ReadyAt)
		for range 3 {
			k, _ := q.Get(t.Context())
			q.Done(k)
		}
		start := time.Now()
		k, ok := q.Get(t.Context())
		require.True(t, ok)
		require.Equal(t, 4, k)
		require.Equal(t, time.Minute, time.Since(start), "ready at the earliest time asked")
		q.Done(k)
	})
}

// Get: "Get returns false, without a key, when ctx is done (checked first,
// so a cancelled worker takes no more keys)".
func TestBlackbox51GetWithEndedCtxTakesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		q.Add("a")
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		for range 100 {
			k, ok := q.Get(ctx)
			require.False(t, ok)
			require.Zero(t, k)
		}
		require.Equal(t, 1, q.Len(), "the key stays for a live worker")
	})
}

// ShutDown: "Later adds of every kind are ignored, and delayed keys are
// dropped. Keys already ready stay: Get keeps handing them out until none is
// left, then returns false, and blocked Gets wake up to do so. Keys
// processing may still be handed back with Done, which queues any rerun
// recorded before ShutDown." AddRateLimited "After ShutDown ... records no
// failure."
func TestBlackbox51ShutDownDrainsReadyKeysOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		q.Add("ready")
		q.Add("busy")
		q.AddAfter("delayed", time.Second)
		busy, _ := q.Get(t.Context())
		if busy != "busy" {
			busy, _ = q.Get(t.Context())
			q.Add("ready") // put "ready" back: Get order is not promised
			// "ready" was taken first; hand it back as processing done.
			q.Done("ready")
		}
		q.Add(busy) // rerun recorded before ShutDown

		blocked := make(chan bool)
		q2 := queue.New[string]()
		go func() {
			_, ok := q2.Get(context.Background())
			blocked <- ok
		}()
		synctest.Wait()
		q2.ShutDown()
		require.False(t, <-blocked, "a blocked Get wakes up and returns false")

		q.ShutDown()
		q.Add("late")
		q.AddLow("late")
		q.AddAfter("late", time.Nanosecond)
		q.AddRateLimited("late")
		require.Zero(t, q.NumRequeues("late"))
		require.Zero(t, q.Delayed(), "delayed keys are dropped")

		var got []string
		for {
			k, ok := q.Get(t.Context())
			if !ok {
				break
			}
			got = append(got, k)
			q.Done(k)
		}
		require.ElementsMatch(t, []string{"ready"}, got)
		q.Done(busy)
		k, ok := q.Get(t.Context())
		require.True(t, ok, "the rerun recorded before ShutDown is queued at Done")
		require.Equal(t, busy, k)
		q.Done(k)
		_, ok = q.Get(t.Context())
		require.False(t, ok)
		time.Sleep(time.Hour)
		_, ok = q.Get(t.Context())
		require.False(t, ok, "the dropped delayed key never comes")
	})
}

// ShutDownWithDrain: "waits until no key is in flight ... It returns nil
// then, or, if ctx is done first, an error that says how many keys were
// still processing and wraps ctx's cause."
func TestBlackbox51ShutDownWithDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		q.Add("a")
		q.Add("b")
		a, _ := q.Get(t.Context())
		b, _ := q.Get(t.Context())
		why := errors.New("deploy")
		ctx, cancel := context.WithCancelCause(t.Context())
		cancel(why)
		err := q.ShutDownWithDrain(ctx)
		require.ErrorIs(t, err, why)
		require.Contains(t, err.Error(), "2")

		go func() {
			time.Sleep(time.Second)
			q.Done(a)
			q.Done(b)
		}()
		require.NoError(t, q.ShutDownWithDrain(t.Context()))
		require.NoError(t, q.ShutDownWithDrain(t.Context()), "again: nothing in flight")
	})
}

// "A key that does not [equal itself] (a NaN float or complex, or a struct,
// array or interface holding one) ... every add ... refuses such a key: it
// is dropped". "A key of an interface type K whose dynamic value cannot be
// compared at all ... is not refused: every method given it panics, as a
// map index with it does."
func TestBlackbox51InterfaceKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[any]()
		defer q.ShutDown()
		for _, nan := range []any{math.NaN(), struct{ f any }{math.NaN()}, [1]any{complex(math.NaN(), 0)}} {
			q.Add(nan)
			q.AddLow(nan)
			q.AddAfter(nan, time.Second)
			q.AddRateLimited(nan)
			q.Done(nan)
			q.Forget(nan)
		}
		require.Equal(t, queue.Counts{}, q.Counts(), "every NaN key was dropped")

		for _, bad := range []any{[]int{1}, map[string]int{}, func() {}, struct{ f any }{[]byte("x")}} {
			for name, call := range map[string]func(){
				"Add": func() { q.Add(bad) }, "AddLow": func() { q.AddLow(bad) },
				"AddAfter":       func() { q.AddAfter(bad, time.Second) },
				"AddRateLimited": func() { q.AddRateLimited(bad) },
				"Done":           func() { q.Done(bad) }, "Forget": func() { q.Forget(bad) },
				"State":       func() { _ = q.State(bad) },
				"NumRequeues": func() { _ = q.NumRequeues(bad) },
			} {
				require.Panics(t, call, "%s(%T)", name, bad)
				_ = q.Counts() // the panic left no lock held
			}
			require.Panics(t, func() { m := map[any]bool{}; m[bad] = true }, "a map index with %T", bad)
		}
		require.Equal(t, queue.Counts{}, q.Counts(), "a panicking add held nothing")
		q.Add(1)
		q.Add("1")
		q.Add(struct{ a, b int }{1, 2})
		require.Equal(t, 3, q.Len(), "comparable keys of different types are different keys")
	})
}

// AddRateLimited: "10ms after the first failure, doubling"; Forget "resets
// key's failure count, so its next AddRateLimited waits the shortest delay
// again"; NumRequeues counts "since it was last forgotten".
func TestBlackbox51RateLimitedBacksOffPerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		wait := func(k string) time.Duration {
			start := time.Now()
			q.AddRateLimited(k)
			got, ok := q.Get(t.Context())
			require.True(t, ok)
			require.Equal(t, k, got)
			q.Done(got)
			return time.Since(start)
		}
		d0, d1, d2 := wait("a"), wait("a"), wait("a")
		require.Equal(t, 3, q.NumRequeues("a"))
		require.Greater(t, d1, d0)
		require.Greater(t, d2, d1)
		other := wait("b")
		require.Less(t, other, d2, "another key's backoff is its own")
		q.Forget("a")
		require.Zero(t, q.NumRequeues("a"))
		require.Less(t, wait("a"), d1, "after Forget the shortest delay again")
	})
}

// "A Queue is safe for concurrent use": many producers and workers; every
// key added is processed at least once after its last add, and never by two
// workers at once.
func TestBlackbox51ConcurrentWorkersNeverShareAKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[int]()
		var (
			mu     sync.Mutex
			active = map[int]bool{}
			seen   = map[int]int{}
			wg     sync.WaitGroup
		)
		ctx, stop := context.WithCancel(t.Context())
		for range 4 {
			wg.Go(func() {
				for {
					k, ok := q.Get(ctx)
					if !ok {
						return
					}
					mu.Lock()
					assert.False(t, active[k], "key %d handed to two workers", k)
					active[k] = true
					mu.Unlock()
					time.Sleep(time.Millisecond)
					mu.Lock()
					active[k] = false
					seen[k]++
					mu.Unlock()
					q.Done(k)
				}
			})
		}
		var producers sync.WaitGroup
		for p := range 4 {
			producers.Go(func() {
				for i := range 200 {
					switch i % 3 {
					case 0:
						q.Add(i % 17)
					case 1:
						q.AddLow(i % 17)
					default:
						q.AddAfter(i%17, time.Duration(p)*time.Millisecond)
					}
				}
			})
		}
		producers.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		require.NoError(t, q.ShutDownWithDrain(t.Context()))
		stop()
		wg.Wait()
		require.Len(t, seen, 17)
		require.Equal(t, queue.Counts{}, q.Counts())
	})
}
