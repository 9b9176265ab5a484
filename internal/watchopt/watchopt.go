// Package watchopt carries in a context what steady's own packages ask of
// store.Store.Watch beyond its public contract. Users cannot set it, so
// Store.Watch keeps its documented behaviour for every other caller.
package watchopt

import "context"

type withoutPrevKey struct{}

// WithoutPrev returns ctx marked so that a store.Store.Watch called with it
// (or with a context derived from it) leaves out each event's previous
// state: Event.Prev is nil throughout, a write over an existing value is
// Modified whether or not that value decoded, and a Deleted event's Object
// holds only Meta.Kind, Name and Revision. Everything else (Object of a
// write, Undecodable, Revision, Progress, Err, order) is as documented.
// store/cache uses it: a Cache hands its handlers the object it held for
// the key, never Event.Prev, so decoding the previous state is wasted.
func WithoutPrev(ctx context.Context) context.Context {
	return context.WithValue(ctx, withoutPrevKey{}, true)
}

// Prev reports whether a watch with ctx must decode previous states: true
// unless ctx comes from WithoutPrev.
func Prev(ctx context.Context) bool {
	v, _ := ctx.Value(withoutPrevKey{}).(bool)
	return !v
}
