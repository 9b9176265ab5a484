package shard

import (
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/nilness"
)

// Defaults of a Sharder, those of store/lease.
const (
	// DefaultTTL is how long a member stays live after its last renewal,
	// as judged by the other replicas.
	DefaultTTL = 15 * time.Second
	// DefaultRetryPeriod is how often a replica re-reads the members and
	// the shards and moves shards.
	DefaultRetryPeriod = 2 * time.Second
)

// Option configures a Sharder.
type Option func(*config)

type config struct {
	shards   int
	ttl      time.Duration
	renew    time.Duration
	renewSet bool
	retry    time.Duration
	clock    clock.Clock
	log      *slog.Logger
}

// WithShards sets the number of shards S (default DefaultShards). Every
// replica of one Loop must use the same S; it must be between 1 and 65536.
// Changing it moves nearly every key: stop every replica first.
func WithShards(n int) Option { return func(c *config) { c.shards = n } }

// WithTTL sets the membership lease duration (default DefaultTTL): a
// replica that stops renewing loses its shards after it. It must be
// positive and at most maxTTL, math.MaxInt64/2 nanoseconds (about 146
// years), so that 2/3 of it can be computed.
func WithTTL(d time.Duration) Option { return func(c *config) { c.ttl = d } }

// WithRenewInterval sets how often a replica renews its membership
// (default TTL/3). It must be positive and shorter than 2/3 of the TTL.
func WithRenewInterval(d time.Duration) Option {
	return func(c *config) { c.renew, c.renewSet = d, true }
}

// WithRetryPeriod sets how often a replica re-reads members and shards, and
// so how soon it notices a join, a leave or a released shard (default
// DefaultRetryPeriod). It must be positive.
func WithRetryPeriod(d time.Duration) Option { return func(c *config) { c.retry = d } }

// WithClock sets the time source (default the real clock, which is virtual
// under testing/synctest).
func WithClock(c clock.Clock) Option { return func(cfg *config) { cfg.clock = c } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// maxTTL is the longest TTL: the Sharder computes 2/3 of it as ttl*2/3.
const maxTTL = time.Duration(math.MaxInt64 / 2)

func newConfig(opts []Option) (config, error) {
	c := config{shards: DefaultShards, ttl: DefaultTTL, retry: DefaultRetryPeriod, clock: clock.Real{}, log: slog.Default()}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if !c.renewSet {
		c.renew = c.ttl / 3
	}
	switch {
	case c.shards < 1 || c.shards > 1<<16:
		return c, fmt.Errorf("shard: shards must be between 1 and 65536, got %d", c.shards)
	case c.ttl <= 0:
		return c, fmt.Errorf("shard: TTL must be positive, got %v", c.ttl)
	case c.ttl > maxTTL:
		// Refused here, or ttl*2/3 below would overflow and the error
		// would name the renew interval, which the user may never have set.
		return c, fmt.Errorf("shard: TTL %v is above the limit %v", c.ttl, maxTTL)
	case c.renew <= 0 || c.renew >= c.ttl*2/3:
		return c, fmt.Errorf("shard: renew interval %v must be positive and shorter than 2/3 of the TTL %v", c.renew, c.ttl)
	case c.retry <= 0:
		return c, fmt.Errorf("shard: retry period must be positive, got %v", c.retry)
	case nilness.IsNil(c.clock):
		return c, fmt.Errorf("shard: clock must not be nil (%T)", c.clock)
	case c.log == nil:
		return c, fmt.Errorf("shard: logger must not be nil")
	}
	return c, nil
}
