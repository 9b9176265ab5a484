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
// The precondition is the spec generation the status was computed from:
// IfGeneration(g) when given, else obj.Meta.Generation when it is non-zero.
// The write is rejected with ErrConflict only if the stored Generation has
// moved past it; writes by others that left the spec alone (labels,
// finalizers, other status writes) do not conflict, and UpdateStatus re-reads
// and retries internally when one lands between its read and its write. With
// neither (a hand-built object with Generation 0) the write is
// unconditional. If obj.Meta.UID is set and the stored object has another
// UID (it was deleted and recreated), the write is rejected with ErrConflict.
//
// UpdateStatus writes the whole Conditions list: a condition left out is
// removed, whoever set it. Keep the conditions you do not own as read (the
// Loop's Stalled, say), or use ApplyStatus, which writes only the manager's
// own. As for every ordinary write, the manager becomes the owner of the
// status fields it changed.
//
// Conditions must be keyed by type (unique, non-empty types) with status
// True, False or Unknown, else ErrInvalid. A condition's LastTransitionTime
// moves only when its Status does: it is kept from the stored condition of
// the same type when the Status is unchanged, and set to the Store's clock
// when the Status changed and the time given is zero. A missing object gives
// ErrNotFound. On success obj.Meta is set to the stored Meta with the new
// Revision, which is returned.
func (w *Writer[S, T]) UpdateStatus(ctx context.Context, obj *Object[S, T], opts ...StatusOption) (int64, error) {
	if err := w.check(obj); err != nil {
		return 0, err
	}
	if err := validateConditions(obj.Conditions); err != nil {
		return 0, err
	}
	cfg := statusConfig{generation: obj.Meta.Generation, hasGeneration: obj.Meta.Generation != 0}
	for _, o := range opts {
		o.applyStatus(&cfg)
	}
	status, err := encodeJSON("status", obj.Status)
	if err != nil {
		return 0, err
	}
	name := obj.Meta.Name
	for range maxAttempts {
		cur, err := w.s.getRaw(ctx, name)
		if err != nil {
			return 0, err
		}
		if err := w.checkStatusTarget(cur, obj.Meta.UID, cfg); err != nil {
			return 0, err
		}
		conds := stampTransitions(obj.Conditions, cur.Conditions, w.s.clock.Now())
		if bytes.Equal(status, cur.Status) && conditionsEqual(conds, cur.Conditions) {
			obj.Meta, obj.Conditions = cur.Meta, conds
			return cur.Meta.Revision, nil
		}
		next := *cur
		next.Status, next.Conditions = status, conds
		next.Meta.LastWrite = LastWrite{Manager: w.manager, Op: OpUpdateStatus}
		if err := w.s.manageStatus(cur, &next, w.manager); err != nil {
			return 0, err
		}
		own := Cond{Key: w.s.prefix + name, Target: ModRevision, Revision: cur.Meta.Revision}
		rev, err := w.put(ctx, own, &next)
		if _, ok := ownCondFailure(err); ok {
			continue // someone wrote in between: re-read and judge again
		}
		if err != nil {
			return 0, err
		}
		obj.Meta, obj.Conditions = next.Meta, conds
		obj.Meta.Revision = rev
		return rev, nil
	}
	return 0, fmt.Errorf("%w: status of %s %q: gave up after %d concurrent writes", ErrConflict, w.s.kind, name, maxAttempts)
}

// checkStatusTarget applies a status write's preconditions to the stored
// object.
func (w *Writer[S, T]) checkStatusTarget(cur *rawObject, uid string, cfg statusConfig) error {
	if uid != "" && uid != cur.Meta.UID {
		return fmt.Errorf("%w: %s %q was replaced (UID %s, want %s)", ErrConflict, w.s.kind, cur.Meta.Name, cur.Meta.UID, uid)
	}
	if cfg.hasGeneration && cur.Meta.Generation > cfg.generation {
		return fmt.Errorf("%w: status of %s %q was computed from generation %d; the spec is at generation %d",
			ErrConflict, w.s.kind, cur.Meta.Name, cfg.generation, cur.Meta.Generation)
	}
	return nil
}
