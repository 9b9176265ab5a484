package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/steady-go/steady/ownership"
)

// ApplyResult reports what an Apply or ApplyStatus did.
type ApplyResult struct {
	// Revision is the object's revision after the call: the revision written,
	// or the current one when nothing changed.
	Revision int64
	// Generation and UID are the object's after the call.
	Generation int64
	UID        string
	// Changed is false when the configuration was already in place and
	// nothing was written.
	Changed bool
	// Created is true when Apply created the object.
	Created bool
	// Deleted is true when Apply removed the last finalizer of an object
	// whose deletion was requested, and so deleted it.
	Deleted bool
}

// Apply is server-side apply: manager declares the spec fields (and, with
// WithMeta, the metadata) it wants, and the store merges them with what other
// managers own, through package ownership. config is the desired Spec: a
// value of the Spec type, another struct with the same JSON field names, or a
// map[string]any tree; the fields present after encoding/json are the fields
// applied (make optional fields pointers with omitempty, see
// ownership.ToTree). A nil config applies no spec fields. The merge
// strategies come from the Spec type's struct tags.
//
// Apply:
//   - creates the object if it does not exist (UID assigned, Generation 1);
//   - sets manager's owned fields to exactly those in config, removing the
//     ones it applied before and no longer does (unless another manager
//     owns them too);
//   - returns a *ownership.ConflictError (find it with errors.As), listing
//     the (manager, path) pairs, when it would change a field another
//     manager owns, and writes nothing; with Force it takes those fields.
//     Retrying does not help, unlike ErrConflict;
//   - writes nothing when nothing changes: Changed is false and the revision
//     stays;
//   - bumps Generation only when the spec changed;
//   - stamps LastWrite with OpApply.
//
// The merge happens against the stored object at the time of the write: a
// concurrent write by someone else makes Apply re-read and merge again, so
// applies of disjoint fields by several managers all land. IfRevision(r)
// instead fails with ErrConflict unless the object is still at revision r
// (and fails if it does not exist), protecting a configuration computed from
// a read. A merged spec that does not decode into the Spec type, or that has
// fields it lacks, gives ErrInvalid. An Apply that changes an object the
// Store remembers as it is stored is one Txn, with no read (see
// WithLastValues).
func (w *Writer[S, T]) Apply(ctx context.Context, name string, config any, opts ...ApplyOption) (res ApplyResult, err error) {
	ctx, d := beginDry(ctx, w, opts, "Apply", name)
	if d != nil {
		defer func() { d.end(err) }()
	}
	if err := w.checkName(name); err != nil {
		return ApplyResult{}, err
	}
	var cfg applyConfig
	for _, o := range opts {
		o.applyApply(&cfg)
	}
	configTree, err := specConfigTree(config, cfg.meta)
	if err != nil {
		return ApplyResult{}, err
	}
	oopts := []ownership.Option{ownership.WithSchema(w.s.schemas.spec)}
	if cfg.force {
		oopts = append(oopts, ownership.Force())
	}
	if cur := w.s.latest(name); cur != nil {
		if out, done, err := w.apply(ctx, name, configTree, cfg, oopts, cur, true); done {
			return out, err
		}
	}
	for range maxAttempts {
		cur, err := w.s.getRaw(ctx, name)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return ApplyResult{}, err
		}
		if out, done, err := w.apply(ctx, name, configTree, cfg, oopts, cur, false); done {
			return out, err
		}
	}
	return ApplyResult{}, fmt.Errorf("%w: apply to %s %q: gave up after %d concurrent writes", ErrConflict, w.s.kind, name, maxAttempts)
}

// apply is one attempt of Apply against cur, the stored object (nil when
// there is none). It reports done unless the write's condition on cur
// failed, for Apply to read and try again. With remembered, cur is the
// Store's memory of the latest value of the object (see WithLastValues),
// which may be out of date: then apply reports done only when it wrote, and
// leaves anything else (no change to write, a failed check, an error) to the
// read of the stored object, so that both ways give the same results.
func (w *Writer[S, T]) apply(ctx context.Context, name string, configTree map[string]any, cfg applyConfig, oopts []ownership.Option, cur *rawObject, remembered bool) (ApplyResult, bool, error) {
	fail := func(err error) (ApplyResult, bool, error) {
		if remembered {
			return ApplyResult{}, false, nil // confirm with a read
		}
		return ApplyResult{}, true, err
	}
	key := w.s.prefix + name
	if cfg.revision != 0 {
		if cur == nil {
			return fail(fmt.Errorf("%w: apply of %s %q at revision %d: the object does not exist", ErrConflict, w.s.kind, name, cfg.revision))
		}
		if cur.Meta.Revision != cfg.revision {
			return fail(w.conflict(name, cfg.revision, cur.Meta.Revision))
		}
	}
	var live any
	var managed ownership.Managed
	if cur != nil {
		liveTree, err := specTree(cur)
		if err != nil {
			return fail(err)
		}
		live, managed = liveTree, w.s.schemas.decodeManaged(&cur.Meta, specSide, liveTree)
	}
	res, err := ownership.Apply(live, configTree, w.manager, managed, oopts...)
	if err != nil {
		return fail(applyError(err))
	}
	if cur != nil && !res.Changed {
		if remembered {
			return ApplyResult{}, false, nil // confirm the revision with a read
		}
		return ApplyResult{Revision: cur.Meta.Revision, Generation: cur.Meta.Generation, UID: cur.Meta.UID}, true, nil
	}
	next, err := w.specFromTree(cur, name, res.Object)
	if err != nil {
		return fail(err)
	}
	storedTree, err := specTree(next)
	if err != nil {
		return fail(err)
	}
	w.s.schemas.setManaged(&next.Meta, specSide, res.Managed, storedTree)
	m := &next.Meta
	out := ApplyResult{Generation: m.Generation, UID: m.UID, Changed: true, Created: cur == nil}
	var own Cond
	switch {
	case cur == nil:
		own = Cond{Key: key, Target: CreateRevision}
		out.Revision, err = w.put(ctx, own, next, decodedSides{})
	case m.DeletionRequested && len(m.Finalizers) == 0:
		own = Cond{Key: key, Target: ModRevision, Revision: cur.Meta.Revision}
		out.Deleted = true
		out.Revision, err = w.txn(ctx, own, Write{Kind: WriteDelete, Key: key})
	default:
		own = Cond{Key: key, Target: ModRevision, Revision: cur.Meta.Revision}
		out.Revision, err = w.put(ctx, own, next, decodedSides{})
	}
	if cf, ok := ownCondFailure(err); ok {
		if cfg.revision != 0 && !remembered {
			return ApplyResult{}, true, w.conflict(name, cfg.revision, cf.Actual)
		}
		return ApplyResult{}, false, nil // written (or created) meanwhile: merge again
	}
	if err != nil {
		return fail(err)
	}
	return out, true, nil
}

// specConfigTree turns an applied spec and metadata into the spec-side tree
// of the configuration.
func specConfigTree(config any, meta *ApplyMeta) (map[string]any, error) {
	doc := struct {
		Metadata *ApplyMeta `json:"metadata,omitempty"`
		Spec     any        `json:"spec,omitempty"`
	}{meta, config}
	tree, err := ownership.ToTree(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: apply configuration: %v", ErrInvalid, err)
	}
	return tree, nil
}

// specFromTree builds the object to store from the merged spec-side tree:
// cur's status and bookkeeping (or a new object's), the tree's metadata, and
// the tree's spec in the canonical encoding of S.
func (w *Writer[S, T]) specFromTree(cur *rawObject, name string, tree map[string]any) (*rawObject, error) {
	var doc struct {
		Metadata ApplyMeta `json:"metadata"`
		Spec     S         `json:"spec"`
	}
	if err := decodeStrict(tree, &doc); err != nil {
		return nil, fmt.Errorf("%w: applied configuration of %s %q does not fit its type: %v", ErrInvalid, w.s.kind, name, err)
	}
	spec, err := encodeJSON("spec", doc.Spec)
	if err != nil {
		return nil, err
	}
	var next rawObject
	if cur != nil {
		next = *cur
		if !bytes.Equal(spec, cur.Spec) {
			next.Meta.Generation++
		}
	} else {
		var zero T
		if next.Status, err = encodeJSON("status", zero); err != nil {
			return nil, err
		}
		next.Meta = Meta{Kind: w.s.kind, Name: name, UID: w.s.newUID(), Generation: 1}
	}
	next.Spec = spec
	m := &next.Meta
	m.Labels, m.Annotations = doc.Metadata.Labels, doc.Metadata.Annotations
	m.Owners, m.Finalizers = doc.Metadata.Owners, doc.Metadata.Finalizers
	m.LastWrite = LastWrite{Manager: w.manager, Op: OpApply}
	return &next, nil
}

// decodeStrict decodes a tree into v through JSON, refusing fields v lacks.
func decodeStrict(tree any, v any) error {
	b, err := json.Marshal(tree)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// applyError passes a field conflict through as it is, for errors.As, and
// reports anything else ownership refuses as invalid input.
func applyError(err error) error {
	var ce *ownership.ConflictError
	if errors.As(err, &ce) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrInvalid, err)
}

// checkName validates the writer and a name for the writes that take one.
func (w *Writer[S, T]) checkName(name string) error {
	if w.manager == "" {
		return fmt.Errorf("%w: write without a manager (use Store.As with a name)", ErrInvalid)
	}
	return ValidateName(name)
}
