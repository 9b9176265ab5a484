package queue_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/queue"
	"github.com/stretchr/testify/require"
)

// Delayed keys were invisible: 1M delayed keys showed Len 0 and nothing
// else said they were there. Delayed counts them, in O(1), and hands them
// over to Len as their time comes.
func TestDelayedCountsKeysWaitingForTheirTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		for i := range 1000 {
			q.AddAfter(fmt.Sprint(i), time.Duration(1+i%2)*time.Minute)
		}
		q.Add("now")
		require.Equal(t, 1, q.Len())
		require.Equal(t, 1000, q.Delayed())
		require.Equal(t, q.Counts().Delayed, q.Delayed())

		q.Add("0") // a delayed key added now is ready, no longer delayed
		require.Equal(t, 2, q.Len())
		require.Equal(t, 999, q.Delayed())

		time.Sleep(time.Minute)
		require.Equal(t, 500, q.Delayed(), "the keys of the first minute are ready")
		require.Equal(t, 501, q.Len())
		time.Sleep(time.Minute)
		require.Equal(t, 0, q.Delayed())
		require.Equal(t, 1001, q.Len())
	})
}
