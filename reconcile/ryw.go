package reconcile

import (
	"context"
	"log/slog"
	"sync/atomic"
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
	// The reconcile's ID and logger (rlog.go): id counts the Loop's
	// reconciles, log is built on demand by logger.
	id       uint64
	idPrefix string
	logger   func(*recorder) *slog.Logger
	log      atomic.Pointer[slog.Logger]
}

// reset readies r for the next reconcile. It stores rev and log only when
// the last reconcile set them: most write nothing and log nothing, and a
// load is cheaper than an atomic store.
func (r *recorder) reset(fresh bool, id uint64, attempt int) {
	if r.rev.Load() != 0 {
		r.rev.Store(0)
	}
	if r.log.Load() != nil {
		r.log.Store(nil)
	}
	r.fresh, r.id, r.attempt = fresh, id, attempt
}

// RecordWrite tells the Loop running the reconcile of ctx that it wrote
// revision rev (the revision a store write returned). When the reconcile
// returns Result{RequeueAfterWrite: true}, the key runs again once the Loop's caches
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
		if err != nil {
			l.mu.Lock()
			s := l.keys[key]
			if s == nil {
				s = &keyState{}
				l.setKeyLocked(key, s)
			}
			s.freshRead = true
			l.mu.Unlock()
		}
		l.addNow(t, key)
	})
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
