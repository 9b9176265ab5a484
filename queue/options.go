package queue

import (
	"fmt"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/internal/clock"
)

// Option configures a Queue. Options are plain values that compose: pass
// any number to New, in any order; a later option overrides an earlier one
// of the same kind, and a nil Option is ignored.
//
// Option is not generic, so New[K]() and every option work without naming
// K again: only WithRateLimiter depends on the key type, and it infers K
// from the limiter it is given.
type Option func(*options)

type options struct {
	name    string
	clock   clock.Clock
	limiter any // a backoff.Limiter[K]; New checks K
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

// WithRateLimiter makes AddRateLimited, Forget and NumRequeues use l
// instead of backoff.NewDefault. A nil l means the default. The limiter's
// key type must be the queue's: New panics otherwise.
func WithRateLimiter[K comparable](l backoff.Limiter[K]) Option {
	return func(o *options) {
		if l == nil {
			o.limiter = nil
			return
		}
		o.limiter = l
	}
}

// WithMetrics makes the queue report to m (see Metrics). A nil m means no
// metrics, which is the default, and then the queue reads no clock on its
// hot paths.
func WithMetrics(m Metrics) Option {
	return func(o *options) { o.metrics = m }
}

func (o *options) limiterMismatch(q any) string {
	return fmt.Sprintf("queue: WithRateLimiter got a %T, which does not limit the key type of %T", o.limiter, q)
}
