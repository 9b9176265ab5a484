package cache

import (
	"fmt"
	"log/slog"

	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/store"
)

// WithTransform makes the Cache pass every object it is about to store to
// f first, so that f can strip what the controller never reads (a large
// field, an annotation holding a whole copy of the object) before it takes
// memory for as long as the object is cached: client-go's SetTransform,
// controller-runtime's cache.Options.DefaultTransform.
//
// f changes obj in place. obj was decoded for the Cache and nothing else
// holds it; once f returns it is shared and read-only like every cached
// object, and the mutation detector (see WithMutationDetector) copies it
// after f, so f's changes are never taken for a caller's. f runs once per
// change: on each watch event that adds or modifies an object, and on each
// object of a listing that the Cache does not already hold at that revision
// (a relist that finds nothing new transforms nothing). Deletions are not
// transformed.
//
// The object's identity (Meta.Name, UID and Revision) is kept whatever f
// does. Keep what the Cache's users read: a reconcile source that judges
// changes field by field (reconcile.FromStore) reads Meta.Managed and
// Meta.LastWrite, and the Cache's indexes and selectors read what their
// functions read.
//
// f runs on Run's goroutine, one object at a time. A call of f that panics
// is reported (see Panics) and the object is stored as f left it. A nil f
// stores objects as decoded. An f for other types than the Cache's makes
// Run fail with ErrInvalid.
func WithTransform[S, T any](f func(obj *store.Object[S, T])) Option {
	return func(c *config) {
		if f == nil {
			c.transform = nil
			return
		}
		c.transform = f
	}
}

// transformFor checks WithTransform's argument for a Cache of S and T.
func transformFor[S, T any](f any) (func(*store.Object[S, T]), error) {
	if f == nil {
		return nil, nil
	}
	tf, ok := f.(func(*store.Object[S, T]))
	if !ok {
		return nil, fmt.Errorf("%w: cache WithTransform of a %T, the cache holds %T", store.ErrInvalid, f, (*store.Object[S, T])(nil))
	}
	return tf, nil
}

// transformOne runs the transform on obj under recovery, keeping its
// identity. The caller must not hold c.mu.
func (c *Cache[S, T]) transformOne(obj *store.Object[S, T]) {
	name, uid, rev := obj.Meta.Name, obj.Meta.UID, obj.Meta.Revision
	if p := guard.Call(func() { c.transform(obj) }); p != nil {
		c.reportPanic("transform", p, true, slog.String("object", name))
	}
	obj.Meta.Name, obj.Meta.UID, obj.Meta.Revision = name, uid, rev
}
