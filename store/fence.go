package store

import (
	"context"
	"fmt"

	"github.com/steady-go/steady/internal/wrote"
	"github.com/steady-go/steady/store/kv"
)

// Fence is a leadership precondition: a write carrying it succeeds only while
// Key still has CreateRevision Revision, that is, while the leader key that
// began the term has not been deleted (expired, released) and recreated by a
// new leader. Renewals rewrite the key but keep its CreateRevision, so they do
// not invalidate the fence. store/lease hands one out with each term.
type Fence struct {
	Key      string
	Revision int64
}

// cond returns f as a Txn precondition.
func (f Fence) cond() kv.Cond {
	return kv.Cond{Key: f.Key, Target: kv.CreateRevision, Revision: f.Revision}
}

// WithFence returns a ctx whose writes through the typed Store carry f as an
// extra Txn precondition. A write whose fence fails returns ErrFenced.
func WithFence(ctx context.Context, f Fence) context.Context {
	return withFence(ctx, f)
}

// withFence puts fence, a Fence or noFence, in ctx's write hooks.
func withFence(ctx context.Context, fence any) context.Context {
	h := wrote.Edit(ctx)
	h.Fence = fence
	return wrote.WithHooks(ctx, h)
}

// FenceFrom returns the fence carried by ctx, if any.
func FenceFrom(ctx context.Context) (Fence, bool) {
	return fenceOf(wrote.HooksOf(ctx))
}

// fenceOf is FenceFrom of a ctx whose write hooks are h.
func fenceOf(h *wrote.Hooks) (Fence, bool) {
	f, ok := h.Fence.(Fence)
	return f, ok
}

type noFence struct{}

// WithoutFence returns a ctx whose writes carry no fence, for a term's
// writes to a store whose backend does not hold the lease (a fence can be
// checked only in the backend that holds its key). Such writes are not
// fenced: a deposed leader may still make one, so make them idempotent or
// owned (Apply) there. ctx's deadline and cancellation still apply.
func WithoutFence(ctx context.Context) context.Context {
	return withFence(ctx, noFence{})
}

// fenceFailed is the error of a write whose fence failed with the key's
// create revision now actual. A key absent from the backend is also what a
// fence from another backend's lease looks like, so the error says both.
func fenceFailed(f Fence, actual int64) error {
	if actual == 0 {
		return fmt.Errorf("%w: fence %q (created at revision %d) is not in this store's backend: the term is over, "+
			"or the lease lives in another backend, whose fence this backend cannot check "+
			"(write to this store with store.WithoutFence(ctx))", ErrFenced, f.Key, f.Revision)
	}
	return fmt.Errorf("%w: fence %q at revision %d no longer holds (have %d)", ErrFenced, f.Key, f.Revision, actual)
}
