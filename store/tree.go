package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// decodeTree decodes JSON into the tree form package ownership works on:
// map[string]any, []any, string, bool, nil, and numbers as int64 when
// integral and in range, float64 otherwise. It is what ownership.ToTree does
// for a value already encoded, without encoding it again.
func decodeTree(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: decoding JSON: %v", ErrInvalid, err)
	}
	return normalizeNumbers(v), nil
}

func normalizeNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i
		}
		f, _ := strconv.ParseFloat(string(v), 64) // json.Number is a valid number
		return f
	case map[string]any:
		for k, x := range v {
			switch x.(type) {
			case json.Number, map[string]any, []any:
				v[k] = normalizeNumbers(x)
			}
		}
	case []any:
		for i, x := range v {
			v[i] = normalizeNumbers(x)
		}
	}
	return v
}

// metaTree returns the metadata part of the spec-side tree, nil when the
// object has no labels, annotations, owners or finalizers. It matches what
// encoding/json gives for metaDoc.
func metaTree(m *Meta) map[string]any {
	out := map[string]any{}
	if len(m.Labels) > 0 {
		out["labels"] = stringMap(m.Labels)
	}
	if len(m.Annotations) > 0 {
		out["annotations"] = stringMap(m.Annotations)
	}
	if len(m.Owners) > 0 {
		owners := make([]any, len(m.Owners))
		for i, o := range m.Owners {
			ref := map[string]any{"kind": o.Kind, "name": o.Name, "uid": o.UID}
			if o.Controller {
				ref["controller"] = true
			}
			owners[i] = ref
		}
		out["owners"] = owners
	}
	if len(m.Finalizers) > 0 {
		fins := make([]any, len(m.Finalizers))
		for i, f := range m.Finalizers {
			fins[i] = f
		}
		out["finalizers"] = fins
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
