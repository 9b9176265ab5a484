package store

import (
	"bytes"
	"context"
	"fmt"
)

// UpdateStatus writes obj's Status and Conditions, the status subresource,
// and nothing else: the stored Meta and Spec are kept whatever obj holds, and
// Generation never moves. It is the essay's spec/status separation: a status
// write and a spec write by different actors do not undo each other.
//
// Its preconditions, each failing with ErrConflict, are exactly these:
//
//   - Identity: IfUID(u) or IfObserved(m) when given, else obj.Meta.UID
//     when non-empty, must be the stored UID (the object was not deleted and
//     recreated).
//   - Spec: IfGeneration(g) or IfObserved(m) when given, else
//     obj.Meta.Generation when non-zero, must be the stored Generation (the
//     status was computed from the current spec).
//
// When obj is a fresh read and the status was computed from an earlier one
// (a cached object), pass IfObserved of that earlier read's Meta: it checks
// both against what the status was computed from.
//   - Status freshness: when obj was read (obj.Meta.Revision non-zero),
//     obj.Meta.StatusGeneration must be the stored StatusGeneration: nobody
//     changed the status side since the read, so a read-modify-write of
//     status (incrementing a counter, appending to a list) never loses a
//     concurrent one. Re-read and retry on ErrConflict.
//
// Writes by others that changed neither the spec nor the status (labels,
// annotations, finalizers, owners) do not conflict: UpdateStatus re-reads
// and retries internally when one lands between its read and its write. A
// hand-built object (Revision, Generation and UID zero) writes
// unconditionally.
//
// UpdateStatus writes the whole Conditions list: a condition left out is
// removed, whoever set it. Keep the conditions you do not own as read (the
// Loop's Stalled, say), or use ApplyStatus, which writes only the manager's
// own. As for every ordinary write, the manager becomes the owner of the
// status fields it changed, and StatusGeneration is bumped.
//
// Conditions must be keyed by type (unique, non-empty types) with status
// True, False or Unknown, else ErrInvalid. A condition's LastTransitionTime
// moves only when its Status does: it is kept from the stored condition of
// the same type when the Status is unchanged, and set to the Store's clock
// when the Status changed and the time given is zero. A missing object gives
// ErrNotFound. On success obj.Meta is set to the stored Meta with the new
// Revision, which is returned. An UpdateStatus of an object as the Store last
// read or wrote it is one Txn, with no read (see WithLastValues).
func (w *Writer[S, T]) UpdateStatus(ctx context.Context, obj *Object[S, T], opts ...StatusOption) (rev int64, err error) {
	ctx, d := beginDry(ctx, w, opts, "UpdateStatus", nameOf(obj))
	if d != nil {
		defer func() { d.end(err) }()
	}
	if err := w.check(obj); err != nil {
		return 0, err
	}
	if err := validateConditions(obj.Conditions); err != nil {
		return 0, err
	}
	cfg := statusConfig{generation: obj.Meta.Generation, hasGeneration: obj.Meta.Generation != 0, uid: obj.Meta.UID}
	for _, o := range opts {
		o.applyStatus(&cfg)
	}
	if cfg.err != nil {
		return 0, cfg.err
	}
	status, err := encodeJSON("status", obj.Status)
	if err != nil {
		return 0, err
	}
	name := obj.Meta.Name
	if cur, sides := w.s.remembered(name, obj.Meta.Revision); cur != nil {
		if rev, done, err := w.updateStatus(ctx, obj, cfg, status, cur, sides, true); done {
			return rev, err
		}
	}
	for range maxAttempts {
		cur, err := w.s.getRaw(ctx, name)
		if err != nil {
			return 0, err
		}
		if rev, done, err := w.updateStatus(ctx, obj, cfg, status, cur, decodedSides{}, false); done {
			return rev, err
		}
		// someone wrote in between: re-read and judge again
	}
	return 0, fmt.Errorf("%w: status of %s %q: gave up after %d concurrent writes", ErrConflict, w.s.kind, name, maxAttempts)
}

// updateStatus is one attempt of UpdateStatus against cur, a read of the
// stored object with what is known of its sides, and status, obj's encoded
// Status. It is not done when its write's condition failed. With
// remembered, cur is the Store's memory of the object at obj.Meta.Revision
// (see WithLastValues), which may be out of date: then it is done only when
// it wrote, and leaves anything else to a read of the stored object, so that
// both ways give the same results.
func (w *Writer[S, T]) updateStatus(ctx context.Context, obj *Object[S, T], cfg statusConfig, status []byte, cur *rawObject, sides decodedSides, remembered bool) (rev int64, done bool, err error) {
	name := obj.Meta.Name
	if err := w.checkStatusTarget(cur, cfg); err != nil {
		return 0, !remembered, err
	}
	if obj.Meta.Revision != 0 && cur.Meta.StatusGeneration != obj.Meta.StatusGeneration {
		return 0, !remembered, fmt.Errorf("%w: status of %s %q was read at status generation %d and has been written since (now %d)",
			ErrConflict, w.s.kind, name, obj.Meta.StatusGeneration, cur.Meta.StatusGeneration)
	}
	conds := stampTransitions(obj.Conditions, cur.Conditions, w.s.clock.Now())
	if bytes.Equal(status, cur.Status) && conditionsEqual(conds, cur.Conditions) {
		if remembered {
			return 0, false, nil // confirm the revision with a read
		}
		obj.Meta, obj.Conditions = cur.Meta, conds
		return cur.Meta.Revision, true, nil
	}
	next := *cur
	next.Status, next.Conditions = status, conds
	next.Meta.LastWrite = LastWrite{Manager: w.manager, Op: OpUpdateStatus}
	next.Meta.StatusGeneration++
	// The spec side is left as it is, and so is what is known of it.
	if sides.status, err = w.s.manageStatus(cur, &next, w.manager, sides.status); err != nil {
		return 0, !remembered, err
	}
	own := Cond{Key: w.s.prefix + name, Target: ModRevision, Revision: cur.Meta.Revision}
	rev, err = w.put(ctx, own, &next, sides)
	if _, ok := ownCondFailure(err); ok {
		return 0, false, nil
	}
	if err != nil {
		return 0, true, err
	}
	obj.Meta, obj.Conditions = next.Meta, conds
	if remembered {
		obj.Meta = obj.Meta.clone() // not shared with the Store's memory
	}
	obj.Meta.Revision = rev
	return rev, true, nil
}

// checkStatusTarget applies a status write's preconditions to the stored
// object.
func (w *Writer[S, T]) checkStatusTarget(cur *rawObject, cfg statusConfig) error {
	if cfg.uid != "" && cfg.uid != cur.Meta.UID {
		return fmt.Errorf("%w: %s %q was replaced (UID %s, want %s)", ErrConflict, w.s.kind, cur.Meta.Name, cur.Meta.UID, cfg.uid)
	}
	if cfg.hasGeneration && cur.Meta.Generation < cfg.generation {
		return fmt.Errorf("%w: status of %s %q was computed from generation %d; the object is at generation %d, so it was replaced",
			ErrConflict, w.s.kind, cur.Meta.Name, cfg.generation, cur.Meta.Generation)
	}
	if cfg.hasGeneration && cur.Meta.Generation > cfg.generation {
		return fmt.Errorf("%w: status of %s %q was computed from generation %d; the spec is at generation %d",
			ErrConflict, w.s.kind, cur.Meta.Name, cfg.generation, cur.Meta.Generation)
	}
	return nil
}
