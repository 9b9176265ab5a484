package backoff

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/clock"
)

// stoppedClock is a clock.Clock whose Now is frozen at one instant.
type stoppedClock struct {
	clock.Real
	at time.Time
}

func (c stoppedClock) Now() time.Time { return c.at }

// TestBucketReserveCancelsPastTheCeiling drives the path When takes when
// concurrent calls emptied the bucket between its look and its reservation.
func TestBucketReserveCancelsPastTheCeiling(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	b := newBucket[string](BucketConfig{Rate: 1, Burst: 1, Ceiling: time.Second, Clock: stoppedClock{at: now}}.withDefaults())

	d, ok := b.reserve(now)
	require.True(t, ok)
	require.Zero(t, d)
	d, ok = b.reserve(now)
	require.True(t, ok)
	require.Equal(t, time.Second, d, "exactly at the ceiling is still reserved")
	require.InDelta(t, -1, b.Tokens(), 1e-9)

	for range 100 {
		_, ok = b.reserve(now)
		require.False(t, ok, "2s is past the 1s ceiling")
	}
	require.InDelta(t, -1, b.Tokens(), 1e-9, "every reservation past the ceiling was cancelled: no debt")
}
