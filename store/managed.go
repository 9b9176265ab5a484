package store

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/steady-go/steady/ownership"
)

// Field ownership (Meta.Managed) is kept per side of the object, as
// Kubernetes does with its status subresource:
//
//   - the spec side ("" subresource) is the tree
//     {"metadata": {"labels", "annotations", "owners", "finalizers"}, "spec": ...}
//   - the status side ("status") is {"status": ..., "conditions": [...]},
//     conditions being a list keyed by "type".
//
// Paths in field sets, conflicts and oscillation reports are paths in these
// trees, e.g. .spec.replicas, .metadata.labels.app, .conditions[type="Ready"].
// Finalizers are a set, owners an atomic list. The merge strategies of Spec
// and Status come from their struct tags (ownership.SchemaFor).
//
// Each side's entries are encoded with ownership.Codec relative to that
// side's stored tree, and re-encoded on every write of that side that
// changes it (see keepManaged for the writes that keep it as stored). An entry
// that no longer decodes (the value was written around the store) is
// dropped: ownership is reset rather than misread.
const (
	specSide   = ""
	statusSide = "status"
)

// schemas holds the merge strategies of both sides of one Store's objects.
type schemas struct {
	spec, status *ownership.Schema
	codecs       *codecCache // the Codecs FieldChanges decoded with, by shape
	// remember: the Store remembers values (WithLastValues), and with them
	// a write's decoded record (see recordUpdate's kept), which is
	// otherwise not worth keeping past the write.
	remember bool
}

func newSchemas[S, T any]() (schemas, error) {
	meta, err := ownership.NewSchema(map[string]ownership.Strategy{
		".metadata.finalizers": ownership.AsSet(),
	})
	if err != nil {
		return schemas{}, err
	}
	specSchema, err := ownership.SchemaFor((*S)(nil))
	if err != nil {
		return schemas{}, fmt.Errorf("%w: spec type: %v", ErrInvalid, err)
	}
	if meta, err = meta.With(".spec", specSchema); err != nil {
		return schemas{}, err
	}
	conds, err := ownership.NewSchema(map[string]ownership.Strategy{".conditions": ownership.Keyed("type")})
	if err != nil {
		return schemas{}, err
	}
	statusSchema, err := ownership.SchemaFor((*T)(nil))
	if err != nil {
		return schemas{}, fmt.Errorf("%w: status type: %v", ErrInvalid, err)
	}
	if conds, err = conds.With(".status", statusSchema); err != nil {
		return schemas{}, err
	}
	return schemas{spec: meta, status: conds, codecs: &codecCache{}}, nil
}

// specTree returns the spec-side tree of raw.
func specTree(raw *rawObject) (map[string]any, error) { return specTreeOf(raw, false) }

// statusTree returns the status-side tree of raw.
func statusTree(raw *rawObject) (map[string]any, error) { return statusTreeOf(raw, false) }

// specTreeOf returns the spec-side tree of raw, or with shape only its
// shape (see decodeShape).
func specTreeOf(raw *rawObject, shape bool) (map[string]any, error) {
	decode := decodeTree
	if shape {
		decode = decodeShape
	}
	spec, err := decode(orNull(raw.Spec))
	if err != nil {
		return nil, err
	}
	tree := map[string]any{"spec": spec}
	if md := metaTree(&raw.Meta, shape); md != nil {
		tree["metadata"] = md
	}
	return tree, nil
}

// statusTreeOf returns the status-side tree of raw, or with shape only its
// shape (see decodeShape).
func statusTreeOf(raw *rawObject, shape bool) (map[string]any, error) {
	decode := decodeTree
	if shape {
		decode = decodeShape
	}
	status, err := decode(orNull(raw.Status))
	if err != nil {
		return nil, err
	}
	tree := map[string]any{"status": status}
	if len(raw.Conditions) > 0 {
		if conds, ok := conditionsTree(raw.Conditions); ok {
			tree["conditions"] = conds
			return tree, nil
		}
		conds, err := json.Marshal(raw.Conditions)
		if err != nil {
			return nil, fmt.Errorf("%w: encoding conditions: %v", ErrInvalid, err)
		}
		if tree["conditions"], err = decodeTree(conds); err != nil {
			return nil, err
		}
	}
	return tree, nil
}

// conditionsTree returns the tree the JSON of conds decodes to, built from
// conds without encoding them: every status write builds the status-side
// tree of the object before and after it. It reports false where that
// tree would differ from its strings (one that is not valid UTF-8, which
// encoding replaces) or the JSON would not encode (a time beyond year
// 9999), for the caller to go the JSON way.
func conditionsTree(conds []Condition) ([]any, bool) {
	out := make([]any, len(conds))
	var buf [48]byte
	for i := range conds {
		c := &conds[i]
		if !utf8.ValidString(c.Type) || !utf8.ValidString(string(c.Status)) || !utf8.ValidString(c.Reason) || !utf8.ValidString(c.Message) {
			return nil, false
		}
		at, err := c.LastTransitionTime.AppendText(buf[:0]) // MarshalText's text and errors
		if err != nil {
			return nil, false
		}
		m := make(map[string]any, 6)
		m["type"], m["status"], m["lastTransitionTime"] = c.Type, string(c.Status), string(at)
		if c.Reason != "" {
			m["reason"] = c.Reason
		}
		if c.Message != "" {
			m["message"] = c.Message
		}
		if c.ObservedGeneration != 0 {
			m["observedGeneration"] = c.ObservedGeneration
		}
		out[i] = m
	}
	return out, true
}

// sideTree returns the tree of one side of raw.
func sideTree(raw *rawObject, side string) (map[string]any, error) {
	return sideTreeOf(raw, side, false)
}

func sideTreeOf(raw *rawObject, side string, shape bool) (map[string]any, error) {
	if side == statusSide {
		return statusTreeOf(raw, shape)
	}
	return specTreeOf(raw, shape)
}

func (sc schemas) of(side string) *ownership.Schema {
	if side == statusSide {
		return sc.status
	}
	return sc.spec
}

// setManagedWith replaces one side's entries in meta.Managed with managed,
// encoded with codec, the Codec of that side's new value (nil when managed
// is empty). Spec-side entries come first.
func (sc schemas) setManagedWith(meta *Meta, side string, managed ownership.Managed, codec *ownership.Codec) {
	var spec, status []ManagedFields
	for _, e := range meta.Managed {
		if e.Subresource == side {
			continue
		}
		if e.Subresource == statusSide {
			status = append(status, e)
		} else {
			spec = append(spec, e)
		}
	}
	if len(managed) > 0 {
		for _, e := range managed {
			f := ManagedFields{Manager: e.Manager, Operation: string(e.Operation), Subresource: side, Fields: codec.Encode(e.Set)}
			if side == statusSide {
				status = append(status, f)
			} else {
				spec = append(spec, f)
			}
		}
	}
	all := append(spec, status...)
	if len(all) == 0 {
		all = nil
	}
	meta.Managed = all
}

// recordUpdate records an ordinary write of one side by manager: cur is the
// stored object (nil for a create) and next the object about to be stored;
// next.Meta.Managed is updated. When the write leaves the record as it is
// (see keepManaged), next.Meta.Managed is left as copied from cur, and kept
// is the side's decoded record for next when known (the record of cur's
// side as decodeSide gives it, or nil) or keepManaged decoded it for a
// Store that remembers values.
func (sc schemas) recordUpdate(cur, next *rawObject, side, manager string, known *decodedSide) (kept *decodedSide, err error) {
	var oldTree map[string]any
	var managed ownership.Managed
	if cur != nil {
		if keep, dec := sc.keepManaged(cur, next, side, manager, known); keep {
			next.Meta.Managed = cur.Meta.Managed
			return dec, nil
		}
		if oldTree, err = sideTree(cur, side); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		managed = sc.decodeManagedOf(cur, side, oldTree)
	}
	newTree, err := sideTree(next, side)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var old any
	if oldTree != nil {
		old = oldTree
	}
	res, err := ownership.Update(old, newTree, manager, managed, ownership.WithSchema(sc.of(side)))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := sc.setManagedOf(next, side, res.Managed, newTree); err != nil {
		return nil, err
	}
	return nil, nil
}

// manageCreate records the spec-side fields a Create sets as owned by
// manager. The initial status is left unowned: it is a placeholder for the
// observed state, and owning its zero values would make the first status
// apply of a controller conflict with the object's creator.
func (s *Store[S, T]) manageCreate(next *rawObject, manager string) error {
	next.Meta.Managed = nil
	_, err := s.schemas.recordUpdate(nil, next, specSide, manager, nil)
	return err
}

// manageUpdate records the spec-side fields an Update changed as owned by
// manager. known and kept are as for recordUpdate.
func (s *Store[S, T]) manageUpdate(cur, next *rawObject, manager string, known *decodedSide) (kept *decodedSide, err error) {
	return s.schemas.recordUpdate(cur, next, specSide, manager, known)
}

// manageStatus records the status fields an UpdateStatus changed as owned by
// manager. known and kept are as for recordUpdate.
func (s *Store[S, T]) manageStatus(cur, next *rawObject, manager string, known *decodedSide) (kept *decodedSide, err error) {
	return s.schemas.recordUpdate(cur, next, statusSide, manager, known)
}
