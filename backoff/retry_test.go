package backoff_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
)

// TestRetryTakesTheLongerOfPolicyAndBucket: with one token refilled every
// 4s, the policy's 1s, 2s, 4s, 8s become 1s, 3s, 4s, 8s when each attempt
// runs as soon as it may.
func TestRetryTakesTheLongerOfPolicyAndBucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := backoff.NewRetry[string](backoff.Policy{Base: time.Second, Factor: 2, Cap: time.Minute},
			backoff.BucketConfig{Rate: 0.25, Burst: 1})
		require.NoError(t, err)
		var got []time.Duration
		for n := range 4 {
			d := r.Delay("a", n)
			got = append(got, d)
			time.Sleep(d)
		}
		require.Equal(t, []time.Duration{time.Second, 3 * time.Second, 4 * time.Second, 8 * time.Second}, got)
	})
}

func TestNewRetryRejectsBadConfig(t *testing.T) {
	_, err := backoff.NewRetry[string](backoff.Policy{Base: time.Second, Factor: 0.5, Cap: time.Minute}, backoff.BucketConfig{})
	require.True(t, errors.Is(err, backoff.ErrInvalidConfig), "bad policy: %v", err)
	_, err = backoff.NewRetry[string](backoff.DefaultPolicy(), backoff.BucketConfig{Burst: -1})
	require.True(t, errors.Is(err, backoff.ErrInvalidConfig), "bad bucket: %v", err)
}
