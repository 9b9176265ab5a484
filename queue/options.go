package queue

import (
	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/workqueue"
)

// Option configures a Queue. Options are plain values that compose: pass
// any number to New, in any order; a later option overrides an earlier one
// of the same kind, and a nil Option is ignored.
//
// Option is not generic, so New[K]() and every option work without naming
// K again. The one setting that depends on the key type, the rate limiter,
// is an argument of NewRateLimited, so a limiter of the wrong key type is a
// compile error rather than a failure at run time.
type Option func(*options)

// options collects the core queue's options.
type options struct{ w []workqueue.Option }

// WithName names the queue, for the caller's metrics and logs. The queue
// itself only returns it from Name.
func WithName(name string) Option {
	return func(o *options) { o.w = append(o.w, workqueue.WithName(name)) }
}

// WithClock makes the queue read time and set its timer through c instead
// of the real clock. A nil c, or a typed nil (a nil pointer), means the
// real clock. Under testing/synctest
// the real clock is already virtual, so tests rarely need this.
func WithClock(c clock.Clock) Option {
	return func(o *options) { o.w = append(o.w, workqueue.WithClock(c)) }
}

// WithMetrics makes the queue report to m (see Metrics). A nil m, or a
// typed nil (a nil pointer), means no metrics, which is the default, and then the queue reads no clock on its
// hot paths.
func WithMetrics(m Metrics) Option {
	return func(o *options) { o.w = append(o.w, workqueue.WithMetrics(m)) }
}

// WithBackoff makes AddRateLimited delay the n-th consecutive failure of a
// key (from 0) by exactly p.Delay(n), from the failure count the queue keeps
// in its entry for the key, with no overall bucket pacing all keys together
// (the default has one; see AddRateLimited). The queue calls p.Rand under
// its lock; when p.Rand is nil it draws the jitter from its own generator
// instead, as backoff.PerKey does. p should pass Policy.Validate: Delay
// keeps any policy's delays within [0, p.Cap], so a bad one gives odd
// delays but never a panic. A limiter given to NewRateLimited takes
// precedence.
func WithBackoff(p backoff.Policy) Option {
	return func(o *options) { o.w = append(o.w, workqueue.WithBackoff(p)) }
}
