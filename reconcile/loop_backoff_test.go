package reconcile

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
)

// TestLoopBackoffIsTheLongerOfPolicyAndBucket pins the delays of a key that
// keeps failing: the n-th consecutive failure waits the longer of the
// policy's Delay(n−1) and the overall bucket's delay. The policy alone
// gives 1s, 2s, 4s, 8s; a bucket of one token refilled every 4s makes the
// second retry wait 3s (the token it reserves at 1s is due at 4s) and the
// third 4s.
func TestLoopBackoffIsTheLongerOfPolicyAndBucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(func(string, int) (Result, error) { return Result{}, errBoom })
		l := mustNew(t, s, keySet("a"),
			WithResync(24*time.Hour, 0),
			WithStallAfter(100),
			WithBackoff(backoff.Policy{Base: time.Second, Factor: 2, Cap: time.Minute}),
			WithRetryLimit(backoff.BucketConfig{Rate: 0.25, Burst: 1}))
		stop := start(t, l)
		time.Sleep(16*time.Second + time.Millisecond)
		synctest.Wait()
		require.Equal(t, []time.Duration{time.Second, 3 * time.Second, 4 * time.Second, 8 * time.Second}, s.gaps("a"))
		require.NoError(t, stop())
	})
}
