package store

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/steady-go/steady/internal/jsonscan"
)

// configTree is ownership.ToTree for the document an Apply or ApplyStatus
// builds around the caller's configuration (a struct, so it encodes as an
// object): encoded with encoding/json, as ToTree does, and decoded by
// jsonscan.Decode, which gives the same tree as ToTree's decoding at a
// fraction of the cost. The tree lives for one write.
func configTree(doc any) (map[string]any, error) {
	if err := checkJSONDepth("the configuration", reflect.ValueOf(doc), 0); err != nil {
		return nil, err
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	v, err := jsonscan.Decode(b)
	if err != nil {
		return nil, err
	}
	tree, _ := v.(map[string]any)
	return tree, nil
}

// decodeTree decodes JSON into the tree form package ownership works on
// (see jsonscan.Decode): the store builds two trees per write to maintain
// field ownership. Malformed input is an error wrapping ErrInvalid.
func decodeTree(raw []byte) (any, error) {
	v, err := jsonscan.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: decoding JSON: %v", ErrInvalid, err)
	}
	return v, nil
}

// decodeShape is decodeTree with every scalar that is not inside a list
// replaced by nil (see jsonscan.DecodeShape), for an ownership.Codec, which
// reads only the shape.
func decodeShape(raw []byte) (any, error) {
	v, err := jsonscan.DecodeShape(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: decoding JSON: %v", ErrInvalid, err)
	}
	return v, nil
}

// metaTree returns the metadata part of the spec-side tree, nil when the
// object has no labels, annotations, owners or finalizers. It matches what
// encoding/json gives for ApplyMeta.
//
// With shape, label and annotation values are nil, as in decodeShape.
func metaTree(m *Meta, shape bool) map[string]any {
	out := map[string]any{}
	if len(m.Labels) > 0 {
		out["labels"] = stringMap(m.Labels, shape)
	}
	if len(m.Annotations) > 0 {
		out["annotations"] = stringMap(m.Annotations, shape)
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

func stringMap(m map[string]string, shape bool) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if shape {
			out[k] = nil
		} else {
			out[k] = v
		}
	}
	return out
}
