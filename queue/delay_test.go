package queue_test

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/internal/goroutines"
	"github.com/steady-go/steady/queue"
	"github.com/stretchr/testify/require"
)

func TestDelayedKeyBecomesReadyAfterItsDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		start := time.Now()
		q.AddAfter("a", 3*time.Second)
		require.Equal(t, 0, q.Len())
		k, ok := q.Get(context.Background()) // blocks until the timer fires
		require.True(t, ok)
		require.Equal(t, "a", k)
		require.Equal(t, 3*time.Second, time.Since(start))
	})
}

func TestBlockedGetWakesForAnEarlierDelayAddedLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		start := time.Now()
		q.AddAfter("late", time.Hour)
		got := make(chan string)
		go func() {
			k, _ := q.Get(context.Background())
			got <- k
		}()
		synctest.Wait() // the Get blocks with the timer set for an hour
		q.AddAfter("soon", time.Second)
		require.Equal(t, "soon", <-got)
		require.Equal(t, time.Second, time.Since(start))
	})
}

func TestBlockedGetWakesForTheFirstDelayEver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		start := time.Now()
		got := make(chan string)
		go func() {
			k, _ := q.Get(context.Background())
			got <- k
		}()
		synctest.Wait() // blocked with no timer at all
		q.AddAfter("a", 2*time.Second)
		require.Equal(t, "a", <-got)
		require.Equal(t, 2*time.Second, time.Since(start))
	})
}

func TestDelayedKeyKeepsItsEarliestReadyTime(t *testing.T) {
	tests := []struct {
		name   string
		delays []time.Duration
		want   time.Duration
	}{
		{"later delay ignored", []time.Duration{time.Second, time.Minute}, time.Second},
		{"earlier delay wins", []time.Duration{time.Minute, time.Second}, time.Second},
		{"equal delay", []time.Duration{time.Second, time.Second}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := queue.New[string]()
				defer q.ShutDown()
				start := time.Now()
				for _, d := range tt.delays {
					q.AddAfter("a", d)
				}
				require.Equal(t, queue.KeyState{Delayed: true, ReadyAt: start.Add(tt.want)}, q.State("a"))
				time.Sleep(tt.want - time.Nanosecond)
				requireEmpty(t, q)
				time.Sleep(time.Nanosecond)
				require.Equal(t, []string{"a"}, drain(q), "ready once, at its earliest time")
				time.Sleep(time.Hour)
				requireEmpty(t, q)
			})
		})
	}
}

func TestAddAfterOfAReadyKeyChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		q.Add("a")
		q.AddLow("b")
		q.AddAfter("a", time.Second)
		q.AddAfter("b", time.Second)
		require.Equal(t, queue.KeyState{Queued: true}, q.State("a"))
		require.Equal(t, queue.KeyState{Queued: true, Priority: queue.Low}, q.State("b"))
		require.Equal(t, []string{"a", "b"}, drain(q))
		time.Sleep(time.Hour)
		requireEmpty(t, q)
	})
}

func TestNonPositiveDelayIsAnAdd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		q.AddAfter("zero", 0)
		q.AddAfter("negative", -time.Second)
		require.Equal(t, []string{"zero", "negative"}, drain(q))
	})
}

func TestNormalAddOfAWaitingKeyMakesItReadyNowAndItRunsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		q.AddAfter("a", time.Second)
		q.Add("a")
		require.Equal(t, queue.KeyState{Queued: true}, q.State("a"))
		require.Equal(t, []string{"a"}, drain(q))
		time.Sleep(time.Hour) // the old delay must not fire a second run
		requireEmpty(t, q)
	})
}

func TestNormalAddOfAWaitingKeyThatIsProcessingRerunsOnceAtDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		q.Add("a")
		require.Equal(t, "a", mustGet(t, q))
		q.AddAfter("a", time.Second)
		q.Add("a")
		require.Equal(t, queue.KeyState{Processing: true, Dirty: true}, q.State("a"))
		q.Done("a")
		require.Equal(t, []string{"a"}, drain(q))
		time.Sleep(time.Hour)
		requireEmpty(t, q)
	})
}

func TestDelayThatEndsWhileProcessingRerunsAtDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		q.Add("a")
		require.Equal(t, "a", mustGet(t, q))
		q.AddAfter("a", time.Second)
		require.True(t, q.State("a").Delayed)
		time.Sleep(time.Second)
		require.Equal(t, queue.KeyState{Processing: true, Dirty: true}, q.State("a"))
		requireEmpty(t, q)
		q.Done("a")
		require.Equal(t, []string{"a"}, drain(q))
	})
}

func TestDelayedKeyProcessingWhenDoneStaysDelayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		q.Add("a")
		require.Equal(t, "a", mustGet(t, q))
		q.AddAfter("a", time.Second) // a retry scheduled before Done
		q.Done("a")
		require.Equal(t, queue.KeyState{Delayed: true, ReadyAt: time.Now().Add(time.Second)}, q.State("a"))
		time.Sleep(time.Second)
		require.Equal(t, []string{"a"}, drain(q))
	})
}

func TestDelayedKeysComeOutInReadyTimeOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[int]()
		defer q.ShutDown()
		for i := range 100 {
			q.AddAfter(i, time.Duration(100-i)*time.Millisecond) // 99 first
		}
		q.AddAfter(1000, time.Millisecond)   // ties with 99 and comes after it
		q.AddAfter(50, 500*time.Millisecond) // later than its 50ms: ignored
		var got []int
		for range 101 {
			k, ok := q.Get(context.Background())
			require.True(t, ok)
			q.Done(k)
			got = append(got, k)
		}
		want := []int{99, 1000}
		for i := 98; i >= 0; i-- {
			want = append(want, i)
		}
		require.Equal(t, want, got)
	})
}

func TestDelaysUseOneTimerAndNoGoroutinePerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[int]()
		defer q.ShutDown()
		for i := range 1000 {
			q.AddAfter(i, time.Duration(i+1)*time.Millisecond)
		}
		require.Zero(t, queueGoroutines(), "no goroutine per delayed key")
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 250 {
					k, _ := q.Get(context.Background())
					q.Done(k)
				}
			})
		}
		wg.Wait()
		require.Equal(t, 0, q.Len())
		require.Zero(t, queueGoroutines(), "no goroutine left behind")
	})
}

// queueGoroutines counts the goroutines running code of package queue. It
// looks at stacks rather than runtime.NumGoroutine, which also counts
// goroutines of earlier tests that are still winding down.
func queueGoroutines() int {
	return goroutines.Count("github.com/steady-go/steady/queue.")
}

func TestAddAfterAllocatesNothingInSteadyState(t *testing.T) {
	q := queue.New[string]()
	defer q.ShutDown()
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "k" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	ctx := context.Background()
	cycle := func() {
		for i, k := range keys {
			q.AddAfter(k, time.Hour+time.Duration(i))
		}
		for i, k := range keys {
			q.AddAfter(k, time.Duration(len(keys)-i)) // earlier: moves up
		}
		for _, k := range keys {
			q.Add(k) // ready now
		}
		for range keys {
			k, _ := q.Get(ctx)
			q.Done(k)
		}
	}
	cycle()
	require.Zero(t, testing.AllocsPerRun(10, cycle))
}

func TestAddRateLimitedUsesTheLimiterAndForgetResetsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &countingLimiter[string]{}
		q := queue.NewRateLimited[string](l)
		defer q.ShutDown()
		start := time.Now()
		for want := 1; want <= 3; want++ {
			q.AddRateLimited("a")
			require.Equal(t, want, q.NumRequeues("a"))
			require.Equal(t, queue.KeyState{Delayed: true, ReadyAt: time.Now().Add(time.Duration(want) * time.Second)}, q.State("a"))
			k, ok := q.Get(context.Background())
			require.True(t, ok)
			q.Done(k)
		}
		require.Equal(t, (1+2+3)*time.Second, time.Since(start), "delays grew 1s, 2s, 3s")
		q.Forget("a")
		require.Equal(t, 0, q.NumRequeues("a"))
		q.AddRateLimited("a")
		require.Equal(t, time.Now().Add(time.Second), q.State("a").ReadyAt, "back to the first delay")
	})
}

func TestDefaultRateLimiterBacksOffAndForgets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		require.Equal(t, 0, q.NumRequeues("a"))
		q.Forget("a") // before any limiter exists: nothing to do
		var delays []time.Duration
		for range 4 {
			q.AddRateLimited("a")
			delays = append(delays, time.Until(q.State("a").ReadyAt))
			k, _ := q.Get(context.Background())
			q.Done(k)
		}
		require.Equal(t, 4, q.NumRequeues("a"))
		for i, d := range delays {
			base := 10 * time.Millisecond << i
			require.InDelta(t, float64(base), float64(d), 0.2*float64(base), "retry %d", i)
		}
		q.Forget("a")
		require.Equal(t, 0, q.NumRequeues("a"))
	})
}

// countingLimiter delays a key by one second per failure since Forget.
type countingLimiter[K comparable] struct {
	mu sync.Mutex
	n  map[K]int
}

func (l *countingLimiter[K]) When(k K) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == nil {
		l.n = map[K]int{}
	}
	l.n[k]++
	return time.Duration(l.n[k]) * time.Second
}

func (l *countingLimiter[K]) Forget(k K) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.n, k)
}

func (l *countingLimiter[K]) NumRequeues(k K) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[k]
}

func TestManyDueKeysComeOutInReadyTimeOrderAndTheRestStayDelayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[int]()
		defer q.ShutDown()
		r := rand.New(rand.NewPCG(7, 7))
		type entry struct {
			key int
			at  time.Duration
		}
		var want []entry
		for i := range 3000 {
			d := time.Duration(1+r.IntN(1000)) * time.Millisecond // many ties
			q.AddAfter(i, d)
			want = append(want, entry{i, d})
		}
		// Ready time first; among equal times, the order of the adds.
		slices.SortStableFunc(want, func(a, b entry) int { return cmp.Compare(a.at, b.at) })

		time.Sleep(500 * time.Millisecond) // about half are due, far more than are popped one by one
		var got []entry
		for _, k := range drain(q) {
			got = append(got, entry{k, 0})
		}
		require.Greater(t, len(got), 1000)
		require.Less(t, len(got), 2000)
		for len(got) < 3000 { // the rest, a few at a time, popped one by one
			time.Sleep(time.Millisecond)
			for _, k := range drain(q) {
				got = append(got, entry{k, 0})
			}
		}
		require.Len(t, got, 3000)
		for i := range want {
			require.Equal(t, want[i].key, got[i].key, "position %d", i)
		}
	})
}

func TestOwnFailureCountsOutliveDoneAndShutDownAndForgetDropsThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := backoff.Policy{Base: time.Second, Factor: 2, Cap: time.Minute}
		q := queue.New[string](queue.WithBackoff(p))
		ctx := context.Background()

		q.AddRateLimited("a")
		require.Equal(t, queue.KeyState{Delayed: true, ReadyAt: time.Now().Add(time.Second)}, q.State("a"))
		time.Sleep(time.Second)
		k, _ := q.Get(ctx)
		q.Done(k)
		require.True(t, q.State("a").Idle(), "done and not delayed: nothing queued")
		require.Equal(t, 1, q.NumRequeues("a"), "the count outlives Done")

		q.AddRateLimited("a")
		require.Equal(t, time.Now().Add(2*time.Second), q.State("a").ReadyAt, "second failure: p.Delay(1)")
		time.Sleep(2 * time.Second)
		k, _ = q.Get(ctx)
		q.Done(k)

		q.AddLow("a") // a key held only for its count is not queued: AddLow queues it
		require.Equal(t, queue.KeyState{Queued: true, Priority: queue.Low}, q.State("a"))
		k, _ = q.Get(ctx)
		q.Done(k)
		q.AddAfter("a", time.Second) // and AddAfter delays it
		require.Equal(t, queue.KeyState{Delayed: true, ReadyAt: time.Now().Add(time.Second)}, q.State("a"))
		time.Sleep(time.Second)
		k, _ = q.Get(ctx)
		q.Done(k)
		require.Equal(t, 2, q.NumRequeues("a"))

		q.AddRateLimited("b")
		q.ShutDown()
		require.True(t, q.State("b").Idle(), "ShutDown drops the delayed key")
		require.Equal(t, 1, q.NumRequeues("b"), "but not its count")
		q.AddRateLimited("b")
		require.Equal(t, 1, q.NumRequeues("b"), "after ShutDown no failure is recorded")

		q.Forget("a")
		q.Forget("b")
		require.Zero(t, q.NumRequeues("a"))
		require.Zero(t, q.NumRequeues("b"))
		q.Forget("never")
		require.Zero(t, q.NumRequeues("never"))
	})
}

func TestOwnFailureCountsCostNoAllocations(t *testing.T) {
	q := queue.New[string](queue.WithBackoff(backoff.DefaultPolicy()))
	defer q.ShutDown()
	keys := []string{"a", "b", "c", "d"}
	cycle := func() {
		for _, k := range keys {
			q.AddRateLimited(k)
			q.Forget(k)
		}
		_ = q.NumRequeues("a")
	}
	cycle()
	require.Zero(t, testing.AllocsPerRun(100, cycle))
}
