package queue

import (
	"github.com/steady-go/steady/clock"
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

type options struct {
	name    string
	clock   clock.Clock
	metrics Metrics
}

// WithName names the queue, for the caller's metrics and logs. The queue
// itself only returns it from Name.
func WithName(name string) Option {
	return func(o *options) { o.name = name }
}

// WithClock makes the queue read time and set its timer through c instead
// of the real clock. A nil c means the real clock. Under testing/synctest
// the real clock is already virtual, so tests rarely need this.
func WithClock(c clock.Clock) Option {
	return func(o *options) { o.clock = c }
}

// WithMetrics makes the queue report to m (see Metrics). A nil m means no
// metrics, which is the default, and then the queue reads no clock on its
// hot paths.
func WithMetrics(m Metrics) Option {
	return func(o *options) { o.metrics = m }
}
