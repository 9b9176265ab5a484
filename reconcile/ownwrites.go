package reconcile

import (
	"sync"
	"sync/atomic"
)

// ownWrites knows a Loop's own writes by what its reconciles wrote, not by
// the manager name they wrote as: every revision a reconcile's ctx reports
// (the store's write observer, or RecordWrite) is remembered until a cache
// source sees it, and the manager that wrote it is learned then. A cache
// event is the Loop's own when its revision was written by a reconcile, or
// when its writer is a manager a reconcile of this Loop wrote as before. So
// a Loop named "apps" whose reconciler writes status as "app-controller"
// judges those writes as its own, exactly as when the names match.
//
// A write's event can reach a cache before the store reports the write to
// the reconcile's observer (the report follows the commit); then the event
// is judged by name alone. Only the first write under a new name can be
// missed that way, and a missed own write costs one extra reconcile.
type ownWrites struct {
	on    atomic.Bool // a cache source judges writes: record them
	mu    sync.Mutex
	revs  map[int64]struct{}
	names map[string]struct{}
	prune int // len(revs) past which wrote prunes: twice what the last prune kept
}

// maxOwnRevs bounds the revisions remembered: past it, those that every
// cache has already passed (they will never be judged) are dropped. While
// the caches lag, a prune drops few, so the next waits until the revisions
// have doubled: a prune scans them all, and each write must not.
const maxOwnRevs = 1024

// wrote records a revision a reconcile wrote. floor returns the lowest
// revision every cache reflects; it is called only to prune.
func (o *ownWrites) wrote(rev int64, floor func() int64) {
	if rev <= 0 || !o.on.Load() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.revs == nil {
		o.revs = map[int64]struct{}{}
	}
	o.revs[rev] = struct{}{}
	if len(o.revs) > max(o.prune, maxOwnRevs) {
		f := floor()
		for r := range o.revs {
			if r <= f {
				delete(o.revs, r)
			}
		}
		o.prune = 2 * len(o.revs)
	}
}

// own reports whether the write of revision rev by manager is the Loop's
// own, learning manager as one of the Loop's when rev was.
func (o *ownWrites) own(manager string, rev int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.revs[rev]; ok {
		delete(o.revs, rev)
		if o.names == nil {
			o.names = map[string]struct{}{}
		}
		o.names[manager] = struct{}{}
		return true
	}
	_, ok := o.names[manager]
	return ok
}
