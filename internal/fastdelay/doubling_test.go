package fastdelay_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/internal/fastdelay"
)

// draws are the random values every policy is checked with: both ends of
// [0, 1), the centre, values that round differently, and the values outside
// [0, 1) that a faulty Policy.Rand might return.
var draws = []float64{0, 0x1p-53, 0.1, 0.25, 1.0 / 3, 0.5, 0.7, 0.999, math.Nextafter(1, 0), -3, 5, math.NaN(), math.Inf(1)}

// requireSame checks that Doubling gives Policy.Delay's duration for every
// attempt from 0 until well past the first capped one, and for a few huge
// and negative ones, with each draw, and that it reads the draw exactly when
// Policy.Delay calls Rand.
func requireSame(t *testing.T, p backoff.Policy) {
	t.Helper()
	c, ok := fastdelay.NewDoubling(p.Base, p.Factor, p.Cap, p.Jitter)
	require.True(t, ok, "%+v", p)
	attempts := []int{-5, -1, 1 << 20, math.MaxUint32, math.MaxInt}
	capped := 0
	for a := 0; capped < 3 && a < 1200; a++ {
		attempts = append(attempts, a)
		if c.Delay(a, 0) == p.Cap && !c.Draws(a) {
			capped++
		}
	}
	for _, a := range attempts {
		for _, u := range draws {
			calls := 0
			p.Rand = func() float64 { calls++; return u }
			want := p.Delay(a)
			require.Equal(t, want, c.Delay(a, u), "%+v attempt %d u %v", p, a, u)
			require.Equal(t, calls == 1, c.Draws(a), "%+v attempt %d: draws", p, a)
		}
	}
}

func TestDoublingIsPolicyDelay(t *testing.T) {
	def := backoff.DefaultPolicy()
	for name, p := range map[string]backoff.Policy{
		"default":                     def,
		"client-go item exponential":  {Base: 5 * time.Millisecond, Factor: 2, Cap: time.Hour},
		"no jitter":                   {Base: 10 * time.Millisecond, Factor: 2, Cap: 2 * time.Minute},
		"odd base and cap":            {Base: 7777777, Factor: 2, Cap: 123456789012, Jitter: 0.37},
		"1ns base":                    {Base: 1, Factor: 2, Cap: backoff.MaxCap, Jitter: 0.2},
		"base at cap":                 {Base: time.Second, Factor: 2, Cap: time.Second, Jitter: 0.5},
		"largest jitter":              {Base: time.Millisecond, Factor: 2, Cap: backoff.MaxCap, Jitter: math.Nextafter(1, 0)},
		"zero base":                   {Factor: 2, Cap: time.Minute, Jitter: 0.2},
		"invalid: zero cap":           {Base: time.Second, Factor: 2, Jitter: 0.2},
		"invalid: negative base":      {Base: -time.Second, Factor: 2, Cap: time.Minute},
		"invalid: base above cap":     {Base: time.Hour, Factor: 2, Cap: time.Minute, Jitter: 0.2},
		"invalid: cap above MaxCap":   {Base: time.Second, Factor: 2, Cap: math.MaxInt64, Jitter: 0.2},
		"invalid: cap above MaxCap 2": {Base: 3, Factor: 2, Cap: math.MaxInt64 - 1},
	} {
		t.Run(name, func(t *testing.T) { requireSame(t, p) })
	}
}

func TestNewDoublingRefusesOtherPolicies(t *testing.T) {
	for _, f := range []float64{1, 1.5, 2.0000000000000004, 3, 4, math.Inf(1), math.NaN()} {
		_, ok := fastdelay.NewDoubling(time.Second, f, time.Minute, 0.2)
		require.False(t, ok, "factor %v", f)
	}
	for _, j := range []float64{-0.1, 1, 2, math.NaN()} {
		_, ok := fastdelay.NewDoubling(time.Second, 2, time.Minute, j)
		require.False(t, ok, "jitter %v", j)
	}
}

func FuzzDoublingIsPolicyDelay(f *testing.F) {
	f.Add(int64(10*time.Millisecond), int64(2*time.Minute), 0.2, 0.5, 3)
	f.Add(int64(1), int64(time.Hour), 0.999, 0.0, 40)
	f.Add(int64(5*time.Millisecond), int64(1000*time.Second), 0.0, 0.3, 100)
	f.Fuzz(func(t *testing.T, base, cp int64, jitter, u float64, attempt int) {
		c, ok := fastdelay.NewDoubling(time.Duration(base), 2, time.Duration(cp), jitter)
		if !ok {
			return
		}
		calls := 0
		p := backoff.Policy{Base: time.Duration(base), Factor: 2, Cap: time.Duration(cp), Jitter: jitter,
			Rand: func() float64 { calls++; return u }}
		require.Equal(t, p.Delay(attempt), c.Delay(attempt, u), "%+v attempt %d u %v", p, attempt, u)
		require.Equal(t, calls == 1, c.Draws(attempt))
	})
}

// TestSourceIsUniform checks that Source's draws lie in [0, 1) and fill it
// evenly: each tenth of the range gets its share of 100k draws within 5%,
// and two sources seeded alike give the same numbers.
func TestSourceIsUniform(t *testing.T) {
	s := fastdelay.New()
	const n, bins = 100_000, 10
	var count [bins]int
	for range n {
		u := s.Float64()
		require.True(t, u >= 0 && u < 1, "draw %v", u)
		count[int(u*bins)]++
	}
	for b, c := range count {
		require.InDelta(t, n/bins, c, n/bins*0.05, "tenth %d of [0, 1)", b)
	}
	a, b := fastdelay.Source(42), fastdelay.Source(42)
	for range 10 {
		require.Equal(t, a.Float64(), b.Float64())
	}
}
