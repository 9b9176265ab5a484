package lease

import (
	"context"

	"github.com/steady-go/steady/store"
)

// Elector chooses one leader among candidates. StoreElector is the
// implementation over any kv.Backend; etcdstore offers one over etcd.
//
// Campaign blocks until the caller leads, or until ctx ends (then it returns
// ctx's error). On success it returns a term context and the term's Fence. The
// term context is derived from ctx, already carries the fence (so every store
// write made with it is fenced), and is cancelled when the term ends: when ctx
// ends, when renewal fails, or at the latest 2/3 of the lease TTL after the
// last successful renewal, so a leader stops working before another candidate
// can take over. context.Cause of the term context says why it ended. The
// leader resigns by cancelling ctx. Campaign may be called again after a term
// ends. Implementations are safe for concurrent use.
//
// An implementation whose terms end with work done after the term context
// ended (releasing the lease, so the next leader need not wait out its TTL)
// should also have a method Wait(), which blocks, for a bounded time, until
// every term it began whose campaign ctx has ended has ended and that work
// is done (a term whose ctx lives, another user's of a shared elector, is
// not waited for). reconcile.Loop and
// manager.Manager call it before their Run returns, and go on after 30
// seconds with an Error log if it has not returned. StoreElector and
// etcdstore's Elector have it.
type Elector interface {
	Campaign(ctx context.Context) (term context.Context, fence store.Fence, err error)
}

// WithFence returns a ctx whose store writes carry f; see store.WithFence.
func WithFence(ctx context.Context, f store.Fence) context.Context {
	return store.WithFence(ctx, f)
}
