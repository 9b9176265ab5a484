package reconcile

import (
	"context"
	"sync/atomic"
	"time"
)

type recorderKey struct{}

// recorder collects, for one reconcile, the highest store revision it
// wrote. There is one per worker, reused for every reconcile.
type recorder struct {
	rev     atomic.Int64
	fresh   bool
	attempt int // see Attempt
	// own tells the Loop of every revision written, so that its cache
	// sources know the write as the Loop's own (ownWrites).
	own func(rev int64)
}

func (r *recorder) reset(fresh bool) {
	r.rev.Store(0)
	r.fresh = fresh
}

// RecordWrite tells the Loop running the reconcile of ctx that it wrote
// revision rev (the revision a store write returned). When the reconcile
// returns Result{Requeue: true}, the key runs again once the Loop's caches
// hold the highest revision recorded (read-your-writes). It is safe to call
// from several goroutines, and does nothing for a ctx that does not come from
// a Loop or for rev ≤ 0.
//
// Writes through a typed store.Store made with the reconcile's ctx are
// recorded automatically (the Loop puts a store.WithWriteObserver in it);
// call RecordWrite for writes the store does not see, such as those of
// another client whose revisions share the store's.
func RecordWrite(ctx context.Context, rev int64) {
	r, ok := ctx.Value(recorderKey{}).(*recorder)
	if !ok {
		return
	}
	r.record(rev)
}

// record keeps the highest revision seen.
func (r *recorder) record(rev int64) {
	if rev <= 0 {
		return
	}
	if r.own != nil {
		r.own(rev)
	}
	for {
		cur := r.rev.Load()
		if rev <= cur || r.rev.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// FreshReadNeeded reports whether this reconcile follows a Requeue whose
// write the cache did not show within the read-your-writes timeout: the
// reconciler should read the object from the store rather than from the
// cache. It is false for a ctx that does not come from a Loop.
func FreshReadNeeded(ctx context.Context) bool {
	r, ok := ctx.Value(recorderKey{}).(*recorder)
	return ok && r.fresh
}

// requeueAfterWrite adds key once every cache holds rev, or after the
// read-your-writes timeout, marking the key for a fresh read then.
func (l *Loop[K]) requeueAfterWrite(t *term[K], key K, rev int64) {
	pending := false
	if rev > 0 {
		for _, w := range l.waiters {
			if w.Revision() < rev {
				pending = true
				break
			}
		}
	}
	if !pending {
		l.addNow(t, key)
		return
	}
	t.bg.Go(func() {
		ctx, cancel := context.WithTimeout(t.ctx, l.cfg.rywTimeout)
		defer cancel()
		var err error
		for _, w := range l.waiters {
			if err = w.WaitFor(ctx, rev); err != nil {
				break
			}
		}
		if t.ctx.Err() != nil {
			return
		}
		l.mu.Lock()
		s := l.keys[key]
		if err != nil && s == nil {
			s = &keyState{}
			l.setKeyLocked(key, s)
		}
		if err != nil {
			s.freshRead = true
		}
		if s != nil {
			l.releaseCacheHoldLocked(s)
		}
		l.mu.Unlock()
		l.addNow(t, key)
	})
}

// holdForCache holds key's passes until every cache holds rev, the
// revision a conflict says the object is stored at, or until the
// read-your-writes timeout: a pass before then would read the same stale
// object from a cache that runs behind the writer, and conflict again.
// Hints for the key meanwhile (the cache's events up to rev) are dropped
// by the worker (waitsForCache); requeueAfterWrite runs the key when the
// hold ends.
func (l *Loop[K]) holdForCache(key K, rev int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.keys[key]
	if s == nil {
		s = &keyState{}
		l.setKeyLocked(key, s)
	}
	if s.cacheRev == 0 {
		l.cacheHolds.Add(1)
	}
	s.cacheRev, s.cacheUntil = rev, l.clk.Now().Add(l.cfg.rywTimeout)
}

// waitsForCache reports whether key, handed to a worker, waits for the
// caches (see holdForCache); a hold found over is dropped.
func (l *Loop[K]) waitsForCache(key K) bool {
	if l.cacheHolds.Load() == 0 {
		return false
	}
	l.mu.Lock()
	s := l.keys[key]
	var rev int64
	if s != nil && l.clk.Now().Before(s.cacheUntil) {
		rev = s.cacheRev
	}
	l.mu.Unlock()
	if rev > 0 && l.cachesBehind(rev) {
		return true
	}
	l.mu.Lock()
	if s := l.keys[key]; s != nil && (s.cacheRev <= rev || rev == 0) {
		l.releaseCacheHoldLocked(s)
	}
	l.mu.Unlock()
	return false
}

// dropCacheHolds ends every key's hold for the caches. A term's holds end
// with it: the term's requeueAfterWrite that would run a held key ends
// too, so a hold left standing would drop the next term's hints for the
// key until it timed out.
func (l *Loop[K]) dropCacheHolds() {
	if l.cacheHolds.Load() == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.keys {
		l.releaseCacheHoldLocked(s)
	}
}

// releaseCacheHoldLocked ends s's hold for the caches, if it has one.
func (l *Loop[K]) releaseCacheHoldLocked(s *keyState) {
	if s.cacheRev != 0 {
		s.cacheRev, s.cacheUntil = 0, time.Time{}
		l.cacheHolds.Add(-1)
	}
}

// cachesBehind reports whether the Loop has caches to wait on and one of
// them does not hold rev yet (false for rev ≤ 0).
func (l *Loop[K]) cachesBehind(rev int64) bool {
	return rev > 0 && len(l.waiters) > 0 && l.cacheFloor() < rev
}

// cacheFloor returns the lowest revision every cache source reflects.
func (l *Loop[K]) cacheFloor() int64 {
	var f int64
	for i, w := range l.waiters {
		if r := w.Revision(); i == 0 || r < f {
			f = r
		}
	}
	return f
}
