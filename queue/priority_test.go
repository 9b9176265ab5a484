package queue_test

import (
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/queue"
	"github.com/stretchr/testify/require"
)

func TestResyncOf100kLowKeysDoesNotDelayANormalAdd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		for i := range 100_000 {
			q.AddLow("resync-" + strconv.Itoa(i))
		}
		q.Add("event")
		require.Equal(t, 100_001, q.Len())
		require.Equal(t, "event", mustGet(t, q), "the normal add goes before the whole resync")
	})
}

func TestWhenBothLevelsAreBackloggedAtLeastOneGetIn16IsLow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		for i := range 1000 {
			q.AddLow("low-" + strconv.Itoa(i))
			q.Add("normal-" + strconv.Itoa(i))
		}
		var lows []int // positions of low keys among the first 320 Gets
		for i := range 320 {
			k := mustGet(t, q)
			q.Done(k)
			if q.State(k).Idle() && k[:3] == "low" {
				lows = append(lows, i)
			}
		}
		require.Len(t, lows, 320/16)
		for i, p := range lows {
			require.Equal(t, 16*i+15, p, "every 16th Get is low, no timestamps needed")
		}
	})
}

func TestLowKeysAreNotStarvedByAContinuousNormalStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[int]()
		defer q.ShutDown()
		q.AddLow(-1)
		next := 0
		for i := range 16 {
			q.Add(next) // always one more normal key waiting
			next++
			k := mustGet(t, q)
			q.Done(k)
			if k == -1 {
				require.Equal(t, 15, i)
				return
			}
		}
		t.Fatal("the low key waited behind 16 normal keys")
	})
}

func TestLowIsServedAloneWhenNoNormalKeyWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		q.AddLow("b")
		q.AddLow("a")
		q.AddLow("b")
		require.Equal(t, []string{"b", "a"}, drain(q), "FIFO and deduplicated")
	})
}

func TestANormalAddOfAKeyQueuedLowMovesItUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		q.AddLow("resync")
		q.Add("first")
		q.Add("resync")
		require.Equal(t, queue.KeyState{Queued: true}, q.State("resync"))
		require.Equal(t, []string{"first", "resync"}, drain(q), "once, at normal priority")
	})
}

func TestAddLowNeverMovesAKeyDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		q.Add("a")
		q.AddLow("a")
		require.Equal(t, queue.KeyState{Queued: true}, q.State("a"))

		require.Equal(t, "a", mustGet(t, q))
		q.Add("a") // rerun due at normal priority
		q.AddLow("a")
		require.Equal(t, queue.KeyState{Processing: true, Dirty: true}, q.State("a"))
		q.Done("a")
		require.Equal(t, queue.KeyState{Queued: true}, q.State("a"))
	})
}

func TestAddsWhileProcessingRerunAtTheHighestPriorityAdded(t *testing.T) {
	tests := []struct {
		name string
		adds []func(*queue.Queue[string])
		want queue.Priority
	}{
		{"low only", []func(*queue.Queue[string]){lowAdd}, queue.Low},
		{"low then normal", []func(*queue.Queue[string]){lowAdd, normalAdd}, queue.Normal},
		{"normal then low", []func(*queue.Queue[string]){normalAdd, lowAdd}, queue.Normal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := queue.New[string]()
				defer q.ShutDown()
				q.Add("a")
				require.Equal(t, "a", mustGet(t, q))
				for _, add := range tt.adds {
					add(q)
				}
				require.Equal(t, queue.KeyState{Processing: true, Dirty: true, Priority: tt.want}, q.State("a"))
				q.Done("a")
				require.Equal(t, queue.KeyState{Queued: true, Priority: tt.want}, q.State("a"))
			})
		})
	}
}

func lowAdd(q *queue.Queue[string])    { q.AddLow("a") }
func normalAdd(q *queue.Queue[string]) { q.Add("a") }

func TestAddLowNeverAdvancesADelayedOrBackedOffKey(t *testing.T) {
	tests := []struct {
		name       string
		processing bool
		delay      func(*queue.Queue[string])
	}{
		{"delayed", false, func(q *queue.Queue[string]) { q.AddAfter("a", time.Minute) }},
		{"backed off", false, func(q *queue.Queue[string]) { q.AddRateLimited("a") }},
		{"backed off while processing", true, func(q *queue.Queue[string]) { q.AddRateLimited("a") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := queue.NewRateLimited[string](&fixedLimiter{d: time.Minute})
				defer q.ShutDown()
				if tt.processing {
					q.Add("a")
					require.Equal(t, "a", mustGet(t, q))
				}
				tt.delay(q)
				want := q.State("a")
				require.True(t, want.Delayed)
				q.AddLow("a") // a resync
				require.Equal(t, want, q.State("a"), "the resync changed nothing")
				if tt.processing {
					q.Done("a")
				}
				requireEmpty(t, q)
				time.Sleep(time.Minute)
				require.Equal(t, []string{"a"}, drain(q))
			})
		})
	}
}

type fixedLimiter struct{ d time.Duration }

func (l *fixedLimiter) When(string) time.Duration { return l.d }
func (l *fixedLimiter) Forget(string)             {}
func (l *fixedLimiter) NumRequeues(string) int    { return 0 }

func TestANormalAddOfTheKeyAtTheHeadOfTheLowListMovesItAndKeepsTheRestInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		for _, k := range []string{"a", "b", "c", "d"} {
			q.AddLow(k)
		}
		require.Equal(t, "a", mustGet(t, q)) // b heads the low list now
		q.Add("b")
		q.Add("d") // and the tail
		q.Done("a")
		require.Equal(t, queue.KeyState{Queued: true, Priority: queue.Low}, q.State("c"))
		require.Equal(t, []string{"b", "d", "c"}, drain(q))

		// The only low key, once a Get took the one before it: the low
		// list is left empty, and a later AddLow heads it.
		q.AddLow("x")
		q.AddLow("y")
		require.Equal(t, "x", mustGet(t, q))
		q.Add("y")
		q.AddLow("z")
		q.Done("x")
		require.Equal(t, 2, q.Len())
		require.Equal(t, []string{"y", "z"}, drain(q))
	})
}
