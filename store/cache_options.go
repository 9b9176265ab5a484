package store

import (
	"fmt"
	"testing"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/clock"
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
	detector bool // WithMutationDetector was given
	onError  func(error)
}

// WithErrorHandler sets a function that Run calls, on its own goroutine,
// with every error that made it relist: a failed List or Watch, a watch that
// ended with ErrExpired (or any other error event), or closed without one.
// It is for logs and metrics; Run retries regardless. Nil (the default)
// discards them.
func WithErrorHandler(f func(error)) CacheOption { return func(c *cacheConfig) { c.onError = f } }

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

// WithMutationDetector sets how the mutation detector reports, or turns it
// off with nil. The detector keeps an encoded copy of every object the Cache
// serves and, whenever the Cache replaces or drops one (on a watch event or
// a relist) and on every Check call, compares the object with that copy;
// each object found modified is passed to report as a *MutationError naming
// it. A test passes something like t.Error.
//
// Without this option the detector is on in test binaries (testing.Testing
// reports true), where a modified object panics Run's goroutine, failing the
// test run; elsewhere it is off. It doubles the memory the cached objects
// take and encodes each object on every change, so it is meant for tests.
func WithMutationDetector(report func(error)) CacheOption {
	return func(c *cacheConfig) { c.report, c.detector = report, true }
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
	if !c.detector && testing.Testing() {
		c.report = func(err error) { panic(err) }
	}
	return c, nil
}
