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

// Hooks are what a ctx asks of the writes made with it through a typed
// store, under one ctx key, so that a write looks them up once rather than
// once each (every lookup that misses walks the whole chain of a
// reconcile's ctx). Each setter (With here, storeaccess.WithWriteLimit,
// store.WithWriteObserver, WithFence, WithoutFence, WithDryRun, a write's
// own dry run) puts a copy of the nearest Hooks with its one field set, so
// the nearest setting of each field wins, as with a key of its own. A
// Hooks in a ctx is never modified: read it, copy it to change it.
type Hooks struct {
	// Func is the reconcile Loop's observer (With).
	Func Func
	// Limit is the write limit's wait (storeaccess.WithWriteLimit).
	Limit func(context.Context) error
	// Observer is store.WithWriteObserver's, chained.
	Observer func(rev int64)
	// Fence is package store's: a store.Fence from WithFence, or
	// WithoutFence's marker (no fence).
	Fence any
	// DryReport is store.WithDryRun's report, chained.
	DryReport any
	// Dry is the dry run of the write in progress (package store's).
	Dry any
}

var none Hooks

// HooksOf returns ctx's Hooks, or an empty one when it has none: read only.
func HooksOf(ctx context.Context) *Hooks {
	if h, ok := ctx.Value(key{}).(*Hooks); ok {
		return h
	}
	return &none
}

// Edit returns a copy of ctx's Hooks to change and put back with WithHooks.
func Edit(ctx context.Context) *Hooks {
	return HooksOf(ctx).Copy()
}

// Copy returns a copy of h to change and put back with WithHooks.
func (h *Hooks) Copy() *Hooks {
	c := *h
	return &c
}

// WithHooks returns a ctx carrying h, which nothing may modify afterwards.
func WithHooks(ctx context.Context, h *Hooks) context.Context {
	return context.WithValue(ctx, key{}, h)
}

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
	h := Edit(ctx)
	h.Func = f
	return WithHooks(ctx, h)
}

// Observe tells ctx's Func, if any, of a write of object name at rev to
// backend.
func Observe(ctx context.Context, backend any, name string, rev int64) {
	HooksOf(ctx).Observe(backend, name, rev)
}

// Observe tells h's Func, if any, of a write of object name at rev to
// backend.
func (h *Hooks) Observe(backend any, name string, rev int64) {
	if h.Func != nil {
		h.Func(backend, name, rev)
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
