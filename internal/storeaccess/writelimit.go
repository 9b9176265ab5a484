package storeaccess

import (
	"context"
	"fmt"

	"github.com/steady-go/steady/internal/guard"
)

type writeLimitKey struct{}

// WithWriteLimit returns a ctx whose writes through any typed Store call
// wait first, before each Txn they send to the Backend (an Apply or a
// status write that retries after a concurrent write waits again): a token
// bucket's wait, such as backoff.Bucket's Wait. reconcile.WithWriteLimit
// and manager.WithWriteLimit put one on the ctx of a Loop's reconciles.
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

// WaitWriteLimit waits for ctx's write limit, if any. An error from the
// wait is returned wrapped, and a wait that panics gives an error naming
// the panic: either way the caller writes nothing.
func WaitWriteLimit(ctx context.Context) (err error) {
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
