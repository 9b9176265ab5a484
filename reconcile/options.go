package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/clock"
	history "github.com/steady-go/steady/events"
	"github.com/steady-go/steady/internal/nilness"
	"github.com/steady-go/steady/metrics"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/shard"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/lease"
)

// Defaults of the Loop's options.
const (
	// defaultWorkers is the number of keys reconciled at once.
	defaultWorkers = 1
	// defaultResyncPeriod is the time between resync passes: every key is
	// added at low priority this often (±defaultResyncJitter).
	defaultResyncPeriod = 10 * time.Minute
	// defaultResyncJitter spreads each resync period by ±10%.
	defaultResyncJitter = 0.1
	// defaultStallAfter is the number of consecutive failures after which
	// the Loop sets Stalled.
	defaultStallAfter = 5
	// defaultDrainTimeout bounds how long Run waits for in-flight reconciles
	// after its ctx ends.
	defaultDrainTimeout = 30 * time.Second
	// defaultReadYourWritesTimeout bounds how long a Requeue waits for the
	// cache to show the reconcile's last write before running anyway.
	defaultReadYourWritesTimeout = 2 * time.Second
)

// ErrInvalidOption is wrapped by New's error for a bad option.
var ErrInvalidOption = errors.New("reconcile: invalid option")

// Option configures a Loop. Options are plain values; later options override
// earlier ones. None of them involves the Loop's key type: what does (the
// Source, and the ConditionWriter it carries) is New's typed argument, so a
// mismatch does not compile.
type Option interface{ apply(*config) error }

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

type config struct {
	workers      int
	resync       time.Duration
	jitter       float64
	timeout      time.Duration
	policy       backoff.Policy
	bucket       backoff.BucketConfig
	stallAfter   int
	elector      lease.Elector
	sharder      *shard.Sharder // sharding.go
	metrics      metrics.Loop
	logger       *slog.Logger
	drainTimeout time.Duration
	clock        clock.Clock
	manager      string
	loopManager  string
	osc          oscillation.Config
	rywTimeout   time.Duration
	// observe-only (observeonly.go)
	observeOnly   bool
	observeReport func(context.Context, store.DryRunResult)
	events        *history.Recorder     // events.go
	writeLimit    *backoff.BucketConfig // see WithWriteLimit; nil for none
}

func defaultConfig(name string) config {
	return config{
		workers:      defaultWorkers,
		resync:       defaultResyncPeriod,
		jitter:       defaultResyncJitter,
		policy:       backoff.DefaultPolicy(),
		stallAfter:   defaultStallAfter,
		metrics:      metrics.NopLoop{},
		logger:       slog.Default(),
		drainTimeout: defaultDrainTimeout,
		clock:        clock.Real{},
		manager:      name,
		loopManager:  name + "-loop",
		rywTimeout:   defaultReadYourWritesTimeout,
		osc:          oscillation.Config{}.WithDefaults(),
	}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...)
}

// maxWorkers bounds WithWorkers: each worker is a goroutine and a slot made
// when a term starts, so math.MaxInt ("unbounded") would panic in Run.
const maxWorkers = 1 << 16

// WithWorkers sets how many keys are reconciled at once (default 1). n must
// be at least 1 and at most 65,536. One key is never reconciled by two
// workers at once.
func WithWorkers(n int) Option {
	return optionFunc(func(c *config) error {
		switch {
		case n < 1:
			return invalid("workers must be at least 1, got %d", n)
		case n > maxWorkers:
			return invalid("workers must be at most %d, got %d", maxWorkers, n)
		}
		c.workers = n
		return nil
	})
}

// WithResync sets the resync period and its jitter (default 10m, ±10%).
// Every period·U(1−jitter, 1+jitter), every key the sources can list is
// added at low priority: no store reads happen, and a key waiting in backoff
// keeps waiting. period must be positive (there is no "never": resync is what
// repairs a missed event); jitter must be in [0, 1).
func WithResync(period time.Duration, jitter float64) Option {
	return optionFunc(func(c *config) error {
		if period <= 0 {
			return invalid("resync period must be positive, got %v", period)
		}
		if !(jitter >= 0 && jitter < 1) {
			return invalid("resync jitter must be in [0, 1), got %v", jitter)
		}
		c.resync, c.jitter = period, jitter
		return nil
	})
}

// WithTimeout bounds every reconcile: its ctx is cancelled after d with cause
// ErrTimeout (context.WithTimeoutCause). 0, the default, means no timeout;
// negative is invalid.
func WithTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d < 0 {
			return invalid("timeout must not be negative, got %v", d)
		}
		c.timeout = d
		return nil
	})
}

// WithBackoff sets the per-key backoff policy (default
// backoff.DefaultPolicy(): 10ms doubling to a 2m cap, ±20%). The n-th
// consecutive failure waits p.Delay(n−1). The policy must pass Validate.
func WithBackoff(p backoff.Policy) Option {
	return optionFunc(func(c *config) error {
		if err := p.Validate(); err != nil {
			return invalid("backoff: %v", err)
		}
		c.policy = p
		return nil
	})
}

// WithRetryLimit sets the overall retry bucket that paces the retries of all
// keys together (default backoff.BucketConfig{}: 10/s, burst 100, ceiling
// 30s). A failed key waits the longer of its own backoff and the bucket's
// delay. A bad config makes New fail.
func WithRetryLimit(cfg backoff.BucketConfig) Option {
	return optionFunc(func(c *config) error {
		c.bucket = cfg
		return nil
	})
}

// WithStallAfter sets after how many consecutive failures the Loop sets
// Stalled (default 5). n must be at least 1.
func WithStallAfter(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 1 {
			return invalid("stall-after must be at least 1, got %d", n)
		}
		c.stallAfter = n
		return nil
	})
}

// WithElector makes the Loop run its workers only while it leads. Each term
// gets a fresh queue holding every key at low priority, and every reconcile's
// ctx carries the term's fence. Without an elector the Loop always works.
// A Campaign that panics is reported like a reconcile panic and retried a
// second later, like one that returned an error.
func WithElector(e lease.Elector) Option {
	return optionFunc(func(c *config) error {
		if nilness.IsNil(e) {
			return invalid("nil elector (%T)", e)
		}
		c.elector = e
		return nil
	})
}

// WithMetrics sets the metrics sink (default metrics.NopLoop, which takes no
// timestamps).
func WithMetrics(m metrics.Loop) Option {
	return optionFunc(func(c *config) error {
		if nilness.IsNil(m) {
			return invalid("nil metrics (%T)", m)
		}
		c.metrics = m
		return nil
	})
}

// WithLogger sets the logger (default slog.Default(), as it is when New
// runs, so warnings and errors are seen). Each reconcile is logged at Debug
// with controller, key, attempt, duration, result and reconcileID; a key's
// first failure at Warn with the backoff delay, its retries at Debug, its
// move to Stalled at Error (at most 10 first failures and 10 Stalled moves
// a minute, the rest counted in a Warn summary a minute while keys fail);
// panics at Error with the stack; oscillation at Error; a wait for a
// source to sync at Warn every 30 seconds.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) error {
		if l == nil {
			return invalid("nil logger")
		}
		c.logger = l
		return nil
	})
}

// WithDrainTimeout bounds how long Run waits, after its ctx ends, for
// in-flight reconciles to return (default 30s). It must be positive.
func WithDrainTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d <= 0 {
			return invalid("drain timeout must be positive, got %v", d)
		}
		c.drainTimeout = d
		return nil
	})
}

// WithClock sets the time source (default the real clock, which is virtual
// inside a testing/synctest bubble).
func WithClock(clk clock.Clock) Option {
	return optionFunc(func(c *config) error {
		if nilness.IsNil(clk) {
			return invalid("nil clock (%T)", clk)
		}
		c.clock = clk
		return nil
	})
}

// WithFieldManager names the field manager the reconciler writes as
// (default: the Loop's name; see Loop.FieldManager). Own-write suppression
// and oscillation detection judge events against it. The Loop writes its
// Stalled condition as a separate manager, manager+"-loop", so its writes
// never take fields from the reconciler, and a Loop knows the Stalled
// condition it wrote by that manager's ownership of it.
func WithFieldManager(manager string) Option {
	return optionFunc(func(c *config) error {
		if manager == "" {
			return invalid("empty manager")
		}
		c.manager, c.loopManager = manager, manager+"-loop"
		return nil
	})
}

// WithOscillation sets the oscillation detector's window and thresholds
// (default 1m, 3 re-sets for a fight, 10 writes for no progress, a budget
// of 30 writes of any kind without a spec change). Negative
// values are invalid; zero fields keep the defaults.
func WithOscillation(cfg oscillation.Config) Option {
	return optionFunc(func(c *config) error {
		if cfg.Window < 0 || cfg.FightWrites < 0 || cfg.NoProgressWrites < 0 || cfg.MaxWrites < 0 {
			return invalid("oscillation thresholds must not be negative: %+v", cfg)
		}
		c.osc = cfg.WithDefaults()
		return nil
	})
}

// WithReadYourWritesTimeout bounds how long a Requeue waits for the cache to
// show the reconcile's last write (default 2s). After it, the key runs anyway
// and its ctx reports FreshReadNeeded, so the reconciler reads from the store
// instead of the cache. It must be positive.
func WithReadYourWritesTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d <= 0 {
			return invalid("read-your-writes timeout must be positive, got %v", d)
		}
		c.rywTimeout = d
		return nil
	})
}
