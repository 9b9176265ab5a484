package store

import (
	"context"
	"fmt"
)

// Delete removes the object called name, in one of two ways:
//
//   - With finalizers, it sets Meta.DeletionRequested (stamping LastWrite
//     with OpDeleteMark) and the object stays until an Update removes its
//     last finalizer, which deletes it. Deleting an object whose deletion is
//     already requested writes nothing and returns its current revision.
//   - Without finalizers, it removes the object.
//
// It returns the revision of its write. A missing object gives an error
// wrapping ErrNotFound (IgnoreNotFound makes "delete if present" one line).
// IfRevision and IfUID make it conditional on the object not having been
// written, or replaced, since it was read; a failed precondition gives
// ErrConflict. Without them, a write by someone else between Delete's read
// and its write makes it re-read and try again.
func (w *Writer[S, T]) Delete(ctx context.Context, name string, opts ...DeleteOption) (rev int64, err error) {
	ctx, d := beginDry(ctx, w, opts, "Delete", name)
	if d != nil {
		defer func() { d.end(err) }()
	}
	if w.manager == "" {
		return 0, fmt.Errorf("%w: write without a manager (use Store.As with a name)", ErrInvalid)
	}
	if err := ValidateName(name); err != nil {
		return 0, err
	}
	var cfg deleteConfig
	for _, o := range opts {
		o.applyDelete(&cfg)
	}
	if cur := w.s.latest(name); cur != nil {
		if rev, done, err := w.delete(ctx, name, cfg, cur, true); done {
			return rev, err
		}
	}
	for range maxAttempts {
		cur, err := w.s.getRaw(ctx, name)
		if err != nil {
			return 0, err
		}
		if rev, done, err := w.delete(ctx, name, cfg, cur, false); done {
			return rev, err
		}
	}
	return 0, fmt.Errorf("%w: delete of %s %q: gave up after %d concurrent writes", ErrConflict, w.s.kind, name, maxAttempts)
}

// delete is one attempt of Delete against cur, the stored object. It reports
// done unless the write's condition on cur failed, for Delete to read and
// try again. With remembered, cur is the Store's memory of the latest value
// of the object (see WithLastValues), which may be out of date: then delete
// reports done only when it wrote, and leaves anything else (nothing to
// write, a failed check, an error) to the read of the stored object, so that
// both ways give the same results.
func (w *Writer[S, T]) delete(ctx context.Context, name string, cfg deleteConfig, cur *rawObject, remembered bool) (int64, bool, error) {
	fail := func(err error) (int64, bool, error) {
		if remembered {
			return 0, false, nil // confirm with a read
		}
		return 0, true, err
	}
	if cfg.revision != 0 && cur.Meta.Revision != cfg.revision {
		return fail(w.conflict(name, cfg.revision, cur.Meta.Revision))
	}
	if cfg.uid != "" && cur.Meta.UID != cfg.uid {
		return fail(fmt.Errorf("%w: %s %q was replaced (UID %s, want %s)", ErrConflict, w.s.kind, name, cur.Meta.UID, cfg.uid))
	}
	key := w.s.prefix + name
	own := Cond{Key: key, Target: ModRevision, Revision: cur.Meta.Revision}
	var rev int64
	var err error
	switch {
	case len(cur.Meta.Finalizers) == 0:
		rev, err = w.txn(ctx, own, Write{Kind: WriteDelete, Key: key})
	case cur.Meta.DeletionRequested:
		if remembered {
			return 0, false, nil // confirm the revision with a read
		}
		return cur.Meta.Revision, true, nil
	default:
		next := *cur
		next.Meta.DeletionRequested = true
		next.Meta.LastWrite = LastWrite{Manager: w.manager, Op: OpDeleteMark}
		rev, err = w.put(ctx, own, &next, decodedSides{})
	}
	if cf, ok := ownCondFailure(err); ok {
		if cfg.revision != 0 && !remembered {
			return 0, true, w.conflict(name, cfg.revision, cf.Actual)
		}
		return 0, false, nil // written meanwhile: read and try again
	}
	if err != nil {
		return fail(err)
	}
	return rev, true, nil
}
