package store

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/objpath"
	"github.com/steady-go/steady/ownership"
)

// sideManaged returns obj's field ownership (Meta.Managed) on one side of
// the object, decoded: the spec side (.metadata... and .spec... paths) or
// the status side (.status... and .conditions[type="..."] paths). Entries
// that do not decode against obj are left out (see Meta.Managed). obj should
// be as read from the store: ownership is encoded relative to the stored
// fields.
//
// The record the Store remembers from its own write of obj's revision
// (writtenManaged) is taken first, and not put in the memo: it is there
// for as long as the memory holds it, and a Loop judging its own status
// write, every other event, looks no further.
func (s *Store[S, T]) sideManaged(obj *Object[S, T], side string) (ownership.Managed, error) {
	if m, ok := s.writtenManaged(obj, side); ok {
		return m, nil
	}
	if m, ok := s.memo.get(obj, obj.Meta.Revision, side); ok {
		return m, nil
	}
	m, err := s.decodeSideManaged(obj, side)
	if err == nil {
		s.memo.put(obj, obj.Meta.Revision, side, m)
	}
	return m, err
}

// writtenManaged returns the status side's record of obj as the Store
// remembers it from its own write of obj's revision (a status write, which
// knows the record it wrote: see decodedSides), when it does: the Loop's
// status write, judged when its event comes back, is not decoded again. It
// serves a status of type T whose JSON form round-trips (plainJSON) only:
// the remembered record is decoded against the stored status, and obj's
// re-encoded status (decodeSideManaged) is that same JSON then.
func (s *Store[S, T]) writtenManaged(obj *Object[S, T], side string) (ownership.Managed, bool) {
	if side != statusSide || !s.plainStatus {
		return nil, false
	}
	d := s.last.writtenStatus(s.prefix, obj.Meta.Name, obj.Meta.Revision)
	if d == nil {
		return nil, false
	}
	return d.managed, true
}

func (s *Store[S, T]) decodeSideManaged(obj *Object[S, T], side string) (ownership.Managed, error) {
	var enc []byte
	var err error
	if side == statusSide {
		enc, err = encodeJSON("status", obj.Status)
	} else {
		enc, err = encodeJSON("spec", obj.Spec)
	}
	if err != nil {
		return nil, err
	}
	raw := &rawObject{Meta: obj.Meta, Conditions: obj.Conditions}
	if side == statusSide {
		raw.Status = enc
	} else {
		raw.Spec = enc
	}
	codec, err := s.schemas.codecOf(raw, side, nil)
	if err != nil {
		return nil, err
	}
	d, _ := s.schemas.decodeSideWith(&raw.Meta, side, func() (*ownership.Codec, error) { return codec, nil }, s.schemas.codecs.decodeNodes)
	return d.managed, nil
}

// FieldChanges reports the fields that differ between two states of an
// object, in the path space of Meta.Managed (.metadata.labels.app,
// .spec.replicas, .conditions[type="Ready"].status, ...), split by whether
// manager owns them, as ownership.Attribute decides from the object's
// ownership before and after the change. A change of DeletionRequested is
// reported as .metadata.deletionRequested, owned by nobody. Bookkeeping
// (Generation, LastWrite, Managed, Revision) is not a change.
//
// The two slices are the caller's, but the paths in them may be shared
// with the Store and with other calls' results (a Spec or Status field's
// path is built once per Store; .metadata.deletionRequested is objpath's):
// callers must not modify a returned path (its elements, or past its
// length by appending to it); copy it first (diff.Path.Append copies).
//
// If the ownership of a side of the object cannot be read, every change on
// that side counts as foreign, which errs towards acting on the change. (The
// ownership before the change is read only when the ownership after it
// leaves a path not manager's, see below; for objects as read from the
// store, whose sides always decode, that changes no answer.)
//
// Cost: the differences are found on the typed values, and only for a side
// (spec or status) that is not plainly equal (reflect.DeepEqual, which is
// stricter than the diff), and not even that for a spec side whose
// metadata is plainly equal at the same UID and Generation (the Store
// bumps Generation whenever the spec changes: old and new as read from
// the store, the spec is unchanged); of a spec side whose metadata is
// plainly equal, the Spec alone when it is a struct; of a status side whose conditions are
// plainly equal, the Status alone when it is a struct (a struct with a plain
// form field by field, each field compared once). The ownership of a side is decoded only when
// that side changed and manager has an entry on it before or after the
// change. Without one, manager owns none of the side's fields and its
// changes are foreign without a decode (the usual case for a controller
// judging a user's spec write). The ownership before the change is decoded
// only when the ownership after it leaves a changed path not manager's
// (ownership.Attribute consults it for nothing else): a controller judging
// its own status write decodes the new object's record alone. The Store remembers the decoded ownership
// of the last few objects it was given, by address and revision, so that
// the new object of one event, which is the old object of the next, is
// decoded once: old and new must be as read from the store and never
// modified (a copy is a different object). The status side's record of a
// revision the Store wrote itself, with a Status type whose JSON form
// round-trips, is taken from its memory of values when that holds it (see
// WithLastValues): the event of a controller's status write decodes none.
func (s *Store[S, T]) FieldChanges(old, new *Object[S, T], manager string) (owned, foreign []diff.Path) {
	return s.fieldChanges(old, new, manager, nil, nil)
}

// FieldChangesAppend is FieldChanges appending to owned and foreign, which
// the caller keeps from change to change (reconcile's change judge, its
// two lists emptied each time): a judgement then allocates no list. The
// paths appended are FieldChanges', shared as its are: the caller must not
// modify them, and must copy the lists (not only the paths) to keep them
// past the next call that appends to the same arrays. It is reconcile's,
// reached through internal/storeaccess.
func (v *internalView[S, T]) FieldChangesAppend(old, new *Object[S, T], manager string, owned, foreign []diff.Path) ([]diff.Path, []diff.Path) {
	return (*Store[S, T])(v).fieldChanges(old, new, manager, owned, foreign)
}

// fieldChanges is FieldChanges appending to owned and foreign (nil for
// FieldChanges, whose lists are then new: the caller's).
func (s *Store[S, T]) fieldChanges(old, new *Object[S, T], manager string, owned, foreign []diff.Path) ([]diff.Path, []diff.Path) {
	var specChanges, statusChanges []diff.Path
	// A leaf side's changes go in buf while they are only read here (by
	// attribute, which copies them): a status write of the manager's own,
	// every other event of a controller, allocates no list of them.
	var buf [4]diff.Path
	var v *changeViews[S, T] // taken only for a side diffed whole
	eq := s.sideEquals()
	// A struct side with judgedFields is compared field by field alone:
	// comparing it whole first (the equality of S or T) would compare
	// every field twice when one changed, as one has on an event judged.
	switch metaEqual := userMetaSideEqual(old, new); {
	case metaEqual && sameSpec(&old.Meta, &new.Meta):
	case metaEqual && eq.specFields != nil:
		specChanges = structChanges(buf[:0:2], eq.specFields, objpath.Spec, &old.Spec, &new.Spec)
	case metaEqual && eq.spec(unsafe.Pointer(&old.Spec), unsafe.Pointer(&new.Spec)):
	case metaEqual && reflect.TypeFor[S]().Kind() == reflect.Struct:
		specChanges = structChanges(buf[:0:2], eq.specFields, objpath.Spec, &old.Spec, &new.Spec)
	default:
		v = s.takeViews(v)
		v.spec[0], v.spec[1] = specView[S]{metaViewOf(&old.Meta), old.Spec}, specView[S]{metaViewOf(&new.Meta), new.Spec}
		specChanges = diff.ChangedPaths(&v.spec[0], &v.spec[1], specDiffOptions)
	}
	switch condEqual := slices.Equal(old.Conditions, new.Conditions); {
	case condEqual && eq.statusFields != nil:
		statusChanges = structChanges(buf[2:2], eq.statusFields, objpath.Status, &old.Status, &new.Status)
	case condEqual && eq.status(unsafe.Pointer(&old.Status), unsafe.Pointer(&new.Status)):
	case condEqual && reflect.TypeFor[T]().Kind() == reflect.Struct:
		statusChanges = structChanges(buf[2:2], eq.statusFields, objpath.Status, &old.Status, &new.Status)
	default:
		v = s.takeViews(v)
		v.status[0], v.status[1] = statusView[T]{old.Status, nonNil(old.Conditions)}, statusView[T]{new.Status, nonNil(new.Conditions)}
		statusChanges = diff.ChangedPaths(&v.status[0], &v.status[1], statusDiffOptions)
	}
	if v != nil {
		*v = changeViews[S, T]{} // hold nothing of old and new
		s.views.Put(v)
	}
	if old.Meta.DeletionRequested != new.Meta.DeletionRequested {
		foreign = append(foreign, objpath.DeletionRequested)
	}
	if len(specChanges) > 0 {
		owned, foreign = s.attributeSide(old, new, specSide, manager, specChanges, owned, foreign)
	}
	if len(statusChanges) > 0 {
		owned, foreign = s.attributeSide(old, new, statusSide, manager, statusChanges, owned, foreign)
	}
	return owned, foreign
}

// attributeSide is FieldChanges' split of the changes of one side (spec
// or status) by owner, appended to owned and foreign, after the changes
// it found owned by nobody (in foreign already). The changes are copied:
// they may be FieldChanges' buf's.
func (s *Store[S, T]) attributeSide(old, new *Object[S, T], side, manager string, changed, owned, foreign []diff.Path) ([]diff.Path, []diff.Path) {
	if !hasEntry(&old.Meta, side, manager) && !hasEntry(&new.Meta, side, manager) {
		return owned, append(foreign, changed...) // Attribute needs an entry of manager's to own a path
	}
	return s.attribute(old, new, side, manager, changed, owned, foreign)
}

// takeViews returns v, or when v is nil one of s's views to diff in.
func (s *Store[S, T]) takeViews(v *changeViews[S, T]) *changeViews[S, T] {
	if v == nil {
		if v, _ = s.views.Get().(*changeViews[S, T]); v == nil {
			v = &changeViews[S, T]{}
		}
	}
	return v
}

// attribute is ownership.Attribute of the changes of one side from old to
// new, appended to owned and foreign, with old's ownership decoded only
// when it can decide a path. Attribute reads the ownership before a change
// only for a path nobody owns after it, and can then only make the path
// manager's: judged from new's record alone (before nil), a change whose
// every path is manager's (the Loop's own status write, every event) is
// judged, so old's record is not decoded. When a record needed cannot be
// read, every change is appended to foreign.
func (s *Store[S, T]) attribute(old, new *Object[S, T], side, manager string, changed, owned, foreign []diff.Path) ([]diff.Path, []diff.Path) {
	after, err := s.sideManaged(new, side)
	if err != nil {
		return owned, append(foreign, changed...)
	}
	o, f := ownership.AttributeAppend(owned, foreign, manager, changed, nil, after)
	if len(f) == len(foreign) {
		return o, f
	}
	before, err := s.sideManaged(old, side)
	if err != nil {
		return owned, append(foreign, changed...)
	}
	// Judged again from both records, over the same arrays.
	o, f = ownership.AttributeAppend(o[:len(owned)], f[:len(foreign)], manager, changed, before, after)
	if len(f) == len(foreign) {
		// None foreign after all: foreign as given (FieldChanges' nil),
		// not the first judgement's array emptied.
		f = foreign
	}
	return o, f
}

// ChangedBy splits paths, changed fields of an object in the path space of
// Meta.Managed (as FieldChanges reports them), by who made them: those
// manager made and those other managers made, as ownership.ChangedBy
// decides from new's field ownership and new.Meta.LastWrite.Manager. One
// write's paths are all its writer's; a change that merges several writes
// (a cache that relisted after its watch expired shows the writes of
// several managers as one modification) is split path by path, so that
// two managers writing disjoint fields are told apart. A path is the last
// writer's when the ownership of its side of new cannot be read. new must
// be as read from the store (see FieldChanges). It is reconcile's (its
// oscillation detector), reached through internal/storeaccess.
//
// The results may share paths' backing array. Cost: when every path falls
// on one side, that result is paths itself and nothing is allocated. A side's ownership is decoded only when manager
// could own a path on it (new records fields of manager's on that side, or
// manager is the last writer), from the memo FieldChanges fills.
func (v *internalView[S, T]) ChangedBy(new *Object[S, T], manager string, paths []diff.Path) (mine, others []diff.Path) {
	if len(paths) == 0 {
		return nil, nil
	}
	s := (*Store[S, T])(v)
	writer := new.Meta.LastWrite.Manager
	if writer != manager && noneOwnable(&new.Meta, manager, paths) {
		// Another writer's change that manager can own no path of (by
		// below, without its closure): the usual one the Loop's
		// oscillation detector is fed, a spec write.
		return nil, paths
	}
	var managed [2]ownership.Managed
	var state [2]uint8 // 0 not decoded, 1 decoded, 2 unreadable or not needed
	by := func(p diff.Path) bool {
		i, side := 0, specSide
		if objpath.StatusSide(p) {
			i, side = 1, statusSide
		}
		if state[i] == 0 {
			state[i] = 2
			if writer == manager || hasEntry(&new.Meta, side, manager) {
				if m, err := s.sideManaged(new, side); err == nil {
					managed[i], state[i] = m, 1
				}
			}
		}
		if state[i] == 2 {
			// Unreadable: the writer's. Or manager owns nothing here and
			// did not write last: not manager's.
			return writer == manager
		}
		return ownership.ChangedBy(manager, writer, p, managed[i])
	}
	first := by(paths[0])
	for i, p := range paths[1:] {
		if by(p) == first {
			continue
		}
		// Mixed: paths[:i+1] all have first's verdict.
		head := slices.Clip(paths[:i+1])
		if first {
			mine, others = head, []diff.Path{p}
		} else {
			mine, others = []diff.Path{p}, head
		}
		for _, q := range paths[i+2:] {
			if by(q) {
				mine = append(mine, q)
			} else {
				others = append(others, q)
			}
		}
		return mine, others
	}
	if first {
		return paths, nil
	}
	return nil, paths
}

// noneOwnable reports whether meta records no fields of manager on the
// side of any path of paths: ChangedBy then gives none of them to a
// manager that did not write last.
func noneOwnable(meta *Meta, manager string, paths []diff.Path) bool {
	var entry [2]bool // on the spec side, on the status side
	for _, e := range meta.Managed {
		if e.Manager == manager {
			entry[b2i(e.Subresource == statusSide)] = true
		}
	}
	for _, p := range paths {
		if entry[b2i(objpath.StatusSide(p))] {
			return false
		}
	}
	return true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// StatusEqual reports whether the statuses a and b are reflect.DeepEqual,
// by the Store's equality of T, built once (see equal.go). It is
// reconcile's (the section check of FromStore's change judge, on every
// event), reached through internal/storeaccess.
func (v *internalView[S, T]) StatusEqual(a, b *T) bool {
	return (*Store[S, T])(v).sideEquals().status(unsafe.Pointer(a), unsafe.Pointer(b))
}

// userMetaSideEqual reports whether the metadata the spec side's diff shows
// (metaView) is plainly equal, so that its diff would find nothing: an
// absent collection equals an empty one, as in metaViewOf. A map or list
// that old and new share (a cache's event keeps the held one when its
// text is the same) is equal without a look at its entries: no range over
// the labels of every event judged. Objects with none of the four (a
// controller's usual ones) take one test of their lengths.
func userMetaSideEqual[S, T any](old, new *Object[S, T]) bool {
	om, nm := &old.Meta, &new.Meta
	if len(om.Labels)|len(nm.Labels)|len(om.Annotations)|len(nm.Annotations)|
		len(om.Owners)|len(nm.Owners)|len(om.Finalizers)|len(nm.Finalizers) == 0 {
		return true
	}
	return sameMetaMap(om.Labels, nm.Labels) && sameMetaMap(om.Annotations, nm.Annotations) &&
		sameList(om.Owners, nm.Owners) && sameList(om.Finalizers, nm.Finalizers)
}

// sideOnlyChanges is a side's diff when the rest of the side is plainly
// equal (so that its diff would find nothing) and V, the side's Spec or
// Status, is a struct: V alone, its paths put under side (.spec or
// .status), as the diff of the whole side gives them. The spec side skips
// walking the metadata: another writer's spec update, which a Loop judges
// for its oscillation detector (BenchmarkFieldChangesOtherSpec); the status
// side skips the conditions: the Loop's own status write, judged when its
// event comes back. The options are the side's but for those of the part
// skipped (the metadata's finalizers, the conditions' keys), paths that are
// not below side.
func sideOnlyChanges[V any](side diff.Path, old, new *V) []diff.Path {
	ps := diff.ChangedPaths(old, new, sideOnlyDiffOptions)
	n := 0
	for _, p := range ps {
		n += len(side) + len(p)
	}
	buf := make([]diff.Element, 0, n)
	for i, p := range ps {
		start := len(buf)
		buf = append(append(buf, side...), p...)
		ps[i] = buf[start:len(buf):len(buf)]
	}
	return ps
}

// structChanges is sideOnlyChanges(side, old, new) for a struct V whose
// fields are fields (see fieldsOf): without the diff's walk when every
// field that differs is a leaf, whose change is its path alone (the replica
// count another writer updates, the status field the Loop writes).
//
// The leaves' paths are appended to buf, which FieldChanges passes on its
// stack: the result is read, never kept (copy it to keep it).
func structChanges[V any](buf []diff.Path, fields judgedFields, side diff.Path, old, new *V) []diff.Path {
	if ps, ok := fields.changes(buf, unsafe.Pointer(old), unsafe.Pointer(new)); ok {
		return ps
	}
	return sideOnlyChanges(side, old, new)
}

// sameSpec reports whether the spec of an object is unchanged from om to
// nm by their Meta alone: the same object (UID) at the same Generation,
// which the Store bumps whenever the spec's encoding changes (Update,
// Apply, admission), so the typed specs of two such states as read from
// the store are equal and the diff finds nothing. The zero Generation and
// UID are no object's as read from the store: a hand-built pair is
// compared.
func sameSpec(om, nm *Meta) bool {
	return om.Generation == nm.Generation && om.Generation != 0 && om.UID == nm.UID && om.UID != ""
}

// judgedFields are the fields of a struct Spec or Status that the diff
// compares, in its order, each with its equality and its path under the
// side. nil when the struct has no plain form (see fieldsOf).
type judgedFields []judgedField

type judgedField struct {
	off  uintptr
	eq   equalFunc
	path diff.Path // side and field name, capped: shared by every result
	// leaf: a field of bool, integer or string kind, or a pointer to one,
	// whose change the diff reports as path alone (it reports a pointer's
	// change at the pointer's path, and compares those kinds by value, as
	// eq does).
	leaf bool
}

// changes returns the diff's paths of the changes from the struct at old
// to the one at new, and true, when every field that differs is a leaf: a
// field eq finds equal (reflect.DeepEqual, stricter than the diff) has no
// change; one it finds unequal, a leaf's, is exactly the change at its path.
// ok is false when a field that is not a leaf differs (the diff must walk
// it) or fs is nil.
func (fs judgedFields) changes(buf []diff.Path, old, new unsafe.Pointer) (paths []diff.Path, ok bool) {
	if fs == nil {
		return nil, false
	}
	paths = buf[:0]
	for i := range fs {
		f := &fs[i]
		if f.eq(unsafe.Add(old, f.off), unsafe.Add(new, f.off)) {
			continue
		}
		if !f.leaf {
			return nil, false
		}
		paths = append(paths, f.path)
	}
	if len(paths) == 0 {
		return nil, true
	}
	return paths, true
}

// fieldsOf returns the fields of struct type t the diff compares, as it
// names and orders them (encoding/json's names, declaration order), with
// their paths under side; nil when t is not a struct or not plain: a field
// the diff treats otherwise than one by one (an embedded one, whose fields
// it promotes; two fields of one name, of which it keeps one or none) or a
// time (which it compares as one value). Unexported fields and fields
// tagged "-" the diff leaves out, and so does fieldsOf.
func fieldsOf(t reflect.Type, side diff.Path) judgedFields {
	if t.Kind() != reflect.Struct || t.ConvertibleTo(reflect.TypeFor[time.Time]()) {
		return nil
	}
	fs := judgedFields{}
	names := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		switch {
		case f.Anonymous:
			return nil
		case tag == "-" || !f.IsExported():
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		if names[name] {
			return nil
		}
		names[name] = true
		path := slices.Clip(append(slices.Clone(side), diff.Element{Kind: diff.FieldElem, Name: name}))
		fs = append(fs, judgedField{off: f.Offset, eq: equalOf(f.Type), path: path, leaf: leafKind(f.Type)})
	}
	return fs
}

// leafKind reports whether the diff reports a change of a value of type t
// as the value's path alone and compares it as its bits: bool, integer and
// string kinds, and pointers to them (not floats: the diff takes NaN for
// equal to NaN, DeepEqual does not).
func leafKind(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// managedMemo holds the decoded ownership of one side of the last few
// objects FieldChanges was given, by address and revision. It is safe for
// concurrent use; a nil memo remembers nothing.
type managedMemo struct {
	mu      sync.Mutex
	next    int
	entries [4]memoEntry
}

type memoEntry struct {
	obj     any // *Object[S, T]; held, so its address is not reused while here
	rev     int64
	side    string
	managed ownership.Managed
}

func (m *managedMemo) get(obj any, rev int64, side string) (ownership.Managed, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	for i := range m.entries {
		// The revision first: it tells most entries apart, and costs least.
		if e := &m.entries[i]; e.rev == rev && e.obj == obj && e.side == side {
			managed := e.managed
			m.mu.Unlock()
			return managed, true
		}
	}
	m.mu.Unlock()
	return nil, false
}

func (m *managedMemo) put(obj any, rev int64, side string, managed ownership.Managed) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.entries[m.next] = memoEntry{obj: obj, rev: rev, side: side, managed: managed}
	m.next = (m.next + 1) % len(m.entries)
	m.mu.Unlock()
}

// hasEntry reports whether meta records fields of manager on side.
func hasEntry(meta *Meta, side, manager string) bool {
	for _, e := range meta.Managed {
		if e.Subresource == side && e.Manager == manager {
			return true
		}
	}
	return false
}

var (
	// The options of FieldChanges' two diffs, combined once.
	specDiffOptions = diff.Options(diff.ListSets(objpath.Finalizers), diff.EquateEmpty())
	// sideOnlyDiffOptions are the options of either diff for S or T alone
	// (sideOnlyChanges).
	sideOnlyDiffOptions = diff.Options(diff.EquateEmpty())
	statusDiffOptions   = diff.Options(diff.ListKeys(objpath.Conditions, "type"), diff.EquateEmpty())
)

// The views FieldChanges diffs: typed, so that the Spec and Status struct
// tags key their lists, and named as in the ownership trees. A Store keeps
// a few changeViews to build them in, so that handing them to the diff as
// pointers costs no allocation (by value, each was boxed).
type (
	changeViews[S, T any] struct {
		spec   [2]specView[S]
		status [2]statusView[T]
	}
	specView[S any] struct {
		Metadata metaView `json:"metadata"`
		Spec     S        `json:"spec"`
	}
	metaView struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		Owners      []OwnerRef        `json:"owners"`
		Finalizers  []string          `json:"finalizers"`
	}
	statusView[T any] struct {
		Status     T           `json:"status"`
		Conditions []Condition `json:"conditions"`
	}
)

// metaViewOf and nonNil make absent collections empty, so that a first label
// or condition is reported as that item rather than as a whole new map or list.
func metaViewOf(m *Meta) metaView {
	v := metaView{Labels: m.Labels, Annotations: m.Annotations, Owners: nonNil(m.Owners), Finalizers: nonNil(m.Finalizers)}
	if v.Labels == nil {
		v.Labels = noStrings
	}
	if v.Annotations == nil {
		v.Annotations = noStrings
	}
	return v
}

// noStrings is the empty map metaViewOf shows for an absent one. It is
// shared and only read (diff.Diff does not modify what it compares).
var noStrings = map[string]string{}

func nonNil[E any](s []E) []E {
	if s == nil {
		return []E{}
	}
	return s
}
