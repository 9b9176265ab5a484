package fastdelay

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"time"

	"github.com/steady-go/steady/internal/guard"
)

// Delays computes one backoff.Policy's delays for a limiter that counts
// failures under a lock of its own (backoff.PerKey, the queue's own
// backoff): Doubling's arithmetic when the factor is 2, Exp's otherwise,
// with the jitter drawn from its own Source when the policy has no Rand.
// It is not generic, so its owners' generic methods call one compiled copy
// with Doubling's code inlined into it.
type Delays struct {
	base, cap      time.Duration
	factor, jitter float64
	rand           func() float64 // Policy.Rand; nil means src
	fast           Doubling       // the policy's delays, when fastOK
	fastOK         bool           // factor is 2
	src            Source
}

// NewDelays returns the Delays of the policy with these fields, its own
// Source seeded from math/rand/v2.
func NewDelays(base time.Duration, factor float64, cap time.Duration, jitter float64, rand func() float64) Delays {
	d := Delays{base: base, cap: cap, factor: factor, jitter: jitter, rand: rand, src: New()}
	d.fast, d.fastOK = NewDoubling(base, factor, cap, jitter)
	return d
}

// Draw returns the random draw for attempt n from d's own Source, or -1 if
// the attempt needs none or the policy's Rand will make it. The caller holds
// the lock that guards d.
func (d *Delays) Draw(n int) float64 {
	if d.rand == nil && (!d.fastOK || d.fast.Draws(n)) {
		return d.src.Float64()
	}
	return -1
}

// Delay returns Policy.Delay(n) with u, from Draw, as the random draw, or
// with one from the policy's Rand when u is negative and the attempt needs
// one. It does not touch d's Source, so it needs no lock.
func (d *Delays) Delay(n int, u float64) time.Duration {
	if !d.fastOK {
		return Exp(d.base, d.factor, d.cap, d.jitter, n, u, d.rand)
	}
	if u < 0 && d.fast.Draws(n) {
		u = CallRand(d.rand)
	}
	return d.fast.Delay(n, u)
}

// Exp is Policy.Delay for any valid policy: base · factor^attempt, spread
// by ±jitter with the random draw u and capped at cap. u is read only if
// jitter can matter; when it is negative, Exp draws from rand, or from
// math/rand/v2 when rand is nil. A negative attempt counts as 0.
func Exp(base time.Duration, factor float64, cap time.Duration, jitter float64, attempt int, u float64, rand func() float64) time.Duration {
	if base <= 0 || cap <= 0 {
		return 0
	}
	limit := float64(cap)
	d := float64(base) * pow(factor, attempt)
	if jitter > 0 && d*(1-jitter) < limit {
		if u < 0 {
			u = draw(rand)
		}
		d *= 1 + jitter*(2*u-1)
	}
	switch {
	case !(d < limit): // also catches +Inf and NaN from a bad factor
		return cap
	case d <= 0:
		return 0
	}
	return time.Duration(d)
}

func draw(r func() float64) float64 {
	if r == nil {
		return rand.Float64()
	}
	return CallRand(r)
}

// CallRand returns r(), a policy's Rand. One that panics is replaced, for
// that draw, by math/rand/v2's Float64, and the panic logged at Error to
// slog.Default (backoff has no logger of its own): its callers hold a
// queue's lock or run a Loop's worker, neither of which a test's random
// source may take down.
func CallRand(r func() float64) (u float64) {
	defer func() {
		if v := recover(); v != nil {
			slog.Default().LogAttrs(context.Background(), slog.LevelError, "backoff: Rand panicked; drawing from math/rand/v2 instead",
				slog.String("panic", guard.Describe(v, guard.MaxText)), slog.String("stack", string(debug.Stack())))
			u = rand.Float64()
		}
	}()
	return r()
}

// pow returns f^n for n ≥ 0 by repeated squaring (negative n counts as 0).
// It is exact enough for delays and, unlike math.Pow, costs a handful of
// multiplications; overflow gives +Inf, which Exp turns into cap.
func pow(f float64, n int) float64 {
	r := 1.0
	for n > 0 {
		if n&1 == 1 {
			r *= f
		}
		f *= f
		n >>= 1
	}
	return r
}
