package lease

import (
	"fmt"
	"time"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/nilness"
)

// Defaults for a StoreElector.
const (
	// DefaultTTL is how long a lease stays valid after its last renewal, as
	// judged by the other candidates.
	DefaultTTL = 15 * time.Second
	// DefaultRenewInterval is how often the leader renews (TTL/3 for the
	// default TTL): two renewals may fail before the term ends at 2/3 TTL.
	DefaultRenewInterval = 5 * time.Second
	// DefaultRetryPeriod is how often a candidate re-reads the leader key
	// while someone else leads.
	DefaultRetryPeriod = 2 * time.Second
)

// Option configures a StoreElector.
type Option func(*config)

type config struct {
	ttl         time.Duration
	renew       time.Duration
	retry       time.Duration
	clock       clock.Clock
	renewSet    bool
	noRelease   bool
	releaseWait time.Duration
}

// WithTTL sets the lease duration (default DefaultTTL). A candidate takes
// over a leader key that has not changed for the TTL recorded in it; the
// leader itself stops at 2/3 of it. It must be positive.
func WithTTL(d time.Duration) Option { return func(c *config) { c.ttl = d } }

// WithRenewInterval sets how often the leader renews its lease (default
// TTL/3). It must be positive and shorter than 2/3 of the TTL, or no renewal
// could ever keep a term alive.
func WithRenewInterval(d time.Duration) Option {
	return func(c *config) { c.renew, c.renewSet = d, true }
}

// WithRetryPeriod sets how often a waiting candidate re-reads the leader key
// (default DefaultRetryPeriod). It must be positive.
func WithRetryPeriod(d time.Duration) Option { return func(c *config) { c.retry = d } }

// WithClock sets the time source (default the real clock, which is virtual
// under testing/synctest).
func WithClock(c clock.Clock) Option { return func(cfg *config) { cfg.clock = c } }

// WithoutRelease keeps the leader key when a term ends because ctx ended, so
// the next leader waits for the TTL instead of taking over at once. By
// default the key is deleted (released) when ctx ends.
func WithoutRelease() Option { return func(c *config) { c.noRelease = true } }

func newConfig(opts []Option) (config, error) {
	c := config{ttl: DefaultTTL, retry: DefaultRetryPeriod, clock: clock.Real{}, releaseWait: 5 * time.Second}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if !c.renewSet {
		c.renew = c.ttl / 3
	}
	switch {
	case c.ttl <= 0:
		return c, fmt.Errorf("lease: TTL must be positive, got %v", c.ttl)
	case c.renew <= 0:
		return c, fmt.Errorf("lease: renew interval must be positive, got %v", c.renew)
	case c.renew >= twoThirds(c.ttl):
		return c, fmt.Errorf("lease: renew interval %v must be shorter than 2/3 of the TTL %v", c.renew, c.ttl)
	case c.retry <= 0:
		return c, fmt.Errorf("lease: retry period must be positive, got %v", c.retry)
	case nilness.IsNil(c.clock):
		return c, fmt.Errorf("lease: clock must not be nil (%T)", c.clock)
	}
	return c, nil
}
