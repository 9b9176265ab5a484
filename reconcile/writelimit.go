package reconcile

import (
	"context"
	"time"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/internal/storeaccess"
)

// WithWriteLimit paces every write the Loop makes through a typed Store,
// its reconciles' and its own Stalled writes, with one token bucket
// (backoff.Bucket: Rate per second, Burst at once, a delay never over
// Ceiling; zero fields take backoff's defaults, and a nil Clock the
// Loop's). Each Txn a write sends waits for a token first; past the ceiling
// it waits a capped delay without taking one, so a write never waits more
// than Ceiling and the bucket owes at most Rate·Ceiling tokens. A reconcile
// cancelled while a write waits fails that write with the cancellation.
// A metrics.Loop with a WriteDelayed(controller string, d time.Duration)
// method (no interface to name) is told of every write the limit delayed,
// before it waits, with how long it will wait (at most the ceiling).
//
// It works on the ctx the Loop gives its reconciles: writes made with
// another ctx are not paced. For one limit shared by every Loop of a
// manager.Manager, give the Manager manager.WithWriteLimit(bucket.Wait)
// instead; a Loop's own limit then applies on top of it. Without this option nothing is paced. A bad config
// makes New fail.
func WithWriteLimit(cfg backoff.BucketConfig) Option {
	return optionFunc(func(c *config) error {
		c.writeLimit = &cfg
		return nil
	})
}

// writeLimitMetrics is the optional write-limit hook of a metrics.Loop
// (see WithWriteLimit).
type writeLimitMetrics interface {
	WriteDelayed(controller string, d time.Duration)
}

// newWriteWait returns the Loop's write limit's wait, or nil without one.
func (l *Loop[K]) newWriteWait() (func(context.Context) error, error) {
	if l.cfg.writeLimit == nil {
		return nil, nil
	}
	cfg := *l.cfg.writeLimit
	if cfg.Clock == nil {
		cfg.Clock = l.clk
	}
	b, err := backoff.NewBucket[struct{}](cfg)
	if err != nil {
		return nil, invalid("loop %s: write limit: %v", l.name, err)
	}
	m, _ := l.cfg.metrics.(writeLimitMetrics)
	g, _ := l.metrics.(*guardedMetrics) // set whenever m is: metrics are on
	return func(ctx context.Context) error {
		d := b.When(struct{}{})
		if d <= 0 {
			return nil
		}
		if m != nil && g != nil {
			g.writeDelayed(m, l.name, d)
		}
		t := l.clk.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C():
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}, nil
}

// limitWrites puts the Loop's write limit, if any, on ctx.
func (l *Loop[K]) limitWrites(ctx context.Context) context.Context {
	return storeaccess.WithWriteLimit(ctx, l.writeWait)
}
