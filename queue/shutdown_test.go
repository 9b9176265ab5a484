package queue_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/queue"
	"github.com/stretchr/testify/require"
)

func TestShutDownIsTerminalAndLaterAddsAreIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.NewRateLimited[string](&countingLimiter[string]{})
		q.ShutDown()
		q.Add("a")
		q.AddLow("b")
		q.AddAfter("c", time.Second)
		q.AddRateLimited("d")
		require.Equal(t, 0, q.Len())
		require.Equal(t, 0, q.NumRequeues("d"), "no failure recorded after shutdown")
		for _, k := range []string{"a", "b", "c", "d"} {
			require.True(t, q.State(k).Idle(), k)
		}
		time.Sleep(time.Hour)
		_, ok := q.Get(context.Background())
		require.False(t, ok)
		q.ShutDown() // again: nothing happens
	})
}

func TestGetDrainsQueuedKeysAfterShutDownThenReturnsFalse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		q.Add("a")
		q.AddLow("b")
		q.AddAfter("delayed", time.Second) // dropped by ShutDown
		q.ShutDown()
		ctx := context.Background()
		var got []string
		for {
			k, ok := q.Get(ctx)
			if !ok {
				break
			}
			got = append(got, k)
			q.Done(k)
		}
		require.Equal(t, []string{"a", "b"}, got)
		require.True(t, q.State("delayed").Idle())
	})
}

func TestShutDownWakesBlockedGets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		q.AddAfter("a", time.Hour)
		results := make(chan bool, 3)
		for range 3 {
			go func() {
				_, ok := q.Get(context.Background())
				results <- ok
			}()
		}
		synctest.Wait()
		q.ShutDown()
		for range 3 {
			require.False(t, <-results)
		}
	})
}

func TestRerunRecordedBeforeShutDownIsQueuedAtDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		q.Add("a")
		k, _ := q.Get(context.Background())
		q.Add("a")
		q.ShutDown()
		q.Done(k)
		k, ok := q.Get(context.Background())
		require.True(t, ok)
		require.Equal(t, "a", k)
		q.Done(k)
		_, ok = q.Get(context.Background())
		require.False(t, ok)
	})
}

func TestShutDownWithDrainWaitsForInFlightKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		q.Add("a")
		q.Add("b")
		q.Add("c")
		a := mustGet(t, q)
		b := mustGet(t, q)
		start := time.Now()
		go func() {
			time.Sleep(time.Second)
			q.Done(a)
			time.Sleep(time.Second)
			q.Done(b)
		}()
		require.NoError(t, q.ShutDownWithDrain(context.Background()))
		require.Equal(t, 2*time.Second, time.Since(start), "waited for both keys in flight")
		require.True(t, q.State("a").Idle())
		require.True(t, q.State("b").Idle())
		// A key never taken is not in flight: it stays for Get.
		require.Equal(t, "c", mustGet(t, q))
	})
}

func TestShutDownWithDrainReturnsAtOnceWhenNothingIsProcessing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		q.Add("queued-but-not-taken")
		start := time.Now()
		require.NoError(t, q.ShutDownWithDrain(context.Background()))
		require.Zero(t, time.Since(start))
	})
}

func TestShutDownWithDrainIsBoundedByCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		q.Add("stuck")
		q.Add("also-stuck")
		mustGet(t, q)
		mustGet(t, q)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		err := q.ShutDownWithDrain(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.EqualError(t, err, "queue: shut down with 2 keys still processing: context deadline exceeded")
		require.Equal(t, 5*time.Second, time.Since(start))

		cause := errors.New("leader lost")
		ctx2, cancel2 := context.WithCancelCause(context.Background())
		cancel2(cause)
		require.ErrorIs(t, q.ShutDownWithDrain(ctx2), cause, "wraps ctx's cause")
	})
}
