package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/steady-go/steady/store/kv"
	"reflect"
	"unsafe"
)

// How a versioned Store converts.
//
// Reads: a value at the served version decodes as any other (the version
// key costs one string compare). A value at another version V decodes its
// envelope, then V's Spec and Status (one decode), goes to the hub with V's
// ToHub, gets back the hub fields V could not hold (the envelope's
// "preserved"), and comes to the served version with its FromHub.
//
// Writes: the write paths work on rawObject with Spec and Status at the
// served version, and rawObject.stored keeps the value as stored. A write
// at the storage version of a value stored there, with nothing preserved,
// is encoded as it is. Otherwise encodeStored converts: the served value's
// hub is merged three ways with the stored value's hub (so a field the
// served version cannot hold, and so did not change, keeps its stored
// value), converted to the storage version, and what that drops is kept
// in "preserved".

// storedSides is the stored Spec and Status of a value a versioned Store
// read, and their version ("" when not read from storage). Each side is
// its first byte and length (storedAs, sides), two words where a slice
// took three, so that rawObject fits its size class
// (TestRawObjectFitsItsSizeClass); sides gives them back capped at their
// length.
type storedSides struct {
	version            string
	spec, status       *byte
	specLen, statusLen int
}

// storedAs is the storedSides of spec and status at version.
func storedAs(version string, spec, status []byte) storedSides {
	return storedSides{version: version, spec: unsafe.SliceData(spec), status: unsafe.SliceData(status), specLen: len(spec), statusLen: len(status)}
}

// sides returns the stored Spec and Status (nil where nil was stored).
func (s *storedSides) sides() (spec, status []byte) {
	return unsafe.Slice(s.spec, s.specLen), unsafe.Slice(s.status, s.statusLen)
}

// errOtherVersion is decodeObject's report that the value is at another
// version than the one the Store serves.
var errOtherVersion = errors.New("stored at another version")

// preservedSides is the envelope's "preserved": per side, the hub fields
// the stored version cannot hold, as a JSON object to decode over the hub.
type preservedSides struct {
	Spec   json.RawMessage `json:"spec,omitempty"`
	Status json.RawMessage `json:"status,omitempty"`
}

// versionOf returns the Version a value says it is at (stored "" is the
// first), or an error naming what the Store knows.
func (s *Store[S, T]) versionOf(stored string) (*Version, error) {
	if s.ver == nil {
		return nil, fmt.Errorf("stored at version %q, and kind %s has no versions in this program (see WithVersion)", truncate(stored), s.kind)
	}
	if stored == "" {
		stored = s.ver.first
	}
	v := s.ver.byName[stored]
	if v == nil {
		return nil, fmt.Errorf("stored at version %q, which this program does not know (it knows %s)", truncate(stored), s.ver.names())
	}
	return v, nil
}

// hubOf converts a value stored at v to the hub, preserved fields included,
// decoding with d when not nil.
func hubOf(d *metaDecoder, v *Version, spec, status, preserved []byte) (any, error) {
	hub, err := v.toHub(spec, status, d)
	if err != nil {
		return nil, err
	}
	if len(preserved) == 0 {
		return hub, nil
	}
	var p preservedSides
	if err := json.Unmarshal(preserved, &p); err != nil {
		return nil, fmt.Errorf("preserved fields: %v", err)
	}
	hs, ht := v.hubSides(hub)
	if err := unmarshalSide(p.Spec, hs); err != nil {
		return nil, fmt.Errorf("preserved spec fields: %v", err)
	}
	if err := unmarshalSide(p.Status, ht); err != nil {
		return nil, fmt.Errorf("preserved status fields: %v", err)
	}
	return hub, nil
}

// decodeConverted is decodeLike for a value at another version than the
// served one: it converts it into obj (zeroed first; nil: a new one), or
// returns the *DecodeError saying why not. The value is decoded once: its
// stored Spec and Status into the stored version's types, which the
// conversion funcs take to the served version's, and its ownership records
// are converted as convertManaged remembers them.
func (s *Store[S, T]) decodeConverted(kv kv.KeyValue, scratch *decodeScratch, obj *Object[S, T]) (decodedFrom[S, T], error) {
	d := s.metaDecoder(kv.Key, scratch)
	d.specShape = true
	var raw rawObject // Spec and Status slices of kv.Value
	var err error
	if !decodeRawShared(kv.Value, &raw, d) {
		// Not into raw, which encoding/json would move to the heap.
		slow := new(rawObject)
		if err = decodeRawJSON(kv.Value, slow); err != nil {
			err = fmt.Errorf("%w: decoding %q: %v", ErrInvalid, kv.Key, err)
		}
		raw, d.specKey = *slow, nil
	}
	raw.Meta.Revision = kv.ModRevision
	if err == nil {
		err = s.checkIdentity(d.name, &raw.Meta)
	}
	var v *Version
	if err == nil {
		v, err = s.versionOf(raw.Version)
	}
	var hub any
	if err == nil {
		hub, err = hubOf(d, v, raw.Spec, raw.Status, raw.Preserved)
	}
	if obj == nil {
		obj = new(Object[S, T])
	} else {
		*obj = Object[S, T]{}
	}
	if err == nil {
		err = s.ver.served.fromHub(hub, &obj.Spec, &obj.Status)
	}
	if err != nil {
		return decodedFrom[S, T]{}, s.decodeError(kv, err)
	}
	obj.Meta, obj.Conditions = raw.Meta, raw.Conditions
	obj.Meta.Managed = s.convertManaged(&raw.Meta, v, s.ver.served, &raw, nil, d.specKey)
	return decodedFrom[S, T]{obj: obj}, nil
}

// served brings raw, as decoded from storage, to the served version,
// keeping the stored form in raw.stored. For a kind without versions it
// only checks that the value has no version either.
func (s *Store[S, T]) served(raw *rawObject) error {
	if s.ver == nil {
		if raw.Version != "" {
			_, err := s.versionOf(raw.Version)
			return err
		}
		return nil
	}
	v, err := s.versionOf(raw.Version)
	if err != nil {
		return err
	}
	raw.stored = storedAs(v.name, raw.Spec, raw.Status)
	raw.Version = s.ver.served.name
	if v == s.ver.served {
		return nil
	}
	hub, err := hubOf(nil, v, raw.Spec, raw.Status, raw.Preserved)
	if err != nil {
		return err
	}
	var spec S
	var status T
	if err := s.ver.served.fromHub(hub, &spec, &status); err != nil {
		return err
	}
	if raw.Spec, err = json.Marshal(&spec); err != nil {
		return fmt.Errorf("encoding spec at version %q: %v", raw.Version, err)
	}
	if raw.Status, err = json.Marshal(&status); err != nil {
		return fmt.Errorf("encoding status at version %q: %v", raw.Version, err)
	}
	storedSpec, storedStatus := raw.stored.sides()
	stored := &rawObject{Meta: raw.Meta, Spec: storedSpec, Status: storedStatus, Conditions: raw.Conditions}
	raw.Meta.Managed = s.convertManaged(&raw.Meta, v, s.ver.served, stored, nil, nil)
	return nil
}

// encodeStored returns the stored value of next, whose Spec and Status are
// at the served version, and sets next.stored and next.Preserved to what is
// stored.
func (s *Store[S, T]) encodeStored(next *rawObject) ([]byte, error) {
	val, _, err := s.encodeStoredOver(nil, next)
	return val, err
}

// encodeStoredOver is encodeStored for a write of next computed from cur
// (nil: none), with the length of the value's head (see
// rawObject.encodeOver): at no version only.
func (s *Store[S, T]) encodeStoredOver(cur, next *rawObject) ([]byte, int, error) {
	v := s.ver
	if v == nil {
		return next.encodeOver(cur)
	}
	val, err := s.encodeVersioned(next)
	return val, 0, err
}

// encodeVersioned is encodeStored for a Store with versions.
func (s *Store[S, T]) encodeVersioned(next *rawObject) ([]byte, error) {
	v := s.ver
	if v.served == v.storage && (next.stored.version == "" || next.stored.version == v.storage.name) && len(next.Preserved) == 0 {
		next.Version = v.storage.name
		val, err := next.encode()
		next.stored = storedAs(v.storage.name, next.Spec, next.Status)
		return val, err
	}
	out, err := s.convertForWrite(next)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %q: %v", ErrInvalid, s.kind, next.Meta.Name, err)
	}
	val, err := out.encode()
	if err != nil {
		return nil, err
	}
	next.Version = v.served.name
	next.stored = storedAs(out.Version, out.Spec, out.Status)
	next.Preserved = out.Preserved
	return val, nil
}

// convertForWrite returns next at the storage version.
func (s *Store[S, T]) convertForWrite(next *rawObject) (_ *rawObject, err error) {
	if s.ownCodec {
		defer catchEncode("at version "+s.ver.storage.name, &err)
	}
	served, storage := s.ver.served, s.ver.storage
	hub, err := served.toHub(next.Spec, next.Status, nil)
	if err != nil {
		return nil, err
	}
	if next.stored.version != "" {
		old, err := s.versionOf(next.stored.version)
		if err != nil {
			return nil, err
		}
		storedSpec, storedStatus := next.stored.sides()
		theirs, err := hubOf(nil, old, storedSpec, storedStatus, next.Preserved)
		if err != nil {
			return nil, err
		}
		// What the served version made of the stored value: a field it
		// left as it saw it keeps the stored value, which may hold more.
		base, _, _, err := served.roundTrip(theirs)
		if err != nil {
			return nil, err
		}
		if hub, err = mergeHubs(served, theirs, base, hub); err != nil {
			return nil, err
		}
	}
	back, spec, status, err := storage.roundTrip(hub)
	if err != nil {
		return nil, err
	}
	out := *next
	out.Version = storage.name
	if out.Spec, err = json.Marshal(addressable(spec)); err != nil {
		return nil, fmt.Errorf("encoding spec at version %q: %v", storage.name, err)
	}
	if out.Status, err = json.Marshal(addressable(status)); err != nil {
		return nil, fmt.Errorf("encoding status at version %q: %v", storage.name, err)
	}
	if out.Preserved, err = preservedOf(storage, hub, back); err != nil {
		return nil, err
	}
	out.Meta.Managed = s.convertManaged(&next.Meta, served, storage, next, &out, nil)
	return &out, nil
}

// mergeHubs merges, side by side, the hub of a write (mine) with the hub of
// the stored value (theirs), base being theirs as the writer's version saw
// it: what the writer left as it saw it keeps theirs, what it changed is
// its own. It returns mine, merged.
func mergeHubs(v *Version, theirs, base, mine any) (any, error) {
	t := sidesOf(v, theirs)
	b := sidesOf(v, base)
	m := sidesOf(v, mine)
	for i := range m {
		tj, err := json.Marshal(t[i])
		if err != nil {
			return nil, err
		}
		bj, err := json.Marshal(b[i])
		if err != nil {
			return nil, err
		}
		mj, err := json.Marshal(m[i])
		if err != nil {
			return nil, err
		}
		var merged []byte
		switch {
		case bytes.Equal(mj, bj):
			merged = tj
		case bytes.Equal(tj, bj):
			continue
		default:
			tt, bt, mt := jsonTree(tj), jsonTree(bj), jsonTree(mj)
			if merged, err = json.Marshal(merge3(tt, bt, mt)); err != nil {
				return nil, err
			}
		}
		p := reflect.ValueOf(m[i]).Elem()
		p.SetZero()
		if err := json.Unmarshal(merged, m[i]); err != nil {
			return nil, fmt.Errorf("merging the hub: %v", err)
		}
	}
	return mine, nil
}

func sidesOf(v *Version, hub any) [2]any {
	spec, status := v.hubSides(hub)
	return [2]any{spec, status}
}

// preservedOf returns the envelope's "preserved" for a value stored as
// back (the hub of what is stored) from hub: the fields of hub back lacks
// or holds otherwise, or nil when there are none.
func preservedOf(v *Version, hub, back any) (json.RawMessage, error) {
	h, b := sidesOf(v, hub), sidesOf(v, back)
	var out preservedSides
	for i, dst := range []*json.RawMessage{&out.Spec, &out.Status} {
		hj, err := json.Marshal(h[i])
		if err != nil {
			return nil, err
		}
		bj, err := json.Marshal(b[i])
		if err != nil {
			return nil, err
		}
		if bytes.Equal(hj, bj) {
			continue
		}
		if d, ok := diffTree(jsonTree(hj), jsonTree(bj)); ok {
			if *dst, err = json.Marshal(d); err != nil {
				return nil, err
			}
		}
	}
	if out.Spec == nil && out.Status == nil {
		return nil, nil
	}
	return json.Marshal(out)
}

// jsonTree decodes JSON that json.Marshal wrote into maps, slices and
// json.Numbers (exact integers).
func jsonTree(b []byte) any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	_ = d.Decode(&v) // encoding/json's own output
	return v
}

// diffTree returns the parts of a that b lacks or holds otherwise: a
// member of an object that differs is diffed when both are objects, and
// whole otherwise. A member only b has is left out (decoding the result
// over a value can add and change, not remove).
func diffTree(a, b any) (any, bool) {
	am, ok1 := a.(map[string]any)
	bm, ok2 := b.(map[string]any)
	if !ok1 || !ok2 {
		return a, !reflect.DeepEqual(a, b)
	}
	out := map[string]any{}
	for k, av := range am {
		bv, ok := bm[k]
		if !ok {
			out[k] = av
			continue
		}
		if d, differ := diffTree(av, bv); differ {
			out[k] = d
		}
	}
	return out, len(out) > 0
}

// merge3 merges a change from base to mine into theirs: a member mine left
// as base has it keeps theirs; a member both changed is merged when all
// three are objects, and is mine's otherwise.
func merge3(theirs, base, mine any) any {
	if reflect.DeepEqual(mine, base) {
		return theirs
	}
	tm, ok1 := theirs.(map[string]any)
	bm, ok2 := base.(map[string]any)
	mm, ok3 := mine.(map[string]any)
	if !ok1 || !ok2 || !ok3 {
		return mine
	}
	out := map[string]any{}
	for _, src := range []map[string]any{tm, bm, mm} {
		for k := range src {
			if _, done := out[k]; done {
				continue
			}
			t, tok := tm[k]
			b, bok := bm[k]
			m, mok := mm[k]
			switch {
			case mok == bok && (!mok || reflect.DeepEqual(m, b)):
				if tok {
					out[k] = t
				}
			case !mok:
				// The writer removed it.
			case tok && bok:
				out[k] = merge3(t, b, m)
			default:
				out[k] = m
			}
		}
	}
	return out
}
