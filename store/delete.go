package store

import (
	"context"
	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store/kv"
)

// Delete removes the object called name, in one of two ways:
//
//   - With finalizers, it sets Meta.DeletionRequested (stamping LastWrite
//     with ownership.OpDeleteMark) and the object stays until an Update removes its
//     last finalizer, which deletes it. Deleting an object whose deletion is
//     already requested writes nothing and returns its current revision.
//   - Without finalizers, it removes the object.
//
// It returns the revision of its write. A missing object gives an error
// wrapping ErrNotFound (IgnoreNotFound makes "delete if present" one line).
// WithRevision and WithUID make it conditional on the object not having been
// written, or replaced, since it was read; a failed precondition gives
// ErrConflict. Without them, a write by someone else between Delete's read
// and its write makes it re-read and try again.
func (w *Writer[S, T]) Delete(ctx context.Context, name string, opts ...WriteOption) (rev int64, err error) {
	ctx, d := beginDry(ctx, w, opts, "Delete", name)
	if d != nil {
		defer func() { d.end(err) }()
	}
	if err := w.checkName(name); err != nil {
		return 0, err
	}
	var cfg writeConfig
	if err := writeOpts(&cfg, "Delete", optRevision|optUID, opts); err != nil {
		return 0, err
	}
	key, mem, sides := w.s.latest(name)
	return write(ctx, w.s, "delete of", key, name, mem, sides, nil, false, func(cur *rawObject, _ decodedSides) (int64, verdict, error) {
		return w.delete(ctx, key, name, cfg, cur)
	})
}

// delete is one attempt of Delete against cur, the current object, stored
// under key (see write).
func (w *Writer[S, T]) delete(ctx context.Context, key, name string, cfg writeConfig, cur *rawObject) (int64, verdict, error) {
	if err := w.checkRevision(name, cur, cfg.revision); err != nil {
		return 0, decided, err
	}
	if err := w.checkUID(cur, cfg.uid); err != nil {
		return 0, decided, err
	}
	if cur.Meta.DeletionRequested && len(cur.Meta.Finalizers) > 0 {
		return cur.Meta.Revision, decided, nil
	}
	// Without finalizers, store deletes it.
	next := *cur
	next.Meta.DeletionRequested = true
	next.Meta.LastWrite = LastWrite{Manager: w.manager, Op: ownership.OpDeleteMark}
	own := kv.Cond{Key: key, Target: kv.ModRevision, Revision: cur.Meta.Revision}
	rev, _, err := w.store(ctx, own, cur, &next, decodedSides{})
	v, err := w.landed(name, cfg.revision, err)
	if v != answered || err != nil {
		return 0, v, err
	}
	return rev, v, nil
}
