package store

import (
	"fmt"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/internal/clock"
)

// DefaultCachePageSize is how many objects a Cache asks for per List page.
const DefaultCachePageSize = 500

// CacheOption configures NewCache.
type CacheOption func(*cacheConfig)

type cacheConfig struct {
	pageSize int
	policy   backoff.Policy
	clock    clock.Clock
	report   func(error)
}

// WithPageSize sets how many objects each List page of a (re)listing holds
// (default DefaultCachePageSize); 0 lists everything in one page. Negative is
// invalid.
func WithPageSize(n int) CacheOption { return func(c *cacheConfig) { c.pageSize = n } }

// WithRelistBackoff sets the delays between consecutive failed listings or
// watches (default backoff.DefaultPolicy()). The first relist after a
// watch that delivered changes waits Delay(0); each further failure in a row
// waits longer. An invalid policy is invalid.
func WithRelistBackoff(p backoff.Policy) CacheOption { return func(c *cacheConfig) { c.policy = p } }

// WithCacheClock sets the time source of the relist backoff (default the
// real clock, which is virtual under testing/synctest).
func WithCacheClock(clk clock.Clock) CacheOption { return func(c *cacheConfig) { c.clock = clk } }

// WithMutationDetector turns on the mutation detector: the Cache keeps an
// encoded copy of every object it serves and, whenever it replaces or drops
// one (on a watch event or a relist) and on every Check call, compares the
// object with that copy. Every object found modified is reported to report
// as a *MutationError naming it. A test passes t.Error-like function, or
// nil to turn the detector off (the default). It doubles the memory the
// cached objects take, so it is meant for tests.
func WithMutationDetector(report func(error)) CacheOption {
	return func(c *cacheConfig) { c.report = report }
}

func newCacheConfig(opts []CacheOption) (cacheConfig, error) {
	c := cacheConfig{pageSize: DefaultCachePageSize, policy: backoff.DefaultPolicy(), clock: clock.Real{}}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.pageSize < 0 {
		return c, fmt.Errorf("%w: negative cache page size %d", ErrInvalid, c.pageSize)
	}
	if err := c.policy.Validate(); err != nil {
		return c, fmt.Errorf("%w: cache relist backoff: %w", ErrInvalid, err)
	}
	if c.clock == nil {
		c.clock = clock.Real{}
	}
	return c, nil
}
