package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store"
)

// managedAnnotation holds the ownership record of the spec while the store
// has no Apply of its own (see applySpec).
const managedAnnotation = "fieldowners.example/managed"

// applySpec is server-side apply of the fields in config (a tree rooted at
// the object, such as {"spec": {"replicas": 3}}) on behalf of manager,
// built from the ownership package and an ordinary Update.
//
// It stands in for store.Writer.Apply, which the store does not offer yet:
// the store keeps Meta.Managed to itself, so the ownership record lives in
// an annotation here. The semantics are the ones Apply will have: a field
// another manager owns is a *ownership.ConflictError and nothing is written;
// an apply that changes nothing writes nothing; a revision conflict (someone
// wrote between the read and the write) is retried from a fresh read.
//
// It returns the revision of its write (or the current one when nothing
// changed) and whether it wrote.
func applySpec(ctx context.Context, st *store.Store[Spec, Status], manager, name string, config map[string]any) (int64, bool, error) {
	for {
		obj, err := st.Get(ctx, name)
		if err != nil {
			return 0, false, err
		}
		managed, err := readManaged(obj.Meta.Annotations[managedAnnotation])
		if err != nil {
			return 0, false, err
		}
		live, err := ownership.ToTree(struct {
			Spec Spec `json:"spec"`
		}{obj.Spec})
		if err != nil {
			return 0, false, err
		}
		res, err := ownership.Apply(live, config, manager, managed)
		if err != nil {
			return 0, false, err // a *ownership.ConflictError among others
		}
		if !res.Changed {
			return obj.Meta.Revision, false, nil
		}
		spec, err := specOf(res.Object)
		if err != nil {
			return 0, false, err
		}
		text, err := writeManaged(res.Managed)
		if err != nil {
			return 0, false, err
		}
		obj.Spec = spec
		obj.Meta.Annotations = maps.Clone(obj.Meta.Annotations)
		if obj.Meta.Annotations == nil {
			obj.Meta.Annotations = map[string]string{}
		}
		obj.Meta.Annotations[managedAnnotation] = text
		rev, err := st.As(manager).Update(ctx, obj)
		if errors.Is(err, store.ErrConflict) {
			continue // a revision conflict: re-read and apply again
		}
		return rev, err == nil, err
	}
}

// owners returns the managers that own path in obj's ownership record.
func owners(obj *store.Object[Spec, Status], path string) []string {
	managed, err := readManaged(obj.Meta.Annotations[managedAnnotation])
	if err != nil {
		return nil
	}
	p, err := diff.ParsePath(path)
	if err != nil {
		return nil
	}
	return managed.Owners(p)
}

// storedEntry is one ownership.Entry as the annotation holds it.
type storedEntry struct {
	Manager   string              `json:"manager"`
	Operation ownership.Operation `json:"operation"`
	Fields    string              `json:"fields"`
}

func readManaged(text string) (ownership.Managed, error) {
	if text == "" {
		return nil, nil
	}
	var entries []storedEntry
	if err := json.Unmarshal([]byte(text), &entries); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", managedAnnotation, err)
	}
	m := make(ownership.Managed, 0, len(entries))
	for _, e := range entries {
		set, err := ownership.DecodeSet(e.Fields)
		if err != nil {
			return nil, fmt.Errorf("annotation %s: manager %s: %w", managedAnnotation, e.Manager, err)
		}
		m = append(m, ownership.Entry{Manager: e.Manager, Operation: e.Operation, Set: set})
	}
	return m, nil
}

func writeManaged(m ownership.Managed) (string, error) {
	entries := make([]storedEntry, 0, len(m))
	for _, e := range m {
		entries = append(entries, storedEntry{Manager: e.Manager, Operation: e.Operation, Fields: e.Set.Encode()})
	}
	b, err := json.Marshal(entries)
	return string(b), err
}

// specOf decodes the spec of an applied object tree.
func specOf(tree map[string]any) (Spec, error) {
	var out struct {
		Spec Spec `json:"spec"`
	}
	b, err := json.Marshal(tree)
	if err != nil {
		return Spec{}, err
	}
	err = json.Unmarshal(b, &out)
	return out.Spec, err
}
