package store

import "context"

// Fence is a leadership precondition: a write carrying it succeeds only while
// Key still has CreateRevision Revision, that is, while the leader key that
// began the term has not been deleted (expired, released) and recreated by a
// new leader. Renewals rewrite the key but keep its CreateRevision, so they do
// not invalidate the fence. store/lease hands one out with each term.
type Fence struct {
	Key      string
	Revision int64
}

// Cond returns the fence as a Txn precondition.
func (f Fence) Cond() Cond { return Cond{Key: f.Key, Target: CreateRevision, Revision: f.Revision} }

type fenceKey struct{}

// WithFence returns a ctx whose writes through the typed Store carry f as an
// extra Txn precondition. A write whose fence fails returns ErrFenced.
func WithFence(ctx context.Context, f Fence) context.Context {
	return context.WithValue(ctx, fenceKey{}, f)
}

// FenceFrom returns the fence carried by ctx, if any.
func FenceFrom(ctx context.Context) (Fence, bool) {
	f, ok := ctx.Value(fenceKey{}).(Fence)
	return f, ok
}
