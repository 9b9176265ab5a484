package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"

	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/internal/wrote"
	"github.com/steady-go/steady/store/kv"
)

// DecodeError reports a stored value that is not an object of the Store's
// kind: it is not JSON, not a JSON object, has a field of the wrong type (as
// a newer version of the program may write during a rolling upgrade), is
// null, or its Meta.Kind or Meta.Name disagrees with its key. An object's
// identity comes from its key, never from the value: a value at the key of
// "x" that claims the name "real" is not served as "real", nor as "x".
//
// Such a value is quarantined, never fatal: Get returns the *DecodeError
// (it matches ErrInvalid with errors.Is), List leaves it out of Items and
// reports it in List.Undecodable, Watch sends an event whose Undecodable is
// set and keeps going, and the cache (store/cache) keeps serving the rest of
// the kind and lists it in Quarantined. The key is an object again as soon as
// a valid value is written there (with the raw Backend, or after Purge with
// Create). Writer.Purge deletes it without decoding it.
//
// A write decodes the metadata and the side it changes, not the other:
// Update and Apply (the spec) and UpdateStatus and ApplyStatus (the
// status) go through over a value whose other side does not decode, and
// keep that side's bytes as they are stored, so an older program's status
// write keeps the spec a newer one wrote during a rolling upgrade. The key
// stays quarantined until a write leaves the whole value valid. Delete
// needs the metadata alone. A value whose metadata does not decode (or
// that is not a JSON object) refuses every write but Purge.
type DecodeError struct {
	// Kind is the Store's kind; Name is the name the key stands for.
	Kind, Name string
	// Key is the backend key, and Revision the ModRevision of the value.
	Key      string
	Revision int64
	// Err says why it does not decode.
	Err error
}

// maxQuotedLength bounds the bytes of a name, key or value an error message
// quotes, so a 1 MiB bad input does not make a 1 MiB message.
const maxQuotedLength = 128

func (e *DecodeError) Error() string {
	return fmt.Sprintf("store: %s %q at revision %d does not decode: %v",
		e.Kind, truncate(e.Name), e.Revision, e.Err)
}

// Unwrap returns ErrInvalid and Err, so errors.Is(err, ErrInvalid) is true
// and errors.Is and errors.As find what Err wraps.
func (e *DecodeError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalid}
	}
	return []error{ErrInvalid, e.Err}
}

// truncate shortens s to maxQuotedLength bytes for an error message.
func truncate(s string) string {
	if len(s) <= maxQuotedLength {
		return s
	}
	return fmt.Sprintf("%s...(%d bytes)", s[:maxQuotedLength], len(s))
}

// decode decodes kv, a key of the Store's key space, into a typed object
// whose Revision is the KV's ModRevision, or returns a *DecodeError.
func (s *Store[S, T]) decode(kv kv.KeyValue) (*Object[S, T], error) {
	scratch := s.borrowScratch()
	defer s.giveBack(scratch)
	return s.decodeShared(kv, scratch)
}

// decodeShared is decode with scratch space kept from earlier values (see
// metaDecoder), which one caller at a time may use.
func (s *Store[S, T]) decodeShared(kv kv.KeyValue, scratch *decodeScratch) (*Object[S, T], error) {
	from, err := s.decodeLike(kv, scratch, nil, copies{})
	return from.obj, err
}

// decodeLike is decodeShared that may copy Spec or Status from like (see
// decodeObjectFast), and returns the object with the bytes it was decoded
// from.
func (s *Store[S, T]) decodeLike(kv kv.KeyValue, scratch *decodeScratch, like *decodedFrom[S, T], cp copies) (from decodedFrom[S, T], err error) {
	name, _ := s.nameOf(kv.Key)
	return s.decodeLikeOver(kv, name, scratch, like, cp, nil)
}

// decodeLikeOver is decodeLike of the value of name's key (see nameOf)
// over base (nil for none), whose held object like then is (see
// baseValue). That object's name, validated when it was decoded, is name:
// the value's, when equal, needs no second look (sameIdentity).
func (s *Store[S, T]) decodeLikeOver(kv kv.KeyValue, name string, scratch *decodeScratch, like *decodedFrom[S, T], cp copies, base *baseValue) (from decodedFrom[S, T], err error) {
	return s.decodeNamed(kv, name, false, scratch, like, cp, base)
}

// decodeNamed is decodeLikeOver for a caller that may know name to be
// valid (valid: it passed ValidateName, as Get's name did before its
// read), whose value then needs only the same kind and name
// (sameIdentity), not a second ValidateName of the name. name must be the
// name the value's key stands for (nameOf), or the name the value was
// asked for under the Store's prefix.
func (s *Store[S, T]) decodeNamed(kv kv.KeyValue, name string, valid bool, scratch *decodeScratch, like *decodedFrom[S, T], cp copies, base *baseValue) (from decodedFrom[S, T], err error) {
	if s.ownCodec {
		// Only a kind whose types run their own code while they decode
		// pays for the recover.
		defer catchDecode(s, kv, scratch, &from, &err)
	}
	d := s.metaDecoderOf(name, scratch)
	d.base = base
	from, err = decodeObject[S, T](kv, d, like, cp)
	if err == errOtherVersion {
		return s.decodeConverted(kv, scratch, from.obj)
	}
	switch {
	case err != nil:
	case valid || base != nil && base.meta != nil && base.meta.Name == name:
		err = s.sameIdentity(name, &from.obj.Meta)
	default:
		err = s.checkIdentity(name, &from.obj.Meta)
	}
	if err != nil {
		return decodedFrom[S, T]{}, s.decodeError(kv, err)
	}
	return from, nil
}

// catchDecode, deferred by a decode, turns a panic of the user's code
// (an UnmarshalJSON of a Spec or Status type that panics on one value)
// into that value's *DecodeError, with *res zeroed, so the value is
// quarantined like any that does not decode and the watch, the cache or
// the List that read it goes on with the rest. scratch's decoder, stopped
// mid-value, is dropped. The stack goes to the Store's log: the error
// names only the panic.
func catchDecode[S, T, R any](s *Store[S, T], kv kv.KeyValue, scratch *decodeScratch, res *R, err *error) {
	v := recover()
	if v == nil {
		return
	}
	if scratch != nil {
		scratch.dec, scratch.shape = nil, nil
	}
	p := &guard.Panic{Value: v, Stack: debug.Stack()}
	s.logger.LogAttrs(context.Background(), slog.LevelError, "store: decoding a value panicked", slog.String("kind", s.kind),
		slog.String("key", truncate(kv.Key)), slog.Int64("revision", kv.ModRevision),
		slog.String("panic", guard.Describe(v, guard.MaxText)), slog.String("stack", string(p.Stack)))
	var zero R
	*res, *err = zero, s.decodeError(kv, p)
}

// ownCodec reports whether encoding/json decoding or encoding a t
// may run code of the user's: an UnmarshalJSON, UnmarshalText, MarshalJSON
// or MarshalText at any depth, other than the standard library's
// time.Time and json.RawMessage.
func ownCodec(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] || t == timeType || t == rawMessageType {
		return false
	}
	seen[t] = true
	for _, i := range []reflect.Type{jsonUnmarshaler, textUnmarshaler, jsonMarshaler, textMarshaler} {
		if t.Implements(i) || reflect.PointerTo(t).Implements(i) {
			return true
		}
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return ownCodec(t.Elem(), seen)
	case reflect.Map:
		return ownCodec(t.Key(), seen) || ownCodec(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if ownCodec(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// kindOwnCodec is ownCodec for every type a Store of S and T
// with versions ver (nil for none) decodes.
func kindOwnCodec[S, T any](ver *storeVersions) bool {
	seen := map[reflect.Type]bool{}
	types := []reflect.Type{reflect.TypeFor[S](), reflect.TypeFor[T]()}
	if ver != nil {
		for _, v := range ver.list {
			types = append(types, v.spec, v.status, v.hubSpec, v.hubStatus)
		}
	}
	for _, t := range types {
		if ownCodec(t, seen) {
			return true
		}
	}
	return false
}

// decodeRaw is decode with Spec and Status left encoded. With shape, it
// also computes the shape key of the Spec, when the value's ownership
// records need it, while slicing it (see rawObject.specKey): the write that
// reads the value then does not read its Spec again for its Codec.
func (s *Store[S, T]) decodeRaw(kv kv.KeyValue, shape bool) (raw *rawObject, err error) {
	scratch := s.borrowScratch()
	defer s.giveBack(scratch)
	if s.ownCodec && s.ver != nil {
		// Only a conversion decodes and encodes the Spec and Status here.
		defer catchDecode(s, kv, scratch, &raw, &err)
	}
	d := s.metaDecoder(kv.Key, scratch)
	d.specShape = shape
	raw, err = decodeRaw(kv, d)
	if err == nil {
		err = s.checkIdentity(d.name, &raw.Meta)
	}
	if err == nil {
		err = s.served(raw)
	}
	if err != nil {
		return nil, s.decodeError(kv, err)
	}
	return raw, nil
}

// metaDecoder returns the decoder of key's value: its kind and name strings
// are the Store's kind and the key's name.
func (s *Store[S, T]) metaDecoder(key string, scratch *decodeScratch) *metaDecoder {
	name, _ := s.nameOf(key)
	return s.metaDecoderOf(name, scratch)
}

// metaDecoderOf is metaDecoder for a key whose name (nameOf) is name. With
// scratch, the decoder is scratch's own, set in place: zeroed first unless
// giveBack left it zero (a composite literal assigned to it was built on
// the stack and copied, two passes over its 336 bytes).
func (s *Store[S, T]) metaDecoderOf(name string, scratch *decodeScratch) *metaDecoder {
	var version, first string
	if s.ver != nil {
		version, first = s.ver.served.name, s.ver.first
	}
	if scratch == nil {
		return &metaDecoder{kind: s.kind, name: name, version: version, first: first, plans: s.sides}
	}
	d := &scratch.d
	if scratch.used {
		*d = metaDecoder{}
	}
	scratch.used = true
	d.kind, d.name, d.scratch, d.version, d.first, d.plans = s.kind, name, scratch, version, first, s.sides
	return d
}

// checkIdentity reports a Meta whose Kind or Name disagrees with the key
// it was read from, whose name (nameOf) is name: the metaDecoder's, cut
// from the key once per value.
func (s *Store[S, T]) checkIdentity(name string, m *Meta) error {
	if err := s.sameIdentity(name, m); err != nil {
		return err
	}
	return ValidateName(name)
}

// sameIdentity is checkIdentity for a Meta whose Name is known to be valid
// (one the Store remembers: every write and every read validated it), which
// needs no ValidateName: a key's name that equals it is as valid.
func (s *Store[S, T]) sameIdentity(name string, m *Meta) error {
	switch {
	case m.Kind != s.kind:
		return fmt.Errorf("the value claims kind %q", truncate(m.Kind))
	case m.Name != name:
		return fmt.Errorf("the value claims name %q", truncate(m.Name))
	}
	return nil
}

func (s *Store[S, T]) decodeError(kv kv.KeyValue, err error) *DecodeError {
	name, _ := s.nameOf(kv.Key)
	return &DecodeError{Kind: s.kind, Name: name, Key: kv.Key, Revision: kv.ModRevision, Err: err}
}

// Purge deletes the value stored under name's key whatever it holds,
// without decoding it: it is how a quarantined value (a *DecodeError) is
// removed with the typed API. Finalizers are not honoured, as the value may
// have none to read; use Delete for objects. With revision non-zero it
// deletes only the value written at that revision (DecodeError.Revision),
// else it fails with ErrConflict. It returns the revision of the deletion;
// a missing key gives ErrNotFound, a bad name ErrInvalid, a fence that no
// longer holds ErrFenced. Like every write it waits first for ctx's write
// limit (reconcile.WithWriteLimit), whose error it returns, deleting
// nothing.
//
// DryRun is the one option it takes (any other gives ErrInvalid), and a
// ctx from WithDryRun makes it a dry run too: it deletes nothing, checks
// that the key is there, the revision and the fence as the deletion would,
// returns the key's current revision, and reports Op "Purge" with
// Deleted set, or the error the deletion would have returned.
func (w *Writer[S, T]) Purge(ctx context.Context, name string, revision int64, opts ...WriteOption) (rev int64, err error) {
	ctx, d := beginDry(ctx, w, opts, "Purge", name)
	if d != nil {
		defer func() { d.end(err) }()
	}
	if w.manager == "" {
		return 0, fmt.Errorf("%w: write without a manager (use Store.As with a name)", ErrInvalid)
	}
	if err := ValidateName(name); err != nil {
		return 0, err
	}
	var cfg writeConfig
	if err := writeOpts(&cfg, "Purge", 0, opts); err != nil {
		return 0, err
	}
	key := w.s.prefix + name
	if d != nil && revision == 0 {
		// The dry run checks the key is there as the deletion would: as
		// a condition on the revision it has now.
		kv, err := w.s.b.Get(ctx, key)
		if err != nil {
			return 0, w.s.wrapNotFound(name, err)
		}
		revision = kv.ModRevision
	}
	h := wrote.HooksOf(ctx)
	// A write like the others: it waits for ctx's write limit (as txnAs
	// does, dry runs included).
	if err := storeaccess.WaitWriteLimit(ctx, h); err != nil {
		return 0, err
	}
	conds, fence := purgeConds(h, key, revision)
	del := kv.Write{Kind: kv.WriteDelete, Key: key}
	if d != nil {
		rev, err = w.dryTxn(ctx, d, conds, del)
	} else {
		rev, err = w.s.b.Txn(ctx, conds, del)
	}
	var cf *kv.CondFailedError
	if errors.As(err, &cf) {
		if revision != 0 && cf.Index == 0 {
			return 0, w.conflict(name, revision, cf.Actual)
		}
		return 0, fenceFailed(fence, cf.Actual)
	}
	if err != nil {
		return 0, w.s.wrapNotFound(name, err)
	}
	if d != nil {
		return rev, nil
	}
	observeWrite(h, w.s.b, name, rev)
	w.s.last.forget(key, rev)
	return rev, nil
}

// purgeConds are Purge's conditions: key at revision (none when revision
// is 0), then the fence of h, ctx's write hooks, when it has one, which it
// also returns.
func purgeConds(h *wrote.Hooks, key string, revision int64) ([]kv.Cond, Fence) {
	conds := []kv.Cond{{Key: key, Target: kv.ModRevision, Revision: revision}}
	if revision == 0 {
		conds = nil
	}
	fence, fenced := fenceOf(h)
	if fenced {
		conds = append(conds, fence.cond())
	}
	return conds, fence
}
