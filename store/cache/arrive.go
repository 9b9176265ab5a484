package cache

import (
	"slices"

	"github.com/steady-go/steady/store"
)

// arrive prepares a watch event before the Cache applies it: an object
// WithSelector does not choose becomes a deletion of its key (a no-op when
// the Cache does not hold it), an undecodable value of a name it does not
// choose becomes progress, and an object it keeps is transformed. The
// caller holds c.dispatch, not c.mu.
func (c *Cache[S, T]) arrive(ev *store.Event[S, T]) {
	switch {
	case ev.Progress || ev.Err != nil:
	case ev.Undecodable != nil:
		if !c.cfg.fields.matchesName(ev.Undecodable.Name) || !c.keeps(ev.Undecodable.Name) {
			*ev = store.Event[S, T]{Progress: true, Revision: ev.Revision}
		}
	case ev.Object == nil || ev.Type == store.Deleted:
	case c.cfg.selecting() && !c.selects(ev.Object):
		ev.Type = store.Deleted
	case c.transform != nil:
		c.transformOne(ev.Object)
	}
}

// arriveListing prepares a listing before the Cache applies it: it drops
// what WithSelector does not choose (a ListWatcher may return more than it
// was asked for) and transforms the objects the Cache does not hold at
// their revision. The caller holds c.dispatch, not c.mu; c.items changes
// only under dispatch, so what it reads stays true until the listing is
// applied.
func (c *Cache[S, T]) arriveListing(l *store.List[S, T]) *store.List[S, T] {
	if c.cfg.selecting() {
		kept := *l
		kept.Items = slices.DeleteFunc(slices.Clone(l.Items), func(obj *store.Object[S, T]) bool { return !c.selects(obj) })
		kept.Undecodable = slices.DeleteFunc(slices.Clone(l.Undecodable), func(e *store.DecodeError) bool { return !c.cfg.fields.matchesName(e.Name) || !c.keeps(e.Name) })
		l = &kept
	}
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
