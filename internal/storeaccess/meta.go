package storeaccess

import "encoding/json"

// metaOnly is what DecodeMeta reads; encoding/json skips the rest.
type metaOnly[M, C any] struct {
	Meta       M   `json:"metadata"`
	Conditions []C `json:"conditions,omitempty"`
}

// legacyMetaOnly reads Meta from the legacy key "meta" too (values written
// before the key was "metadata"): Legacy points at the same Meta.
type legacyMetaOnly[M, C any] struct {
	*metaOnly[M, C]
	Legacy *M `json:"meta"`
}

// DecodeMeta decodes the Meta (M, store.Meta) and Conditions (C,
// store.Condition) of a stored object value without knowing its Spec and
// Status types, for the project's raw key-value readers (reconciletest).
// It is generic because this package cannot import store, which imports
// it. An error is encoding/json's, unwrapped: store's own decodeMeta wraps
// it in ErrInvalid.
func DecodeMeta[M, C any](value []byte) (M, []C, error) {
	var m metaOnly[M, C]
	if err := json.Unmarshal(value, &legacyMetaOnly[M, C]{&m, &m.Meta}); err != nil {
		var zero M
		return zero, nil, err
	}
	return m.Meta, m.Conditions, nil
}
