package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store/kv"
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
//     manager owns, and writes nothing; with WithForce it takes those fields.
//     Retrying does not help, unlike ErrConflict;
//   - writes nothing when nothing changes: Changed is false and the revision
//     stays;
//   - bumps Generation only when the spec changed;
//   - stamps LastWrite with ownership.OpApply.
//
// The merge happens against the stored object at the time of the write: a
// concurrent write by someone else makes Apply re-read and merge again, so
// applies of disjoint fields by several managers all land. WithRevision(r)
// instead fails with ErrConflict unless the object is still at revision r
// (and fails if it does not exist), protecting a configuration computed from
// a read. A merged spec that does not decode into the Spec type, or that has
// fields it lacks, gives ErrInvalid. An Apply that changes an object the
// Store remembers as it is stored is one Txn, with no read (see
// WithLastValues).
func (w *Writer[S, T]) Apply(ctx context.Context, name string, config any, opts ...WriteOption) (res ApplyResult, err error) {
	ctx, d := beginDry(ctx, w, opts, "Apply", name)
	if d != nil {
		defer func() { d.end(err) }()
	}
	if err := w.checkName(name); err != nil {
		return ApplyResult{}, err
	}
	var cfg writeConfig
	if err := writeOpts(&cfg, "Apply", optForce|optRevision|optMeta, opts); err != nil {
		return ApplyResult{}, err
	}
	configTree, err := specConfigTree(config, cfg.meta)
	if err != nil {
		return ApplyResult{}, err
	}
	oopts := []ownership.Option{ownership.WithSchema(w.s.schemas.spec)}
	if cfg.force {
		oopts = append(oopts, ownership.Force())
	}
	key, mem, sides := w.s.latest(name)
	return write(ctx, w.s, "apply to", key, name, mem, sides, nil, true, func(cur *rawObject, _ decodedSides) (ApplyResult, verdict, error) {
		return w.apply(ctx, key, name, configTree, cfg.revision, oopts, cur)
	})
}

// apply is one attempt of Apply against cur, the current object stored
// under key (nil when there is none), under WithRevision(want) when want is not 0 (see write).
func (w *Writer[S, T]) apply(ctx context.Context, key, name string, configTree map[string]any, want int64, oopts []ownership.Option, cur *rawObject) (ApplyResult, verdict, error) {
	if err := w.checkRevision(name, cur, want); err != nil {
		return ApplyResult{}, decided, err
	}
	next, err := w.mergeSpec(name, configTree, oopts, cur)
	switch {
	case err != nil:
		return ApplyResult{}, decided, err
	case next == nil:
		return ApplyResult{Revision: cur.Meta.Revision, Generation: cur.Meta.Generation, UID: cur.Meta.UID}, decided, nil
	}
	m := &next.Meta
	out := ApplyResult{Generation: m.Generation, UID: m.UID, Changed: true, Created: cur == nil}
	own := kv.Cond{Key: key, Target: kv.CreateRevision}
	if cur != nil {
		own = kv.Cond{Key: own.Key, Target: kv.ModRevision, Revision: cur.Meta.Revision}
	}
	out.Revision, out.Deleted, err = w.store(ctx, own, cur, next, decodedSides{})
	v, err := w.landed(name, want, err)
	if v != answered || err != nil {
		return ApplyResult{}, v, err
	}
	return out, v, nil
}

// mergeSpec merges configTree, manager's applied spec side, into cur's (nil
// when there is no object), and returns the object to store with its
// ownership record, or nil when nothing changes.
func (w *Writer[S, T]) mergeSpec(name string, configTree map[string]any, oopts []ownership.Option, cur *rawObject) (*rawObject, error) {
	var live any
	var dec decodedSide
	var codec *ownership.Codec
	if cur != nil {
		liveTree, err := specTree(cur)
		if err != nil {
			return nil, err
		}
		live = liveTree
		dec, codec = w.s.schemas.decodeSideOf(cur, specSide, liveTree)
	}
	res, err := ownership.Apply(live, configTree, w.manager, dec.managed, oopts...)
	if err != nil {
		return nil, applyError(err)
	}
	if cur != nil && !res.Changed {
		return nil, nil
	}
	next, err := w.specFromTree(cur, name, res.Object)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		err = w.s.schemas.setManagedOf(next, specSide, res.Managed, nil)
	} else {
		_, err = w.s.schemas.setManagedOver(cur, next, specSide, res.Managed, dec, codec)
	}
	if err != nil {
		return nil, err
	}
	return next, nil
}

// specConfigTree turns an applied spec and metadata into the spec-side tree
// of the configuration.
func specConfigTree(config any, meta *ApplyMeta) (map[string]any, error) {
	doc := struct {
		Metadata *ApplyMeta `json:"metadata,omitempty"`
		Spec     any        `json:"spec,omitempty"`
	}{meta, addressable(config)}
	tree, err := configTree(doc)
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
	m.LastWrite = LastWrite{Manager: w.manager, Op: ownership.OpApply}
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
