package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/steady-go/steady/internal/guard"
)

// Versions describes how a kind's Spec and Status types evolve: its
// versions, each a pair of Go types with conversion funcs to and from a hub,
// and the storage version, the one every write stores. Make one with
// NewVersions and give it, with the version a Store serves, to New through
// WithVersion. Several Stores (one per served version, in one program or in
// several) share one Versions.
//
// Conversion is hub and spoke: every version converts to and from the hub
// types, so N versions need 2N funcs, and a value stored at any version is
// served at any other through the hub. The hub must hold every field of
// every version (it is usually the newest version, or an internal type that
// is a superset of all of them): a field the hub drops is lost.
//
// What the storage version cannot represent is not lost: a write that
// converts keeps the hub fields the storage version drops in the stored
// value's envelope (as Kubernetes keeps such fields in annotations), and a
// read at a version that has them gets them back. A write by a version that
// lacks a field keeps the stored value of that field. So a value written by
// a newer program (serving a newer version) and updated by an older one
// loses nothing, as long as both know the version it is stored at.
//
// A stored value records its version in the envelope; a value with no
// version (written before the kind had versions) is at the first version
// given to NewVersions. A value at a version the Store does not know is a
// *DecodeError (quarantined, never overwritten): during a rolling upgrade,
// give the old program the new version's types, or keep storing the old
// version until every program knows the new one.
type Versions struct {
	storage string
	list    []*Version
	byName  map[string]*Version
}

// Version is one version of a kind: its name, Go types and conversion. Make
// one with VersionOf.
type Version struct {
	name      string
	spec      reflect.Type // the version's Spec and Status types
	status    reflect.Type
	hubSpec   reflect.Type
	hubStatus reflect.Type
	rules     []renameRule
	schemas   schemas // the merge strategies of the version's types
	err       error   // what NewVersions reports

	// toHub decodes the version's encoded Spec and Status (nil: absent,
	// the zero value), with d when not nil, and converts them to a new hub
	// (a *hubPair).
	toHub func(spec, status []byte, d *metaDecoder) (any, error)
	// roundTrip converts hub to this version and back to a new hub, and
	// returns the version's values too (boxed).
	roundTrip func(hub any) (back any, spec, status any, err error)
	// fromHub converts hub to this version's values, stored in spec and
	// status (a *S and a *T: a pointer boxes without allocating).
	fromHub func(hub, spec, status any) error
	// hubSides returns pointers to hub's Spec and Status.
	hubSides func(hub any) (spec, status any)
}

// Conversion is what VersionOf needs to convert a version's values (Spec S,
// Status T) to and from the hub's (HS, HT). A nil func converts by
// identity, which needs the version's types to be the hub's (the hub
// version). The funcs get copies they may keep; Meta and Conditions are
// the store's and are not converted. An error makes the read (or write)
// fail with ErrInvalid: the value is quarantined as a *DecodeError.
type Conversion[S, T, HS, HT any] struct {
	ToHub   func(S, T) (HS, HT, error)
	FromHub func(HS, HT) (S, T, error)
	// Renames maps this version's paths to the hub's, for field
	// ownership (see Rename).
	Renames []Rename
}

// Rename maps a path of a version (From) to the hub's (To), in the
// notation of package diff, such as ".spec.image" to ".spec.containerImage"
// (the leading dot may be left out). A path under From maps to the same
// path under To. Field ownership records are kept in the storage version's
// paths and converted through the renames of both versions (see
// versions_managed.go); a path of neither table maps to itself, and one
// under a From whose To is "" has no counterpart: it is dropped from its
// record, with a log line.
type Rename struct{ From, To string }

// hubPair is the hub value of a versioned object.
type hubPair[HS, HT any] struct {
	Spec   HS
	Status HT
}

// VersionOf describes version name of a kind: values of Spec S and Status
// T, converted to and from the hub (Spec HS, Status HT) by c. Give it to
// NewVersions, which reports what is wrong with it (a Rename that does not
// parse, malformed steady struct tags).
func VersionOf[S, T, HS, HT any](name string, c Conversion[S, T, HS, HT]) *Version {
	toHub, fromHub := c.ToHub, c.FromHub
	if toHub != nil {
		toHub = catchToHub(toHub)
	}
	if fromHub != nil {
		fromHub = catchFromHub(fromHub)
	}
	if toHub == nil {
		toHub = func(s S, t T) (hs HS, ht HT, err error) {
			hs, ok1 := any(s).(HS)
			ht, ok2 := any(t).(HT)
			if !ok1 || !ok2 {
				err = fmt.Errorf("version %q has no ToHub and is not the hub's types", name)
			}
			return hs, ht, err
		}
	}
	if fromHub == nil {
		fromHub = func(hs HS, ht HT) (s S, t T, err error) {
			s, ok1 := any(hs).(S)
			t, ok2 := any(ht).(T)
			if !ok1 || !ok2 {
				err = fmt.Errorf("version %q has no FromHub and is not the hub's types", name)
			}
			return s, t, err
		}
	}
	v := &Version{
		name: name,
		spec: reflect.TypeFor[S](), status: reflect.TypeFor[T](),
		hubSpec: reflect.TypeFor[HS](), hubStatus: reflect.TypeFor[HT](),
	}
	v.rules, v.err = parseRenames(name, c.Renames)
	if v.err == nil {
		if v.schemas, v.err = newSchemas[S, T](); v.err != nil {
			v.err = fmt.Errorf("version %q: %v", name, v.err)
		}
	}
	convTo := func(s S, t T) (any, error) {
		hs, ht, err := toHub(s, t)
		if err != nil {
			return nil, fmt.Errorf("converting version %q to the hub: %w", name, err)
		}
		return &hubPair[HS, HT]{hs, ht}, nil
	}
	convFrom := func(hub any) (S, T, error) {
		h := hub.(*hubPair[HS, HT])
		s, t, err := fromHub(h.Spec, h.Status)
		if err != nil {
			err = fmt.Errorf("converting the hub to version %q: %w", name, err)
		}
		return s, t, err
	}
	specPlan, statusPlan := sidePlanOf(v.spec), sidePlanOf(v.status)
	v.toHub = func(spec, status []byte, d *metaDecoder) (any, error) {
		// One allocation for what the decoder fills and the hub.
		x := new(struct {
			s   S
			t   T
			hub hubPair[HS, HT]
		})
		if err := d.sideWith(spec, &x.s, specPlan); err != nil {
			return nil, fmt.Errorf("spec at version %q: %w", name, err)
		}
		if err := d.sideWith(status, &x.t, statusPlan); err != nil {
			return nil, fmt.Errorf("status at version %q: %w", name, err)
		}
		hs, ht, err := toHub(x.s, x.t)
		if err != nil {
			return nil, fmt.Errorf("converting version %q to the hub: %w", name, err)
		}
		x.hub = hubPair[HS, HT]{hs, ht}
		return &x.hub, nil
	}
	v.fromHub = func(hub, spec, status any) error {
		s, t, err := convFrom(hub)
		*spec.(*S), *status.(*T) = s, t
		return err
	}
	v.roundTrip = func(hub any) (any, any, any, error) {
		s, t, err := convFrom(hub)
		if err != nil {
			return nil, nil, nil, err
		}
		back, err := convTo(s, t)
		return back, s, t, err
	}
	v.hubSides = func(hub any) (any, any) {
		h := hub.(*hubPair[HS, HT])
		return &h.Spec, &h.Status
	}
	return v
}

// catchToHub makes a ToHub that panics return the panic as its error,
// so the value it was converting is quarantined as a *DecodeError (or the
// write refused) like a value whose conversion fails: a panic on one value
// must not crash a watch's or a cache's goroutine, nor stop the rest of a
// List. Only conversions pay for the deferred recover; a read at the
// served version never calls it.
func catchToHub[S, T, HS, HT any](f func(S, T) (HS, HT, error)) func(S, T) (HS, HT, error) {
	return func(s S, t T) (hs HS, ht HT, err error) {
		var p *guard.Panic
		defer func() {
			if p != nil {
				err = p
			}
		}()
		defer guard.Catch(&p)
		return f(s, t)
	}
}

// catchFromHub is catchToHub for FromHub.
func catchFromHub[S, T, HS, HT any](f func(HS, HT) (S, T, error)) func(HS, HT) (S, T, error) {
	return func(hs HS, ht HT) (s S, t T, err error) {
		var p *guard.Panic
		defer func() {
			if p != nil {
				err = p
			}
		}()
		defer guard.Catch(&p)
		return f(hs, ht)
	}
}

// unmarshalSide decodes an encoded Spec or Status; absent or null leaves
// the zero value.
func unmarshalSide(b []byte, v any) error {
	return (*metaDecoder)(nil).side(b, v)
}

// side is unmarshalSide with d's reusable decoder (see metaDecoder.json),
// for a b that is one JSON value; with d nil, it uses json.Unmarshal.
func (d *metaDecoder) side(b []byte, v any) error {
	return d.sideWith(b, v, nil)
}

// sideWith is side that decodes with plan (see sideDecoder) when d has
// scratch space.
func (d *metaDecoder) sideWith(b []byte, v any, plan sideDecoder) error {
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return nil
	}
	if d != nil && d.scratch != nil {
		if d.decodeSide(b, v, plan) {
			return nil
		}
		// For the error, from a fresh start.
		reflect.ValueOf(v).Elem().SetZero()
	}
	return json.Unmarshal(b, v)
}

// NewVersions returns the versions of a kind, oldest first, whose storage
// version is storage. A value stored with no version is at the first. It
// returns an error wrapping ErrInvalid for no versions, a nil one, one
// VersionOf found wrong, an empty
// or repeated name, a name that is not a kind-like word (see New), a
// storage version not among them, or versions whose hubs are not the same
// types.
func NewVersions(storage string, versions ...*Version) (*Versions, error) {
	if len(versions) == 0 {
		return nil, fmt.Errorf("%w: NewVersions with no version", ErrInvalid)
	}
	vs := &Versions{storage: storage, byName: map[string]*Version{}}
	for i, v := range versions {
		if v == nil {
			return nil, fmt.Errorf("%w: version %d is nil", ErrInvalid, i)
		}
		if v.err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, v.err)
		}
		if err := validateKind(v.name); err != nil {
			return nil, fmt.Errorf("%w: version name: %v", ErrInvalid, err)
		}
		if _, dup := vs.byName[v.name]; dup {
			return nil, fmt.Errorf("%w: version %q given twice", ErrInvalid, v.name)
		}
		if v.hubSpec != versions[0].hubSpec || v.hubStatus != versions[0].hubStatus {
			return nil, fmt.Errorf("%w: version %q converts to hub %v/%v, version %q to %v/%v: one kind has one hub",
				ErrInvalid, v.name, v.hubSpec, v.hubStatus, versions[0].name, versions[0].hubSpec, versions[0].hubStatus)
		}
		vs.byName[v.name] = v
		vs.list = append(vs.list, v)
	}
	if vs.byName[storage] == nil {
		return nil, fmt.Errorf("%w: storage version %q is not among %s", ErrInvalid, storage, vs.names())
	}
	return vs, nil
}

// names lists the version names for messages.
func (vs *Versions) names() string {
	names := make([]string, len(vs.list))
	for i, v := range vs.list {
		names[i] = v.name
	}
	return strings.Join(names, ", ")
}

// WithVersion makes the Store serve version served of the kind's versions
// vs: it reads values stored at any of them, converted to served (S and T
// must be served's types), and writes at vs's storage version. Without it,
// a kind has no versions: values are stored with none, and a value stored
// with one is a *DecodeError. New rejects, with ErrInvalid, a nil vs, a
// served version vs does not have, and S or T other than its types.
func WithVersion(served string, vs *Versions) Option {
	return func(c *config) { c.served, c.versions, c.versionsSet = served, vs, true }
}

// storeVersions is a versioned Store's view of its kind's versions.
type storeVersions struct {
	*Versions
	served  *Version
	storage *Version
	first   string // the version of a value stored with none
	// converted remembers the ownership records reads converted.
	converted *convertedMemo
}

// newStoreVersions checks WithVersion's arguments against S and T.
func newStoreVersions[S, T any](served string, vs *Versions) (*storeVersions, error) {
	if vs == nil {
		return nil, fmt.Errorf("%w: WithVersion(%q) with nil Versions", ErrInvalid, served)
	}
	v := vs.byName[served]
	if v == nil {
		return nil, fmt.Errorf("%w: served version %q is not among %s", ErrInvalid, served, vs.names())
	}
	if v.spec != reflect.TypeFor[S]() || v.status != reflect.TypeFor[T]() {
		return nil, fmt.Errorf("%w: version %q is %v/%v, the Store's types are %v/%v",
			ErrInvalid, served, v.spec, v.status, reflect.TypeFor[S](), reflect.TypeFor[T]())
	}
	return &storeVersions{Versions: vs, served: v, storage: vs.byName[vs.storage], first: vs.list[0].name, converted: &convertedMemo{}}, nil
}

// Version returns the version the Store serves, "" for a kind without
// versions.
func (v *internalView[S, T]) Version() string {
	s := (*Store[S, T])(v)
	if s.ver == nil {
		return ""
	}
	return s.ver.served.name
}
