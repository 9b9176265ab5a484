package cache

// Listing reports, to a handler, whether the change it is being called with
// was found by a listing rather than delivered by the watch: a change of the
// first listing, of a relist after the watch ended, a periodic relist's
// drift repair, or AddHandler's replay of the cached objects. Filters that
// drop watch events (the reconcile package's predicates) let these through,
// since each is a repair or a first sight that no later event may repeat.
//
// Handlers run one at a time, so, asked from a handler, the answer is about
// the call it is in. Asked from anywhere else it means nothing.
func (c *Cache[S, T]) Listing() bool { return c.listing.Load() }
