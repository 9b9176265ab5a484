package store

import (
	"context"

	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/internal/wrote"
)

// WithWriteObserver returns a ctx whose successful writes through any typed
// Store call f with the revision written, before the write returns. The
// reconcile Loop learns of every reconcile's writes the same way, through
// a channel of its own that also names the backend written (so that it
// compares a revision only with caches of that backend) and the object:
// read-your-writes after Result{RequeueAfterWrite: true}, and its own
// writes told apart from other actors' whatever manager name they use,
// and judged per key, without the reconciler reporting them. f must be quick and safe for concurrent use.
// A write that fails, or that changes nothing and so writes nothing, is
// not reported.
//
// Observers chain: when ctx already carries one, both are called (the
// earlier first), so a reconciler that adds its own does not replace one
// a caller added. The Loop's is called before them all. An observer that
// panics does not keep the later ones from being called; its panic then
// goes on to the writer (whose write is done), as a panic of the writer's
// own code would: inside a reconcile, the Loop reports it as a reconcile
// panic. A nil f returns ctx unchanged.
func WithWriteObserver(ctx context.Context, f func(rev int64)) context.Context {
	if f == nil {
		return ctx
	}
	h := wrote.Edit(ctx)
	if prev := h.Observer; prev != nil {
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
	h.Observer = f
	return wrote.WithHooks(ctx, h)
}

// observeWrite reports a write of object name at rev to b, made with a
// ctx whose write hooks are h: first to the reconcile Loop (package wrote,
// which needs the backend: revisions of two backends are unrelated; and
// the name, to judge the write per key), then to the observers of
// WithWriteObserver, so that a panic of a user's observer never hides a
// write from the Loop.
func observeWrite(h *wrote.Hooks, b any, name string, rev int64) {
	h.Observe(b, name, rev)
	if f := h.Observer; f != nil {
		f(rev)
	}
}
