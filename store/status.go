package store

import (
	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store/kv"

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
//   - Identity: WithUID(u) or WithObserved(m) when given, else obj.Meta.UID
//     when non-empty, must be the stored UID (the object was not deleted and
//     recreated).
//   - Spec: WithGeneration(g) or WithObserved(m) when given, else
//     obj.Meta.Generation when non-zero, must be the stored Generation (the
//     status was computed from the current spec).
//
// When obj is a fresh read and the status was computed from an earlier one
// (a cached object), pass WithObserved of that earlier read's Meta: it checks
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
func (w *Writer[S, T]) UpdateStatus(ctx context.Context, obj *Object[S, T], opts ...WriteOption) (rev int64, err error) {
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
	cfg := writeConfig{generation: obj.Meta.Generation, hasGeneration: obj.Meta.Generation != 0, uid: obj.Meta.UID}
	if err := writeOpts(&cfg, "UpdateStatus", optForce|optUID|optGeneration, opts); err != nil {
		return 0, err
	}
	status, err := encodeJSON("status", obj.Status)
	if err != nil {
		return 0, err
	}
	name := obj.Meta.Name
	key, mem, sides := w.s.remembered(name, obj.Meta.Revision)
	next, err := write(ctx, w.s, "status of", key, name, mem, sides, nil, false, func(cur *rawObject, sides decodedSides) (*rawObject, verdict, error) {
		return w.updateStatus(ctx, key, obj, cfg, status, cur, sides)
	})
	if err != nil {
		return 0, err
	}
	obj.Meta, obj.Conditions = next.Meta, next.Conditions
	return next.Meta.Revision, nil
}

// updateStatus is one attempt of UpdateStatus against cur, the current
// object, stored under key, with what is known of its sides, and status, obj's encoded Status
// (see write). It returns the object to give the caller the Meta and
// Conditions of.
func (w *Writer[S, T]) updateStatus(ctx context.Context, key string, obj *Object[S, T], cfg writeConfig, status []byte, cur *rawObject, sides decodedSides) (*rawObject, verdict, error) {
	if err := w.checkStatusTarget(cur, cfg); err != nil {
		return nil, decided, err
	}
	if obj.Meta.Revision != 0 && cur.Meta.StatusGeneration != obj.Meta.StatusGeneration {
		return nil, decided, w.s.stale(fmt.Errorf("%w: status of %s %q was read at status generation %d and has been written since (now %d)",
			ErrConflict, w.s.kind, cur.Meta.Name, obj.Meta.StatusGeneration, cur.Meta.StatusGeneration), cur.Meta.Revision)
	}
	conds := stampTransitions(obj.Conditions, cur.Conditions, w.s.clock.Now())
	if bytes.Equal(status, cur.Status) && conditionsEqual(conds, cur.Conditions) {
		return &rawObject{Meta: cur.Meta, Conditions: conds}, decided, nil
	}
	next := *cur
	next.Status, next.Conditions = status, conds
	next.Meta.LastWrite = LastWrite{Manager: w.manager, Op: ownership.OpUpdateStatus}
	next.Meta.StatusGeneration++
	// The spec side is left as it is, and so is what is known of it.
	var err error
	if sides.status, err = w.s.manageStatus(cur, &next, w.manager, sides.status); err != nil {
		return nil, decided, err
	}
	own := kv.Cond{Key: key, Target: kv.ModRevision, Revision: cur.Meta.Revision}
	rev, err := w.put(ctx, own, cur, &next, sides)
	v, err := w.landed(cur.Meta.Name, 0, err)
	if v != answered || err != nil {
		return nil, v, err
	}
	next.Meta = next.Meta.clone() // cur's may be the Store's memory
	next.Meta.Revision = rev
	return &next, v, nil
}

// checkStatusTarget applies a status write's preconditions to the stored
// object.
func (w *Writer[S, T]) checkStatusTarget(cur *rawObject, cfg writeConfig) error {
	if err := w.checkUID(cur, cfg.uid); err != nil {
		return err
	}
	if cfg.hasGeneration && cur.Meta.Generation < cfg.generation {
		return w.s.stale(fmt.Errorf("%w: status of %s %q was computed from generation %d; the object is at generation %d, so it was replaced",
			ErrConflict, w.s.kind, cur.Meta.Name, cfg.generation, cur.Meta.Generation), cur.Meta.Revision)
	}
	if cfg.hasGeneration && cur.Meta.Generation > cfg.generation {
		return w.s.stale(fmt.Errorf("%w: status of %s %q was computed from generation %d; the spec is at generation %d",
			ErrConflict, w.s.kind, cur.Meta.Name, cfg.generation, cur.Meta.Generation), cur.Meta.Revision)
	}
	return nil
}
