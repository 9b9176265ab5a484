package store

import (
	"context"

	"github.com/steady-go/steady/internal/guard"
)

type writeObserverKey struct{}

// WithWriteObserver returns a ctx whose successful writes through any typed
// Store call f with the revision written, before the write returns. The
// reconcile Loop puts one in every reconcile's ctx, so a reconcile's writes
// are known to it (read-your-writes after Result{RequeueAfterWrite: true}, and its own
// writes told apart from other actors' whatever manager name they use)
// without the reconciler reporting them. f must be quick and safe for
// concurrent use. A write that fails, or that changes nothing and so writes
// nothing, is not reported.
//
// Observers chain: when ctx already carries one, both are called (the
// earlier first), so a reconciler that adds its own does not replace the
// Loop's. An observer that panics does not keep the later ones from being
// called; its panic then goes on to the writer (whose write is done), as a
// panic of the writer's own code would: inside a reconcile, the Loop
// reports it as a reconcile panic. A nil f returns ctx unchanged.
func WithWriteObserver(ctx context.Context, f func(rev int64)) context.Context {
	if f == nil {
		return ctx
	}
	if prev, ok := ctx.Value(writeObserverKey{}).(func(int64)); ok && prev != nil {
		next := f
		f = func(rev int64) {
			// A panic of prev must not hide the write from next (the
			// Loop's observer, when prev came with the ctx given to
			// the Loop): next runs, then the panic goes on.
			var p *guard.Panic
			func() {
				defer guard.Catch(&p)
				prev(rev)
			}()
			next(rev)
			if p != nil {
				panic(p.Value)
			}
		}
	}
	return context.WithValue(ctx, writeObserverKey{}, f)
}

func observeWrite(ctx context.Context, rev int64) {
	if f, ok := ctx.Value(writeObserverKey{}).(func(int64)); ok && f != nil {
		f(rev)
	}
}
