package backoff

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/steady-go/steady/internal/fastdelay"
)

// ErrInvalidConfig is wrapped by every error that Policy.Validate, NewPerKey
// and NewBucket return for a bad configuration. Test for it with errors.Is.
var ErrInvalidConfig = errors.New("backoff: invalid configuration")

// MaxCap is the longest Cap a Policy may have, and the longest Ceiling a
// BucketConfig may have. A retry delay longer than an hour hides failures
// rather than pacing them.
const MaxCap = time.Hour

// Policy is capped exponential backoff with jitter. The delay before retry
// number attempt (0 for the first retry) is
//
//	min(Base · Factor^attempt · (1 + Jitter·(2u−1)), Cap)
//
// where u is drawn from Rand, and the result is never negative. So the delay
// grows by Factor on every consecutive failure, is spread by ±Jitter so that
// keys which failed together do not retry together, and never exceeds Cap.
// Once Base·Factor^attempt·(1−Jitter) reaches Cap, every delay is exactly Cap.
//
// A Policy is a plain value: Delay reads only its fields, keeps no state, and
// is safe for concurrent use if Rand is. Start from DefaultPolicy and change
// the fields you need; the zero Policy is invalid (its Factor is 0). Validate
// reports a bad Policy, and NewPerKey refuses one. Delay itself never panics,
// even on a Policy that Validate rejects: its result is always in [0, Cap]
// (0 when Cap is not positive).
type Policy struct {
	// Base is the delay before the first retry. DefaultPolicy uses 10ms.
	// Zero is allowed and means no delay at all; negative is invalid.
	Base time.Duration
	// Factor multiplies the delay on every consecutive failure. DefaultPolicy
	// uses 2. It must be finite and at least 1; 1 means a constant delay.
	Factor float64
	// Cap bounds every delay. DefaultPolicy uses 2 minutes. It must be at
	// least Base and at most MaxCap (1 hour).
	Cap time.Duration
	// Jitter spreads each delay uniformly by ±Jitter of its value before the
	// cap is applied. DefaultPolicy uses 0.2 (±20%). It must be in [0, 1);
	// 0 means no jitter.
	Jitter float64
	// Rand returns a number uniform in [0, 1). Nil means math/rand/v2's
	// Float64. Delay calls it at most once, and only when Jitter is positive
	// and the delay is below Cap; it must be safe for concurrent use if the
	// Policy is. If it panics, that draw comes from math/rand/v2 instead
	// and the panic is logged at Error (slog.Default).
	Rand func() float64
}

// DefaultPolicy returns the policy steady uses when none is given: a 10ms
// base doubling up to 2 minutes, spread by ±20%, with math/rand/v2 as the
// random source. Attempts 0 to 13 wait about 10ms, 20ms, ... 82s; from
// attempt 14 on (after about 2.7 minutes of consecutive failures) every delay
// is exactly 2 minutes.
func DefaultPolicy() Policy {
	return Policy{
		Base:   10 * time.Millisecond,
		Factor: 2,
		Cap:    2 * time.Minute,
		Jitter: 0.2,
	}
}

// Validate reports the first problem with p, or nil if p is valid. The error
// wraps ErrInvalidConfig and names the field and its value. A valid Policy
// has Base ≥ 0, a finite Factor ≥ 1, Base ≤ Cap ≤ MaxCap, and Jitter in
// [0, 1). Rand is not checked.
func (p Policy) Validate() error {
	switch {
	case p.Base < 0:
		return fmt.Errorf("%w: base %v is negative", ErrInvalidConfig, p.Base)
	case !(p.Factor >= 1) || math.IsInf(p.Factor, 0):
		return fmt.Errorf("%w: factor %v must be a finite number ≥ 1 (start from DefaultPolicy to change single fields)", ErrInvalidConfig, p.Factor)
	case p.Cap < p.Base:
		return fmt.Errorf("%w: cap %v is below base %v", ErrInvalidConfig, p.Cap, p.Base)
	case p.Cap > MaxCap:
		return fmt.Errorf("%w: cap %v is over the %v maximum", ErrInvalidConfig, p.Cap, MaxCap)
	case !(p.Jitter >= 0 && p.Jitter < 1):
		return fmt.Errorf("%w: jitter %v is outside [0, 1)", ErrInvalidConfig, p.Jitter)
	}
	return nil
}

// Delay returns how long to wait before retry number attempt, where attempt
// 0 is the first retry after the first failure. A negative attempt counts as
// 0. The result is in [0, Cap] for any attempt: huge attempts give exactly
// Cap, never an overflowed zero or negative value. Delay depends only on p's
// fields and the value Rand returns.
func (p Policy) Delay(attempt int) time.Duration {
	return fastdelay.Exp(p.Base, p.Factor, p.Cap, p.Jitter, attempt, -1, p.Rand)
}
