package storeaccess

import (
	"context"
	"fmt"

	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/internal/wrote"
)

// WithWriteLimit returns a ctx whose writes through any typed Store call
// wait first, before each Txn they send to the Backend (an Apply or a
// status write that retries after a concurrent write waits again): a token
// bucket's wait, such as backoff.Bucket's Wait. reconcile.WithWriteLimit
// and manager.WithWriteLimit put one on the ctx of a Loop's reconciles.
// It is one of ctx's write hooks (wrote.Hooks).
//
// Limits chain: when ctx already carries one, a write waits for both (the
// earlier first). A nil wait returns ctx unchanged.
func WithWriteLimit(ctx context.Context, wait func(context.Context) error) context.Context {
	if wait == nil {
		return ctx
	}
	h := wrote.Edit(ctx)
	if prev := h.Limit; prev != nil {
		inner := wait
		wait = func(ctx context.Context) error {
			if err := prev(ctx); err != nil {
				return err
			}
			return inner(ctx)
		}
	}
	h.Limit = wait
	return wrote.WithHooks(ctx, h)
}

// WaitWriteLimit waits for the write limit of h, ctx's write hooks
// (wrote.HooksOf(ctx), which the caller looked up once for all of them),
// if any. An error from the wait is returned wrapped, and a wait that
// panics gives an error naming the panic: either way the caller writes
// nothing.
func WaitWriteLimit(ctx context.Context, h *wrote.Hooks) (err error) {
	wait := h.Limit
	if wait == nil {
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
