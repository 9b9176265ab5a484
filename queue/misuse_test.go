package queue_test

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/queue"
)

// client-go workqueue habits, black-box: each is harmless and bounded.

// AddAfter with the longest Duration there is waits (it does not overflow
// into "ready now"), and a plain Add still makes the key ready at once.
func TestMisuseHugeAddAfterWaitsAndAnAddOverridesIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		q.AddAfter("a", time.Duration(math.MaxInt64))
		q.AddAfter("b", time.Duration(math.MaxInt64)-time.Nanosecond)
		require.Equal(t, 0, q.Len())
		require.Equal(t, 2, q.Delayed())
		ctx, cancel := context.WithTimeout(t.Context(), 1000*time.Hour)
		defer cancel()
		_, ok := q.Get(ctx)
		require.False(t, ok, "a key delayed by MaxInt64 came out within 1000h")
		q.Add("a")
		k, ok := q.Get(t.Context())
		require.True(t, ok)
		require.Equal(t, "a", k)
		q.Done(k)
	})
}

// Done and Forget of keys the queue never held, Done twice, and
// NumRequeues of an unknown key change nothing and never panic.
func TestMisuseDoneAndForgetOfUnknownKeys(t *testing.T) {
	q := queue.New[string]()
	defer q.ShutDown()
	q.Done("never")
	q.Forget("never")
	require.Zero(t, q.NumRequeues("never"))
	q.Add("a")
	k, ok := q.Get(t.Context())
	require.True(t, ok)
	q.Done(k)
	q.Done(k) // twice
	require.Equal(t, 0, q.Len())
	q.Add("a")
	require.Equal(t, 1, q.Len(), "a second Done left the key in a bad state")
}

// After ShutDown: every Add is ignored, Get returns false at once, and a
// second ShutDown is harmless.
func TestMisuseUseAfterShutDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		q.ShutDown()
		q.Add("a")
		q.AddLow("b")
		q.AddAfter("c", time.Second)
		q.AddAfter("d", -time.Second)
		q.AddRateLimited("e")
		q.ShutDown()
		time.Sleep(time.Minute)
		require.Equal(t, 0, q.Len())
		_, ok := q.Get(context.Background())
		require.False(t, ok)
		require.NoError(t, q.ShutDownWithDrain(context.Background()))
	})
}
