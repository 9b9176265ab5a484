package store

import (
	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/store/kv"

	"bytes"
	"encoding/json"
	"fmt"
)

// The stored value of an object is the encoding/json encoding of Object
// (Meta.Revision is not part of it: it is the key's ModRevision). The store
// reads its own values as rawObject, so it can rewrite one half of an object
// (Meta and Spec, or Status and Conditions) and copy the other half through
// byte for byte without knowing S and T.
//
// A versioned kind's value also has its version and what the hub holds
// that its version cannot (see Versions and versions_codec.go).
type rawObject struct {
	Version    string          `json:"version,omitempty"`
	Meta       Meta            `json:"metadata"`
	Spec       json.RawMessage `json:"spec"`
	Status     json.RawMessage `json:"status"`
	Conditions []Condition     `json:"conditions,omitempty"`
	Preserved  json.RawMessage `json:"preserved,omitempty"`

	// stored is, for a versioned Store, the value as stored, when Spec and
	// Status are at the served version (see Store.served).
	stored storedSides
}

// legacyMetaKey is the key under which values written before the metadata
// key was renamed hold Meta. Every decoder reads it as it reads "metadata"
// (stored data keeps working); encoders write "metadata" only, so an old
// value takes the new form on its next write.
const legacyMetaKey = "meta"

// The decoders read a value into the object the embedded pointer points at
// and, in the same pass, Meta from the legacy key too: Legacy points at the
// same Meta.
type (
	legacyObject[S, T any] struct {
		*Object[S, T]
		Legacy  *Meta   `json:"meta"`
		Version *string `json:"version"`
	}
	legacyRaw struct {
		*rawObject
		Legacy *Meta `json:"meta"`
	}
)

// decodeMeta decodes the Meta and Conditions of a stored object value without
// knowing its Spec and Status types. Meta.Revision is zero: it is not part of
// the value (take it from the KV's ModRevision). A value that is not an
// encoded object gives an error wrapping ErrInvalid. The project's raw
// readers outside this package call storeaccess.DecodeMeta, which it wraps.
func decodeMeta(value []byte) (Meta, []Condition, error) {
	m, conds, err := storeaccess.DecodeMeta[Meta, Condition](value)
	if err != nil {
		return Meta{}, nil, fmt.Errorf("%w: decoding object meta: %v", ErrInvalid, err)
	}
	return m, conds, nil
}

// decodeObject decodes a stored value into a typed object whose Revision is
// the KV's ModRevision. It reads the value the fast way (decodeObjectFast,
// with like and cp) when it can, with d's strings, and with encoding/json
// alone otherwise. It returns the object with the bytes of its Spec and
// Status, when it read them the fast way, for a later call's like.
func decodeObject[S, T any](kv kv.KeyValue, d *metaDecoder, like *decodedFrom[S, T], cp copies) (decodedFrom[S, T], error) {
	obj := new(Object[S, T])
	from, ok := decodeObjectFast(kv.Value, obj, d, like, cp)
	if !ok {
		if d.otherVersion {
			// The conversion decodes into obj.
			return decodedFrom[S, T]{obj: obj}, errOtherVersion
		}
		obj = new(Object[S, T])
		var version string
		err := json.Unmarshal(kv.Value, &legacyObject[S, T]{obj, &obj.Meta, &version})
		if d.versionOf(version) != d.version {
			return decodedFrom[S, T]{}, errOtherVersion
		}
		if err != nil {
			return decodedFrom[S, T]{}, fmt.Errorf("%w: decoding %q: %v", ErrInvalid, kv.Key, err)
		}
		from = decodedFrom[S, T]{obj: obj}
	}
	obj.Meta.Revision = kv.ModRevision
	return from, nil
}

// decodeRawJSON decodes a stored value into raw with encoding/json alone.
func decodeRawJSON(value []byte, raw *rawObject) error {
	return json.Unmarshal(value, &legacyRaw{raw, &raw.Meta})
}

// decodeRaw decodes a stored value with Spec and Status left encoded.
func decodeRaw(kv kv.KeyValue, d *metaDecoder) (*rawObject, error) {
	raw := new(rawObject)
	if !decodeRawFast(kv.Value, raw, d) {
		raw = new(rawObject)
		if err := decodeRawJSON(kv.Value, raw); err != nil {
			return nil, fmt.Errorf("%w: decoding %q: %v", ErrInvalid, kv.Key, err)
		}
	}
	raw.Meta.Revision = kv.ModRevision
	return raw, nil
}

// encode returns the stored value of raw. It is byte for byte what
// json.Marshal of the equivalent Object gives, assembled from the parts so
// that already encoded Spec and Status are not encoded again.
func (raw *rawObject) encode() ([]byte, error) {
	meta, err := json.Marshal(&raw.Meta)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding meta: %v", ErrInvalid, err)
	}
	var conds []byte
	if len(raw.Conditions) > 0 {
		if conds, err = json.Marshal(raw.Conditions); err != nil {
			return nil, fmt.Errorf("%w: encoding conditions: %v", ErrInvalid, err)
		}
	}
	spec, status := orNull(raw.Spec), orNull(raw.Status)
	var b bytes.Buffer
	b.Grow(len(raw.Version) + len(meta) + len(spec) + len(status) + len(conds) + len(raw.Preserved) + 80)
	if raw.Version != "" {
		// A version name needs no escaping (NewVersions checks it).
		b.WriteString(`{"version":"`)
		b.WriteString(raw.Version)
		b.WriteString(`","metadata":`)
	} else {
		b.WriteString(`{"metadata":`)
	}
	b.Write(meta)
	b.WriteString(`,"spec":`)
	b.Write(spec)
	b.WriteString(`,"status":`)
	b.Write(status)
	if conds != nil {
		b.WriteString(`,"conditions":`)
		b.Write(conds)
	}
	if len(raw.Preserved) > 0 {
		b.WriteString(`,"preserved":`)
		b.Write(raw.Preserved)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func orNull(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}

// encodeJSON encodes a Spec or Status value, reporting failures as ErrInvalid.
func encodeJSON(what string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding %s: %v", ErrInvalid, what, err)
	}
	return b, nil
}
