package asuser

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/queue"
	"github.com/stretchr/testify/require"
)

// A delayed key becomes ready when the user's clock says so, and not before,
// whatever the real clock does.
func TestQueueDelaysFollowAUserClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := newManualClock()
		q := queue.New[string](queue.WithClock(clk))
		q.AddAfter("a", time.Hour)

		got := make(chan string, 1)
		go func() {
			k, ok := q.Get(context.Background())
			if ok {
				got <- k
			}
		}()

		// Real (bubble) time passes; the user's clock does not.
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		require.Empty(t, got, "the key ran before the user's clock reached its time")

		clk.Advance(59 * time.Minute)
		synctest.Wait()
		require.Empty(t, got, "the key ran a minute early by the user's clock")

		clk.Advance(time.Minute)
		synctest.Wait()
		require.Equal(t, "a", <-got)
		q.Done("a")
		q.ShutDown()
	})
}

// The overall retry bucket refills by the user's clock.
func TestBucketRefillsByAUserClock(t *testing.T) {
	clk := newManualClock()
	b, err := backoff.NewBucket[string](backoff.BucketConfig{Rate: 1, Burst: 1, Clock: clk})
	require.NoError(t, err)

	require.Zero(t, b.When("a"), "the first retry uses the burst")
	require.Equal(t, time.Second, b.When("b"), "the bucket is empty: the next token is a second away")
	clk.Advance(10 * time.Second)
	require.Zero(t, b.When("c"), "ten seconds of the user's clock refilled the bucket")
}
