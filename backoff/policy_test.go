package backoff_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
)

// fixed returns a Rand that always returns u.
func fixed(u float64) func() float64 { return func() float64 { return u } }

// noJitter is DefaultPolicy without jitter, so delays are exact.
func noJitter() backoff.Policy {
	p := backoff.DefaultPolicy()
	p.Jitter = 0
	return p
}

func TestDefaultPolicyIsTenMillisDoublingToTwoMinutesWithTwentyPercentJitter(t *testing.T) {
	p := backoff.DefaultPolicy()
	require.Equal(t, 10*time.Millisecond, p.Base)
	require.Equal(t, 2.0, p.Factor)
	require.Equal(t, 2*time.Minute, p.Cap)
	require.Equal(t, 0.2, p.Jitter)
	require.Nil(t, p.Rand, "nil Rand means math/rand/v2")
	require.NoError(t, p.Validate())

	q := noJitter()
	for attempt, want := range []time.Duration{
		10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond,
	} {
		require.Equal(t, want, q.Delay(attempt), "attempt %d", attempt)
	}
	require.Equal(t, 81920*time.Millisecond, q.Delay(13))
	require.Equal(t, 2*time.Minute, q.Delay(14), "2^14·10ms is past the cap")
}

func TestDelayIsClampedToZeroAndCap(t *testing.T) {
	p := noJitter()
	p.Cap = time.Second
	tests := []struct {
		name    string
		policy  backoff.Policy
		attempt int
		want    time.Duration
	}{
		{"negative attempt counts as the first", p, -5, 10 * time.Millisecond},
		{"below the cap is exact", p, 6, 640 * time.Millisecond},
		{"first attempt past the cap gives the cap", p, 7, time.Second},
		{"far past the cap gives the cap", p, 60, time.Second},
		{"jitter above the cap is clamped to it", backoff.Policy{Base: time.Second, Factor: 1, Cap: time.Second, Jitter: 0.5, Rand: fixed(0.99)}, 0, time.Second},
		{"zero base never waits", backoff.Policy{Factor: 2, Cap: time.Second}, 40, 0},
		{"factor 1 is a constant delay", backoff.Policy{Base: 3 * time.Millisecond, Factor: 1, Cap: time.Second}, 1000, 3 * time.Millisecond},
		// Delay of a Policy that Validate rejects still stays in [0, Cap].
		{"invalid: negative base gives 0", backoff.Policy{Base: -time.Second, Factor: 2, Cap: time.Second}, 3, 0},
		{"invalid: negative cap gives 0", backoff.Policy{Base: time.Second, Factor: 2, Cap: -time.Second}, 3, 0},
		{"invalid: NaN factor gives the cap", backoff.Policy{Base: time.Millisecond, Factor: math.NaN(), Cap: time.Second}, 3, time.Second},
		{"invalid: cap below base gives the cap", backoff.Policy{Base: time.Minute, Factor: 2, Cap: time.Second}, 0, time.Second},
		{"invalid: negative factor never goes negative", backoff.Policy{Base: time.Millisecond, Factor: -2, Cap: time.Second}, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.policy.Delay(tt.attempt))
		})
	}
}

func TestCapOverOneHourIsRejected(t *testing.T) {
	p := backoff.DefaultPolicy()
	p.Cap = backoff.MaxCap
	require.NoError(t, p.Validate(), "exactly one hour is allowed")

	p.Cap = time.Hour + time.Nanosecond
	err := p.Validate()
	require.ErrorIs(t, err, backoff.ErrInvalidConfig)
	require.ErrorContains(t, err, "cap 1h0m0.000000001s is over the 1h0m0s maximum")

	_, err = backoff.NewPerKey[string](p)
	require.ErrorIs(t, err, backoff.ErrInvalidConfig)
}

func TestAttemptTenThousandGivesTheCap(t *testing.T) {
	for _, u := range []float64{0, 0.5, 0.999999} {
		p := backoff.DefaultPolicy()
		p.Rand = fixed(u)
		for _, attempt := range []int{64, 1023, 1024, 10_000, math.MaxInt32, math.MaxInt} {
			require.Equal(t, p.Cap, p.Delay(attempt), "attempt %d, rand %v", attempt, u)
		}
	}
	// A factor barely above 1 still reaches the cap instead of overflowing.
	p := backoff.Policy{Base: time.Millisecond, Factor: 1.001, Cap: time.Second}
	require.Equal(t, time.Second, p.Delay(10_000))
	require.Equal(t, time.Second, p.Delay(math.MaxInt))
}

func TestJitterStaysWithinPlusMinusJitter(t *testing.T) {
	base := 100 * time.Millisecond
	tests := []struct {
		u, jitter float64
		want      time.Duration
	}{
		{u: 0, jitter: 0.2, want: 80 * time.Millisecond},    // lowest: −20%
		{u: 0.25, jitter: 0.2, want: 90 * time.Millisecond}, // −10%
		{u: 0.5, jitter: 0.2, want: 100 * time.Millisecond}, // centre
		{u: 0.75, jitter: 0.2, want: 110 * time.Millisecond},
		{u: 0, jitter: 0.5, want: 50 * time.Millisecond},
		{u: 0.9, jitter: 0, want: 100 * time.Millisecond}, // no jitter ignores Rand
	}
	for _, tt := range tests {
		p := backoff.Policy{Base: base, Factor: 2, Cap: time.Minute, Jitter: tt.jitter, Rand: fixed(tt.u)}
		require.InDelta(t, float64(tt.want), float64(p.Delay(0)), 1, "u=%v jitter=%v", tt.u, tt.jitter)
		require.InDelta(t, float64(2*tt.want), float64(p.Delay(1)), 2, "jitter scales with the delay")
	}

	// The top of the range, u just below 1, is +20% (to within rounding).
	p := backoff.Policy{Base: base, Factor: 2, Cap: time.Minute, Jitter: 0.2, Rand: fixed(math.Nextafter(1, 0))}
	require.LessOrEqual(t, p.Delay(0), 120*time.Millisecond)
	require.Greater(t, p.Delay(0), 119*time.Millisecond)

	// With the default random source every delay lands in [0.8, 1.2]·nominal.
	d := backoff.DefaultPolicy()
	seen := map[time.Duration]bool{}
	for range 1000 {
		got := d.Delay(3)
		require.GreaterOrEqual(t, got, 64*time.Millisecond)
		require.LessOrEqual(t, got, 96*time.Millisecond)
		seen[got] = true
	}
	require.Greater(t, len(seen), 100, "the default source actually spreads delays")
}

func TestDelayDoesNotCallRandWhenNothingToSpread(t *testing.T) {
	calls := 0
	p := backoff.DefaultPolicy()
	p.Rand = func() float64 { calls++; return 0.5 }
	require.Equal(t, p.Cap, p.Delay(10_000))
	require.Zero(t, calls, "a delay far past the cap is the cap whatever the draw")
	p.Delay(0)
	require.Equal(t, 1, calls)
}

func TestValidateRejectsEveryBadPolicy(t *testing.T) {
	mod := func(f func(*backoff.Policy)) backoff.Policy {
		p := backoff.DefaultPolicy()
		f(&p)
		return p
	}
	tests := []struct {
		name   string
		policy backoff.Policy
		msg    string
	}{
		{"zero value", backoff.Policy{}, "factor 0 must be a finite number ≥ 1"},
		{"negative base", mod(func(p *backoff.Policy) { p.Base = -time.Millisecond }), "base -1ms is negative"},
		{"factor below 1", mod(func(p *backoff.Policy) { p.Factor = 0.5 }), "factor 0.5 must be a finite number ≥ 1"},
		{"NaN factor", mod(func(p *backoff.Policy) { p.Factor = math.NaN() }), "factor NaN"},
		{"infinite factor", mod(func(p *backoff.Policy) { p.Factor = math.Inf(1) }), "factor +Inf"},
		{"cap below base", mod(func(p *backoff.Policy) { p.Cap = time.Millisecond }), "cap 1ms is below base 10ms"},
		{"cap over an hour", mod(func(p *backoff.Policy) { p.Cap = 2 * time.Hour }), "cap 2h0m0s is over the 1h0m0s maximum"},
		{"negative jitter", mod(func(p *backoff.Policy) { p.Jitter = -0.1 }), "jitter -0.1 is outside [0, 1)"},
		{"jitter of 1", mod(func(p *backoff.Policy) { p.Jitter = 1 }), "jitter 1 is outside [0, 1)"},
		{"NaN jitter", mod(func(p *backoff.Policy) { p.Jitter = math.NaN() }), "jitter NaN is outside [0, 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.policy.Validate()
			require.ErrorIs(t, err, backoff.ErrInvalidConfig)
			require.ErrorContains(t, err, tt.msg)

			l, err := backoff.NewPerKey[int](tt.policy)
			require.ErrorIs(t, err, backoff.ErrInvalidConfig, "the constructor refuses it too")
			require.Nil(t, l)
		})
	}

	for name, p := range map[string]backoff.Policy{
		"default":              backoff.DefaultPolicy(),
		"zero base and cap":    {Factor: 1},
		"cap equal to base":    {Base: time.Second, Factor: 3, Cap: time.Second},
		"largest jitter below": {Base: time.Second, Factor: 1, Cap: time.Hour, Jitter: math.Nextafter(1, 0)},
	} {
		require.NoError(t, p.Validate(), name)
	}
}

// FuzzDelay checks that Delay stays in [0, Cap] for any policy, valid or
// not, and any attempt, and reaches the cap for valid policies.
func FuzzDelay(f *testing.F) {
	f.Add(int64(10*time.Millisecond), 2.0, int64(2*time.Minute), 0.2, 0.5, 10_000)
	f.Add(int64(0), 1.0, int64(0), 0.0, 0.0, 0)
	f.Add(int64(-1), -3.0, int64(-5), 2.0, 7.0, -1)
	f.Add(int64(1), 1.0000001, int64(time.Hour), 0.99, 0.999, math.MaxInt)
	f.Add(int64(math.MaxInt64), math.Inf(1), int64(math.MaxInt64), math.NaN(), math.NaN(), 63)
	f.Fuzz(func(t *testing.T, base int64, factor float64, cp int64, jitter, u float64, attempt int) {
		p := backoff.Policy{Base: time.Duration(base), Factor: factor, Cap: time.Duration(cp), Jitter: jitter, Rand: fixed(u)}
		d := p.Delay(attempt)
		require.GreaterOrEqual(t, d, time.Duration(0))
		require.LessOrEqual(t, d, max(p.Cap, 0))
		if p.Validate() == nil && p.Base > 0 && p.Factor >= 2 && attempt >= 64 {
			require.Equal(t, p.Cap, d)
		}
	})
}

// DefaultPolicy's doc, with its jitter: attempts 0 to 13 can wait less than
// the cap (13 at most 1.2·81.92s), from attempt 14 on every delay is exactly
// 2 minutes whatever Rand draws, and attempts 0 to 13 add up to about 2.7
// minutes.
func TestDefaultPolicyIsExactlyTheCapFromAttemptFourteenWithJitter(t *testing.T) {
	var sum time.Duration
	for attempt := 0; attempt <= 13; attempt++ {
		lo, hi := backoff.DefaultPolicy(), backoff.DefaultPolicy()
		lo.Rand, hi.Rand = fixed(0), fixed(math.Nextafter(1, 0))
		require.Less(t, hi.Delay(attempt), 2*time.Minute, "attempt %d", attempt)
		require.Less(t, lo.Delay(attempt), hi.Delay(attempt), "attempt %d is spread", attempt)
		sum += noJitter().Delay(attempt)
	}
	require.InDelta(t, 2.7, sum.Minutes(), 0.05, "time to reach attempt 14")
	for _, attempt := range []int{14, 15, 30, math.MaxInt} {
		for _, u := range []float64{0, 0.5, math.Nextafter(1, 0)} {
			p := backoff.DefaultPolicy()
			p.Rand = fixed(u)
			require.Equal(t, 2*time.Minute, p.Delay(attempt), "attempt %d, u %v", attempt, u)
		}
	}
}
