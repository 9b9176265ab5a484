// Package wrote carries in a ctx the observer a reconcile Loop gives its
// reconciles: a typed store reports each write made with that ctx, with the
// revision written, the name of the object written and the backend it was
// written to. Revisions of two
// backends are unrelated counters, so the Loop compares a revision only with
// the revisions of caches over the same backend (read-your-writes, and the
// judging of its own writes). store.WithWriteObserver, for users, reports
// the revision alone; this is the Loop's own channel, beside it. A write
// whose precondition failed against a stored object says, the same way,
// where and at what revision that object is stored (Stale).
package wrote

import "context"

type key struct{}

// Func is told of one write: the backend it went to (the store's Backend, an
// opaque identity; nil when unknown), the name of the object written (its
// Meta.Name, without the store's key prefix) and the revision it wrote.
// The Loop judges an own write per key by the name: a reconcile's write of
// another key's object is a hint for that key.
type Func func(backend any, name string, rev int64)

// With returns a ctx whose writes through a typed store call f. It replaces
// any f ctx carried before; a nil f returns ctx unchanged.
func With(ctx context.Context, f Func) context.Context {
	if f == nil {
		return ctx
	}
	return context.WithValue(ctx, key{}, f)
}

// Observe tells ctx's Func, if any, of a write of object name at rev to
// backend.
func Observe(ctx context.Context, backend any, name string, rev int64) {
	if f, ok := ctx.Value(key{}).(Func); ok {
		f(backend, name, rev)
	}
}

// Stale is the error of a typed store's write whose precondition failed
// against the stored object: Err, which wraps store.ErrConflict, with the
// backend the object is stored in (the store's Backend, as Func is told
// it) and its revision there. The Loop reads it to tell a pass that read an
// older state from a cache that runs behind the store (the cache will
// deliver the stored state, and the pass can wait for it) from one that
// read what is stored. Its text and chain are Err's.
type Stale struct {
	Err      error
	Backend  any
	Revision int64
}

func (e *Stale) Error() string { return e.Err.Error() }
func (e *Stale) Unwrap() error { return e.Err }
