package backoff

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"golang.org/x/time/rate"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/fastdelay"
)

// Defaults for a BucketConfig field left at its zero value.
const (
	// DefaultRate is the overall retry rate: 10 per second.
	DefaultRate rate.Limit = 10
	// DefaultBurst is the number of retries allowed at once: 100.
	DefaultBurst = 100
	// DefaultCeiling is the longest delay a Bucket hands out: 30 seconds.
	// That is 300 retries of backlog at the default rate, enough to pace a
	// storm, while a key that fails during a storm of other keys' failures
	// still retries within half a minute, a quarter of DefaultPolicy's cap.
	DefaultCeiling = 30 * time.Second
)

// BucketConfig configures a Bucket. A zero field takes the default named in
// its comment, so BucketConfig{} is the default configuration.
type BucketConfig struct {
	// Rate is how many retries per second the bucket refills; 0 means
	// DefaultRate (10/s). rate.Inf means no limit: When always returns 0.
	// Negative or NaN is invalid.
	Rate rate.Limit
	// Burst is the bucket size: how many retries may go at once; 0 means
	// DefaultBurst (100). Negative is invalid.
	Burst int
	// Ceiling is the longest delay the bucket hands out; 0 means
	// DefaultCeiling (30s). Negative, or more than MaxCap (1 hour), is
	// invalid.
	Ceiling time.Duration
	// Clock tells the time; nil means the real clock, which is virtual
	// inside a testing/synctest bubble.
	Clock clock.Clock
	// Rand returns a number uniform in [0, 1), used to spread capped
	// delays; nil means math/rand/v2's Float64. It must be safe for
	// concurrent use if the Bucket is. If it panics, that draw comes from
	// math/rand/v2 instead and the panic is logged at Error (slog.Default).
	Rand func() float64
}

// withDefaults returns c with every zero field set to its default.
func (c BucketConfig) withDefaults() BucketConfig {
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	if c.Burst == 0 {
		c.Burst = DefaultBurst
	}
	if c.Ceiling == 0 {
		c.Ceiling = DefaultCeiling
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
	return c
}

// validate reports the first problem with c.
func (c BucketConfig) validate() error {
	switch {
	case !(c.Rate >= 0): // also NaN
		return fmt.Errorf("%w: rate %v must be ≥ 0 (0 means %v/s)", ErrInvalidConfig, float64(c.Rate), float64(DefaultRate))
	case c.Burst < 0:
		return fmt.Errorf("%w: burst %d is negative", ErrInvalidConfig, c.Burst)
	case c.Ceiling < 0:
		return fmt.Errorf("%w: ceiling %v is negative", ErrInvalidConfig, c.Ceiling)
	case c.Ceiling > MaxCap:
		return fmt.Errorf("%w: ceiling %v is over the %v maximum", ErrInvalidConfig, c.Ceiling, MaxCap)
	}
	return nil
}

// Bucket is a Limiter that paces all retries together, whatever their key,
// with a token bucket (golang.org/x/time/rate) of Burst tokens refilled at
// Rate per second. Each When takes one token: while tokens remain it
// returns 0, and after that the time until the token it reserved is due.
//
// Unlike a bare token bucket, a Bucket has a ceiling. When the wait for the
// next token would exceed Ceiling, When takes no token (a reservation it
// made is cancelled), so the bucket runs no further into debt, and returns a
// delay drawn uniformly from [0.8·Ceiling, Ceiling], so the capped keys do
// not all fire in one burst. Without a ceiling, 10,000 failures at 10/s
// would queue the last key for about 16 minutes, and every later failure
// behind it; with the default ceiling no failure waits more than 30 seconds
// and the bucket owes at most 30 seconds of tokens (see Tokens).
//
// A Bucket ignores keys: Forget does nothing and NumRequeues is always 0.
// Combine it with a PerKey limiter through Max. A Bucket is safe for
// concurrent use; the zero value is not usable, create one with NewBucket.
type Bucket[K comparable] struct {
	lim     *rate.Limiter
	ceiling time.Duration
	maxDebt float64 // tokens owed at the ceiling: Rate·Ceiling; +Inf for rate.Inf
	clock   clock.Clock
	rand    func() float64
}

// NewBucket returns a Bucket configured by cfg, with zero fields taking
// their defaults. It returns an error wrapping ErrInvalidConfig for a
// negative or NaN rate, a negative burst, or a ceiling that is negative or
// over MaxCap.
func NewBucket[K comparable](cfg BucketConfig) (*Bucket[K], error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return newBucket[K](cfg.withDefaults()), nil
}

// newBucket returns a Bucket for a valid cfg whose defaults are filled in.
func newBucket[K comparable](cfg BucketConfig) *Bucket[K] {
	return &Bucket[K]{
		lim:     rate.NewLimiter(cfg.Rate, cfg.Burst),
		ceiling: cfg.Ceiling,
		maxDebt: float64(cfg.Rate) * cfg.Ceiling.Seconds(),
		clock:   cfg.Clock,
		rand:    cfg.Rand,
	}
}

// When takes one token and returns how long until it is due: 0 while the
// bucket holds tokens, otherwise at most the ceiling. Past the ceiling it
// takes no token and returns a delay drawn uniformly from
// [0.8·Ceiling, Ceiling].
func (b *Bucket[K]) When(K) time.Duration {
	now := b.clock.Now()
	// Past the ceiling, which is where a storm spends most of its calls,
	// looking is enough: reserving and cancelling would only restore the
	// same token.
	if !math.IsInf(b.maxDebt, 1) && 1-b.lim.TokensAt(now) > b.maxDebt {
		return b.capped()
	}
	if d, ok := b.reserve(now); ok {
		return d
	}
	return b.capped() // concurrent calls took the tokens since we looked
}

// reserve takes one token and returns how long until it is due, if that is
// within the ceiling. Otherwise it cancels the reservation, so the bucket
// owes nothing for it, and reports false.
func (b *Bucket[K]) reserve(now time.Time) (time.Duration, bool) {
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d <= b.ceiling { // InfDuration if !r.OK(), impossible with Burst ≥ 1
		return d, true
	}
	r.CancelAt(now)
	return 0, false
}

// capped returns Ceiling·U(0.8, 1), so that capped keys spread out.
func (b *Bucket[K]) capped() time.Duration {
	u := fastdelay.CallRand(b.rand)
	if !(u >= 0 && u < 1) { // a Rand outside its contract gets the shortest spread
		u = 0
	}
	return time.Duration(float64(b.ceiling) * (0.8 + 0.2*u))
}

// Forget does nothing: a Bucket does not track keys.
func (b *Bucket[K]) Forget(K) {}

// NumRequeues returns 0: a Bucket does not track keys.
func (b *Bucket[K]) NumRequeues(K) int { return 0 }

// Tokens returns the number of tokens in the bucket now; a negative number
// means earlier failures are waiting on tokens not yet refilled. Used from
// one goroutine it never drops below −Rate·Ceiling. Concurrent When calls
// can leave it lower by at most one token each, because x/time/rate refunds
// a cancelled reservation only in part when another was made after it.
func (b *Bucket[K]) Tokens() float64 {
	return b.lim.TokensAt(b.clock.Now())
}
