package store

import (
	"context"
	"fmt"

	"github.com/steady-go/steady/internal/guard"
)

type writeLimitKey struct{}

// WithWriteLimit returns a ctx whose writes through any typed Store call
// wait first, before each Txn they send to the Backend (an Apply or a
// status write that retries after a concurrent write waits again): a token
// bucket's wait, such as backoff.Bucket's Wait, so that a bug cannot
// hammer a shared store. An error from wait fails the write with it, and a
// wait that panics fails the write with an error naming the panic; either
// way nothing is written. The reconcile Loop puts one in its ctx when given
// reconcile.WithWriteLimit; give one to the ctx of Manager.Run for a limit
// shared by every Loop of a Manager.
//
// Limits chain: when ctx already carries one, a write waits for both (the
// earlier first). A nil wait returns ctx unchanged.
func WithWriteLimit(ctx context.Context, wait func(context.Context) error) context.Context {
	if wait == nil {
		return ctx
	}
	if prev, ok := ctx.Value(writeLimitKey{}).(func(context.Context) error); ok {
		inner := wait
		wait = func(ctx context.Context) error {
			if err := prev(ctx); err != nil {
				return err
			}
			return inner(ctx)
		}
	}
	return context.WithValue(ctx, writeLimitKey{}, wait)
}

// waitWriteLimit waits for ctx's write limit, if any.
func waitWriteLimit(ctx context.Context) (err error) {
	wait, ok := ctx.Value(writeLimitKey{}).(func(context.Context) error)
	if !ok {
		return nil
	}
	if p := guard.Call(func() { err = wait(ctx) }); p != nil {
		return fmt.Errorf("store: write limit %w", p)
	}
	if err != nil {
		return fmt.Errorf("store: write limit: %w", err)
	}
	return nil
}
