package cache

import "github.com/steady-go/steady/store"

// arrive prepares a watch event before the Cache applies it: it transforms
// the object an addition or modification brings. The caller holds
// c.dispatch, not c.mu.
func (c *Cache[S, T]) arrive(ev store.Event[S, T]) store.Event[S, T] {
	if ev.Progress || ev.Object == nil || ev.Undecodable != nil || ev.Type == store.Deleted {
		return ev
	}
	if c.transform != nil {
		c.transformOne(ev.Object)
	}
	return ev
}

// arriveListing prepares a listing before the Cache applies it: it
// transforms the objects the Cache does not hold at their revision. The
// caller holds c.dispatch, not c.mu; c.items changes only under dispatch,
// so what it reads stays true until the listing is applied.
func (c *Cache[S, T]) arriveListing(l *store.List[S, T]) *store.List[S, T] {
	if c.transform == nil {
		return l
	}
	c.mu.RLock()
	var fresh []*store.Object[S, T]
	for _, obj := range l.Items {
		if old := c.items[obj.Meta.Name]; old == nil || old.Meta.UID != obj.Meta.UID || old.Meta.Revision != obj.Meta.Revision {
			fresh = append(fresh, obj)
		}
	}
	c.mu.RUnlock()
	for _, obj := range fresh {
		c.transformOne(obj)
	}
	return l
}
