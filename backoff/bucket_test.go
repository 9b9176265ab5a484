package backoff_test

import (
	"math"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/clock"
)

func newBucket(t *testing.T, cfg backoff.BucketConfig) *backoff.Bucket[string] {
	t.Helper()
	b, err := backoff.NewBucket[string](cfg)
	require.NoError(t, err)
	return b
}

func TestBucketDefaultsAreTenPerSecondBurstHundredCeilingThirtySeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBucket(t, backoff.BucketConfig{Rand: fixed(0.5)})
		var _ backoff.Limiter[string] = b
		for i := range backoff.DefaultBurst {
			require.Zero(t, b.When("k"+strconv.Itoa(i)), "failure %d fits in the burst", i)
		}
		require.InDelta(t, 0, b.Tokens(), 1e-9)
		for i := 1; i <= 300; i++ {
			require.InDelta(t, time.Duration(i)*100*time.Millisecond, b.When("k"), float64(time.Microsecond), "failure %d past the burst waits its turn at 10/s", 100+i)
		}
		require.Equal(t, 27*time.Second, b.When("k"), "the 401st is past the 30s ceiling: 0.9·30s for u=0.5")

		require.Equal(t, 0, b.NumRequeues("k"), "a bucket does not track keys")
		b.Forget("k") // does nothing, and does not refund tokens
		require.InDelta(t, -300, b.Tokens(), 1e-9)
	})
	require.Equal(t, rate.Limit(10), backoff.DefaultRate)
	require.Equal(t, 30*time.Second, backoff.DefaultCeiling)
}

// NewDefaultBucket is the bucket of BucketConfig{}: a limiter that counts
// per-key failures itself and pairs DefaultPolicy with it backs off as
// NewDefault does.
func TestNewDefaultBucketIsTheDefaultBucketConfig(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := backoff.NewDefaultBucket[string]()
		for i := range backoff.DefaultBurst {
			require.Zero(t, b.When("k"+strconv.Itoa(i)), "failure %d fits in the default burst", i)
		}
		require.InDelta(t, 100*time.Millisecond, b.When("k"), float64(time.Microsecond), "the next waits its turn at the default 10/s")
	})
}

// client-go's bucket has no ceiling: there 10,000 failures at once queue the
// last one for (10,000 − 100)/10 s = 990 s, about 16.5 minutes. A ceiling of
// MaxCap is the closest a Bucket comes to that, and shows the cost.
func TestBucketWithoutEffectiveCeilingQueuesTenThousandFailuresForSixteenMinutes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBucket(t, backoff.BucketConfig{Ceiling: time.Hour})
		var last time.Duration
		for range 10_000 {
			last = b.When("k")
		}
		require.Equal(t, 990*time.Second, last)
		require.InDelta(t, -9900, b.Tokens(), 1e-6, "the bucket owes 16.5 minutes of tokens")
	})
}

func TestBucketCeilingBoundsTenThousandFailuresAndSpreadsThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBucket(t, backoff.BucketConfig{})
		capped := map[time.Duration]bool{}
		for i := range 10_000 {
			d := b.When("k")
			require.LessOrEqual(t, d, backoff.DefaultCeiling, "failure %d", i)
			if i >= 400 { // 100 burst + 300 tokens of allowed debt
				require.GreaterOrEqual(t, d, 24*time.Second, "capped delays are in [0.8, 1]·ceiling")
				capped[d] = true
			}
		}
		require.Greater(t, len(capped), 1000, "capped delays are spread, not one burst")
	})
}

func TestBucketCancelsReservationsPastTheCeilingSoItBuildsNoDebt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBucket(t, backoff.BucketConfig{})
		for range 10_000 {
			b.When("k")
		}
		require.InDelta(t, -300, b.Tokens(), 1e-9, "debt stops at rate·ceiling = 300 tokens, not 9,900")

		time.Sleep(backoff.DefaultCeiling) // the debt is repaid in one ceiling
		require.InDelta(t, 0, b.Tokens(), 1e-9)
		time.Sleep(100 * time.Millisecond)
		require.Zero(t, b.When("new"), "a failure after the storm has passed waits for nothing")
		require.Equal(t, 100*time.Millisecond, b.When("next"))
	})
}

func TestBucketDebtStaysBoundedUnderConcurrentStorms(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const workers = 8
		b := newBucket(t, backoff.BucketConfig{Rate: 100, Burst: 10, Ceiling: time.Second})
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range 5000 {
					d := b.When("w" + strconv.Itoa(w))
					require.LessOrEqual(t, d, time.Second)
					if i%500 == 0 {
						time.Sleep(10 * time.Millisecond) // let some tokens back in
					}
				}
			})
		}
		wg.Wait()
		// 40,000 failures would owe 400 s of tokens; the ceiling holds the
		// debt at rate·ceiling = 100 tokens, plus at most one per worker.
		require.GreaterOrEqual(t, b.Tokens(), -100.0-workers)
		time.Sleep(time.Second + workers*10*time.Millisecond)
		require.Zero(t, b.When("after"), "the debt is repaid within ceiling + workers/rate")
	})
}

func TestBucketUsesItsClockAndRand(t *testing.T) {
	c := &manualClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	b := newBucket(t, backoff.BucketConfig{Rate: 1, Burst: 1, Ceiling: 10 * time.Second, Clock: c, Rand: fixed(0)})
	require.Zero(t, b.When("a"))
	require.Equal(t, time.Second, b.When("a"))
	c.now = c.now.Add(time.Minute) // refills to the burst, not beyond
	require.Zero(t, b.When("a"))
	require.Equal(t, time.Second, b.When("a"))
	for range 9 {
		b.When("a")
	}
	require.Equal(t, 8*time.Second, b.When("a"), "capped with u=0 gives 0.8·ceiling")

	b = newBucket(t, backoff.BucketConfig{Rate: 1, Burst: 1, Ceiling: time.Second, Clock: c, Rand: fixed(math.NaN())})
	b.When("a")
	b.When("a")
	require.Equal(t, 800*time.Millisecond, b.When("a"), "a Rand outside [0,1) gets the lowest spread, not garbage")
}

func TestBucketWithInfiniteRateNeverWaits(t *testing.T) {
	b := newBucket(t, backoff.BucketConfig{Rate: rate.Inf, Burst: 1})
	for range 1000 {
		require.Zero(t, b.When("k"))
	}
}

func TestNewBucketRejectsEveryBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  backoff.BucketConfig
		msg  string
	}{
		{"negative rate", backoff.BucketConfig{Rate: -1}, "rate -1 must be ≥ 0"},
		{"NaN rate", backoff.BucketConfig{Rate: rate.Limit(math.NaN())}, "rate NaN must be ≥ 0"},
		{"negative burst", backoff.BucketConfig{Burst: -1}, "burst -1 is negative"},
		{"negative ceiling", backoff.BucketConfig{Ceiling: -time.Second}, "ceiling -1s is negative"},
		{"ceiling over an hour", backoff.BucketConfig{Ceiling: time.Hour + 1}, "ceiling 1h0m0.000000001s is over the 1h0m0s maximum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := backoff.NewBucket[string](tt.cfg)
			require.ErrorIs(t, err, backoff.ErrInvalidConfig)
			require.ErrorContains(t, err, tt.msg)
			require.Nil(t, b)
		})
	}
	_, err := backoff.NewBucket[string](backoff.BucketConfig{Ceiling: time.Hour})
	require.NoError(t, err, "exactly MaxCap is allowed")
}

// manualClock is a clock.Clock whose time moves only when the test moves it.
type manualClock struct{ now time.Time }

func (c *manualClock) Now() time.Time                     { return c.now }
func (c *manualClock) NewTimer(time.Duration) clock.Timer { return nil }
