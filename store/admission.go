package store

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store/kv"
)

// WithAdmission makes the Store admit every write of its kind, by any
// Writer of it, as Kubernetes' admission webhooks do (controller-runtime's
// Defaulter and Validator). Both funcs see the object as it is about to be
// stored, after the write's merging (an Apply's result, an Update's Meta
// and Spec over the stored Status), typed and decoded afresh for them:
//
//   - def (a mutating hook) may change it. Of its changes the write keeps
//     the side it writes: the Spec for Create, Update, Apply and a Delete
//     that only marks the object, the Status for UpdateStatus and
//     ApplyStatus (and both for Create); changes to Meta and Conditions are
//     ignored. A Spec it changes moves the Generation as the writer's own
//     change would. Defaulted fields are owned by no manager until one
//     writes them.
//   - validate (old is the stored object, nil for a Create) runs after def
//     and may refuse the write by returning an error: the write then fails
//     with an error wrapping ErrInvalid and the validator's error; return a
//     *FieldError to name the field (errors.As finds it).
//
// Both may be called more than once for one write (a write retried after a
// concurrent change, or confirmed with a read after a refusal), so they
// must be pure functions of their arguments. A func that panics refuses the write with an error wrapping ErrInvalid
// that names the panic; the Store goes on. Either func may be nil (then
// that step is skipped); both nil make New fail with ErrInvalid, as does an
// Admission for other types than the Store's S and T. The removal of a key
// (a Delete without finalizers, or of the last one) is not admitted. A
// write that changes nothing writes nothing and admits nothing. The
// caller's object is not changed: read it back to see the defaults.
//
// The cost, paid only with this option: each write decodes the object it
// writes and the current one it replaces (no extra Backend read: old is the
// value the write's condition holds the key to, so the write lands on
// exactly the object validate saw, or not at all).
func WithAdmission[S, T any](def func(obj *Object[S, T]), validate func(old, new *Object[S, T]) error) Option {
	return func(c *config) { c.admission = &admission[S, T]{def: def, validate: validate} }
}

// FieldError is a validation failure of one field, for a validate func of
// WithAdmission to return. It matches ErrInvalid with errors.Is.
type FieldError struct {
	// Path names the field as steady writes paths: .spec.replicas,
	// .metadata.labels.app.
	Path string
	// Reason says what is wrong with its value.
	Reason string
}

func (e *FieldError) Error() string { return "field " + e.Path + ": " + e.Reason }

// Is makes errors.Is(err, ErrInvalid) true.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

type admission[S, T any] struct {
	def      func(obj *Object[S, T])
	validate func(old, new *Object[S, T]) error
}

// admissionFor checks WithAdmission's argument for a Store of S and T.
func admissionFor[S, T any](a any) (*admission[S, T], error) {
	if a == nil {
		return nil, nil
	}
	ad, ok := a.(*admission[S, T])
	if !ok {
		return nil, fmt.Errorf("%w: WithAdmission for %T, the Store's objects are %T", ErrInvalid, a, (*Object[S, T])(nil))
	}
	if ad.def == nil && ad.validate == nil {
		return nil, fmt.Errorf("%w: WithAdmission with neither a default nor a validate func", ErrInvalid)
	}
	return ad, nil
}

// admit runs the Store's admission on next, encoded as val, about to be
// written under own over cur (nil for a creation). It returns the value to
// write, and the decoded sides that still describe it.
func (w *Writer[S, T]) admit(own kv.Cond, cur, next *rawObject, val []byte, sides decodedSides) ([]byte, decodedSides, error) {
	a := w.s.admission
	name := next.Meta.Name
	refuse := func(err error) error {
		if errors.Is(err, ErrInvalid) {
			return fmt.Errorf("store: %s %q refused by admission: %w", w.s.kind, name, err)
		}
		return fmt.Errorf("%w: %s %q refused by admission: %w", ErrInvalid, w.s.kind, name, err)
	}
	obj, err := w.s.decode(kv.KeyValue{Key: own.Key, Value: val})
	if err != nil {
		return nil, sides, err
	}
	var old *Object[S, T]
	if cur != nil {
		raw, err := w.s.encodeStored(cur)
		if err != nil {
			return nil, sides, err
		}
		if old, err = w.s.decode(kv.KeyValue{Key: own.Key, Value: raw, ModRevision: cur.Meta.Revision}); err != nil {
			return nil, sides, err
		}
	}
	if a.def != nil {
		if p := guard.Call(func() { a.def(obj) }); p != nil {
			return nil, sides, refuse(fmt.Errorf("default %w", p))
		}
		changed, err := w.takeDefaults(next, obj, old)
		if err != nil {
			return nil, sides, refuse(err)
		}
		if changed {
			if val, err = w.s.encodeStored(next); err != nil {
				return nil, sides, err
			}
			sides = decodedSides{}
		}
	}
	if a.validate != nil {
		var verr error
		if p := guard.Call(func() { verr = a.validate(old, obj) }); p != nil {
			verr = fmt.Errorf("validate %w", p)
		}
		if verr != nil {
			return nil, sides, refuse(verr)
		}
	}
	return val, sides, nil
}

// takeDefaults copies into next the side of obj its write writes (see
// WithAdmission), and moves the Generation with a changed Spec.
func (w *Writer[S, T]) takeDefaults(next *rawObject, obj, old *Object[S, T]) (changed bool, err error) {
	op := next.Meta.LastWrite.Op
	statusWrite := op == ownership.OpUpdateStatus || op == ownership.OpApplyStatus
	if op == ownership.OpCreate || statusWrite {
		status, err := encodeJSON("status", obj.Status)
		if err != nil {
			return false, err
		}
		if !bytes.Equal(status, next.Status) {
			next.Status, changed = status, true
		}
	}
	if statusWrite {
		return changed, nil
	}
	spec, err := encodeJSON("spec", obj.Spec)
	if err != nil {
		return false, err
	}
	if bytes.Equal(spec, next.Spec) {
		return changed, nil
	}
	next.Spec = spec
	if op != ownership.OpCreate && old != nil {
		oldSpec, err := encodeJSON("spec", old.Spec)
		if err != nil {
			return false, err
		}
		next.Meta.Generation = old.Meta.Generation
		if !bytes.Equal(oldSpec, spec) {
			next.Meta.Generation++
		}
	}
	return true, nil
}
