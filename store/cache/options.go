package cache

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/nilness"
	"github.com/steady-go/steady/store"
)

// DefaultPageSize is how many objects a Cache asks for per List page.
const DefaultPageSize = 500

// DefaultRelistPeriod is how often a Cache relists to repair drift unless
// WithRelistPeriod says otherwise.
const DefaultRelistPeriod = 10 * time.Minute

// MutationDetectorEnv names the environment variable that turns the
// mutation detector on for every Cache created without WithMutationDetector,
// as client-go's KUBE_CACHE_MUTATION_DETECTOR does: a value that
// strconv.ParseBool reads as true ("1", "true") turns it on, and a modified
// object then panics Run's goroutine. It is read by New. steady's own tests
// set it; set it in a TestMain (or CI) to catch code that modifies cached
// objects.
const MutationDetectorEnv = "STEADY_CACHE_MUTATION_DETECTOR"

// Option configures New.
type Option func(*config)

type config struct {
	pageSize int
	policy   backoff.Policy
	clock    clock.Clock
	report   func(error)
	detector bool // WithMutationDetector was given
	onError  func(error)
	log      *slog.Logger
	panicLog *slog.Logger // log, or slog.Default: a panic, or a wait on a Cache nobody runs, is never discarded

	relistPeriod time.Duration
	transform    any            // a func(*store.Object[S, T]), see WithTransform
	labels       store.Selector // see WithSelector
	fields       FieldSelector
	keep         func(name string) bool // see WithKeep
}

// WithRelistPeriod sets how often the Cache lists its kind again while its
// watch runs, to repair drift: a watch that silently loses events and
// carries on (a bug, a proxy, a restored backup) leaves the Cache wrong
// until the next listing. Each period (less up to a quarter of it at random,
// so caches started together spread out) the Cache lists the kind, waits
// for its watch to reach the listing's revision, and reports every
// difference to its handlers as a synthetic Added, Modified or Deleted
// change, counted in DriftRepairs. It waits a quarter of a period at most:
// a stuck watch, which delivers nothing, not even progress, leaves the
// Cache behind by one period and a quarter at most.
//
// The cost is one paginated List of the whole kind per period (pages of
// WithPageSize objects). Over a *store.Store an object the Cache holds at
// the listed revision keeps its cached value and is not decoded again, so
// only the objects written since are: for 100,000 unchanged objects of
// about 1 KB on memstore, a relist allocates 11.8 MB (about 120 bytes an
// object, the pages) in about 4,000 allocations and takes about 90 ms,
// measured by BenchmarkRelist. A ListWatcher that is not a *store.Store (a
// wrapper) decodes every object listed. The default is
// DefaultRelistPeriod; 0 turns periodic relists off (the Cache then relists
// only when its watch ends). Negative is invalid.
func WithRelistPeriod(d time.Duration) Option { return func(c *config) { c.relistPeriod = d } }

// WithLogger sets the logger the Cache reports quarantined values to (see
// Cache.Quarantined): one warning per key and revision. Nil (the default)
// discards them. It also logs, at Error, every panic of a handler, index
// function or error handler (see Cache.Panics); without a logger those go
// to slog.Default.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithErrorHandler sets a function that Run calls, on its own goroutine,
// with every error that made it relist: a failed List or Watch, a watch that
// ended with ErrExpired (or any other error event), or closed without one.
// It is for logs and metrics; Run retries regardless. Nil (the default)
// discards them. It is also called with the panics of handlers and index
// functions (see Cache.Panics); a panic of f itself is logged and counted.
func WithErrorHandler(f func(error)) Option { return func(c *config) { c.onError = f } }

// WithPageSize sets how many objects each List page of a (re)listing holds
// (default DefaultPageSize); 0 lists everything in one page. Negative is
// invalid. Every page is read at the revision of the first; a page after
// the first that fails with ErrExpired (more writes landed meanwhile than
// the backend keeps history for) makes the Cache list the kind again in one
// page, which cannot expire, instead of failing the listing.
func WithPageSize(n int) Option { return func(c *config) { c.pageSize = n } }

// WithRelistBackoff sets the delays between consecutive failed listings or
// watches (default backoff.DefaultPolicy()). The first relist after a
// watch that delivered changes waits Delay(0); each further failure in a row
// waits longer. An invalid policy is invalid.
func WithRelistBackoff(p backoff.Policy) Option { return func(c *config) { c.policy = p } }

// WithClock sets the time source of the relist backoff (default the real
// clock, which is virtual under testing/synctest). Nil keeps the default; a
// typed nil (a nil pointer) is invalid, reported by Run.
func WithClock(clk clock.Clock) Option { return func(c *config) { c.clock = clk } }

// WithMutationDetector turns the mutation detector on, reporting through
// report, or off with nil, whatever MutationDetectorEnv says. The detector
// keeps an encoded copy of every object the Cache serves and, whenever the
// Cache replaces or drops one (on a watch event or a relist) and on every
// Check call, compares the object with that copy; each object found
// modified is passed to report as a *MutationError naming it. A test passes
// something like t.Error.
//
// Without this option the detector is off unless MutationDetectorEnv is
// set. It doubles the memory the cached objects take and encodes each object
// on every change, so it is meant for tests.
func WithMutationDetector(report func(error)) Option {
	return func(c *config) { c.report, c.detector = report, true }
}

func newConfig(opts []Option) (config, error) {
	c := config{pageSize: DefaultPageSize, policy: backoff.DefaultPolicy(), clock: clock.Real{}, relistPeriod: DefaultRelistPeriod}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.relistPeriod < 0 {
		return c, fmt.Errorf("%w: negative cache relist period %v", store.ErrInvalid, c.relistPeriod)
	}
	if err := c.validateSelector(); err != nil {
		return c, err
	}
	if c.pageSize < 0 {
		return c, fmt.Errorf("%w: negative cache page size %d", store.ErrInvalid, c.pageSize)
	}
	if err := c.policy.Validate(); err != nil {
		return c, fmt.Errorf("%w: cache relist backoff: %w", store.ErrInvalid, err)
	}
	switch {
	case c.clock == nil:
		c.clock = clock.Real{}
	case nilness.IsNil(c.clock):
		return c, fmt.Errorf("%w: nil cache clock (%T)", store.ErrInvalid, c.clock)
	}
	c.panicLog = c.log
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
		c.panicLog = slog.Default()
	}
	if !c.detector && detectorFromEnv() {
		c.report = func(err error) { panic(err) }
	}
	return c, nil
}

// detectorFromEnv reports whether MutationDetectorEnv turns the detector on.
func detectorFromEnv() bool {
	on, err := strconv.ParseBool(os.Getenv(MutationDetectorEnv))
	return err == nil && on
}
