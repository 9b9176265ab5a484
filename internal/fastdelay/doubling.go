package fastdelay

import (
	"math"
	"time"
)

// Doubling computes the delays of a backoff.Policy whose Factor is 2:
//
//	min(Base · 2^attempt · (1 + Jitter·(2u−1)), Cap), never negative,
//
// with the same floating-point operations as Policy.Delay. Base · 2^attempt
// is exact in floating point, whether multiplied out as Policy.Delay does or
// formed by setting the exponent of 2^attempt directly as Delay does here,
// so the two agree to the nanosecond. The zero Doubling gives 0 for every
// attempt.
type Doubling struct {
	base    float64 // Policy.Base
	jitter  float64 // Policy.Jitter
	limit   float64 // Policy.Cap
	cap     time.Duration
	capFrom int // the first attempt whose delay is Cap with no draw, as for every later one
}

// NewDoubling returns the Doubling of the policy with these fields, and
// false if factor is not 2 or jitter is outside [0, 1), for which the
// caller computes Policy.Delay itself.
func NewDoubling(base time.Duration, factor float64, cap time.Duration, jitter float64) (Doubling, bool) {
	if factor != 2 || !(jitter >= 0 && jitter < 1) {
		return Doubling{}, false
	}
	if base <= 0 || cap <= 0 {
		return Doubling{}, true // every delay is 0
	}
	c := Doubling{base: float64(base), jitter: jitter, limit: float64(cap), cap: cap}
	// Policy.Delay draws, and may stay below Cap, while
	// Base·2^attempt·(1−Jitter) < Cap (with no jitter, Base·2^attempt <
	// Cap). The left side only grows with attempt, reaching +Inf by
	// attempt 1024, so the first attempt that fails the test starts the
	// run of capped delays.
	for c.capFrom < 1100 && c.jittered(c.pow2(c.capFrom)) {
		c.capFrom++
	}
	return c, true
}

// pow2 returns Base · 2^attempt, for 0 ≤ attempt < capFrom or the
// attempts NewDoubling tries.
func (c *Doubling) pow2(attempt int) float64 {
	if attempt > 1023 {
		return math.Inf(1)
	}
	return c.base * math.Float64frombits(uint64(1023+attempt)<<52)
}

// jittered reports whether Policy.Delay draws for the unjittered delay d,
// or, without jitter, returns less than Cap.
func (c *Doubling) jittered(d float64) bool {
	if c.jitter > 0 {
		return d*(1-c.jitter) < c.limit
	}
	return d < c.limit
}

// Draws reports whether Delay(attempt, u) reads u: Policy.Delay calls
// Policy.Rand for exactly these attempts.
func (c *Doubling) Draws(attempt int) bool {
	return c.jitter > 0 && max(attempt, 0) < c.capFrom
}

// Delay returns Policy.Delay(attempt) for the random draw u, which it reads
// only if Draws(attempt). A negative attempt counts as 0. Delay is small
// enough to be inlined into its callers.
func (c *Doubling) Delay(attempt int, u float64) time.Duration {
	attempt = max(attempt, 0)
	if attempt >= c.capFrom {
		return c.cap
	}
	d := c.base * math.Float64frombits(uint64(1023+attempt)<<52) // 2^attempt, as capFrom ≤ 1024
	if c.jitter > 0 {
		d *= 1 + c.jitter*(2*u-1)
	}
	if !(d < c.limit) {
		return c.cap
	}
	if d <= 0 { // only for a draw outside [0, 1)
		return 0
	}
	return time.Duration(d)
}
