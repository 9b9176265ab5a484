package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/jsonscan"
	"github.com/steady-go/steady/internal/nilness"
	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/store/kv"
)

// Store is the typed view of one kind of object over a Backend. Spec S and
// Status T are encoded with encoding/json; see Object for the value layout.
//
// An object lives at the key Prefix + Kind + "/" + Name, where Prefix is ""
// unless WithKeyPrefix sets it (always ending in "/"). Kinds and names
// contain no slash, and a Store reads only the keys directly under its own
// prefix (a key under it with a further "/" belongs to another Store, whose
// prefix nests in this one's), so two Stores with a different prefix or kind
// never see each other's objects.
//
// Reads (Get, List, Watch) go through the Store. Writes go through a
// manager-bound handle, As(manager), which stamps Meta.LastWrite, carries the
// leadership fence found in ctx (WithFence), and returns the new revision.
//
// Besides its configuration, a Store holds only caches that change no
// result: a bounded memory of the last value of each key it read or wrote,
// which lets its writes go without reading first (see
// WithLastValues), and FieldChanges' decoded ownership of the last few
// objects. It is safe for concurrent use; it is as durable and as consistent
// as its Backend. The objects it returns are fresh copies that the caller
// owns.
type Store[S, T any] struct {
	b kv.Backend
	// byName is b's read of a key in two parts (memstore's), nil for
	// none: see getKV.
	byName      storeaccess.PartsGetter
	kind        string
	prefix      string // key prefix of this kind: opts prefix + kind + "/"
	uids        atomic.Pointer[func() string]
	clock       clock.Clock
	schemas     schemas
	trace       func(context.Context) string // see WithTraceContext
	traceOff    atomic.Bool                  // trace panicked once: not called again
	memo        *managedMemo                 // FieldChanges' decoded ownership of recent objects
	last        *lastValues                  // see WithLastValues
	ownedFields atomic.Pointer[ownedFields]  // see ownsExactlyKnown
	views       sync.Pool                    // FieldChanges' *changeViews[S, T]
	scratch     sync.Pool                    // decoders' *decodeScratch (see borrowScratch)
	ver         *storeVersions               // nil: the kind has no versions (see WithVersion)
	logger      *slog.Logger                 // see WithLogger
	admission   *admission[S, T]             // see WithAdmission; nil admits all

	// listSharing is what the objects of the last shared listing share
	// (see ListReusing), for the next; nil while a listing has it.
	listSharing atomic.Pointer[sharedValues]
	// plainStatus says T's JSON form round-trips (plainJSON): an applied
	// status of type T is then stored as it encodes.
	plainStatus bool
	// sides decodes S and T without encoding/json where it can.
	sides *sidePlans
	// specEnc is S's sideEncoder, nil for none (see encodeJSONWith).
	specEnc sideEncoder
	// ownCodec says decoding runs the user's code (kindOwnCodec).
	ownCodec bool

	equals atomic.Pointer[sideEquals[S, T]] // FieldChanges' typed equalities (see sideEquals)

	// hooks carries the Store's internalView for internal/storeaccess.Of.
	hooks

	// statusEnc is T's sideEncoder (a nil one for none), looked up by the
	// first status apply that encodes a T (see Store.encodeApplied).
	statusEnc atomic.Pointer[sideEncoder]
	// statusSide is the status side a status apply last decoded for a
	// flat status (see flatStatusSideOf).
	statusSide atomic.Pointer[knownStatusSide]
	// firstRecord is the record a manager's first status apply last
	// wrote (see firstStatusApply).
	firstRecord atomic.Pointer[firstRecord]
}

// hooks is an alias so that the embedded field is unexported: what it
// carries is for the project's own packages (store/cache), not the API.
type hooks = storeaccess.Hooks

// internalView is what a Store offers the project's own packages and not
// its users: store/cache's ListReusing and WatchWithoutPrev (for a caller
// that keeps its own copy of the objects), reconcile's ChangedBy, Version
// (for names in logs and debug pages) and reconciletest's SetUIDs. A
// Store carries it in its hooks (storeaccess.Of(st) returns it).
type internalView[S, T any] Store[S, T]

// SetUIDs replaces the generator of the UIDs that Create assigns (default:
// a random, version 4, UUID); nil restores the default. A deterministic
// generator makes simulations replayable (reconciletest); it must not
// repeat a UID within one Backend. Call it right after New, before the
// Store writes: a Create that runs meanwhile takes either generator, never
// a torn one.
func (v *internalView[S, T]) SetUIDs(next func() string) {
	if next == nil {
		v.uids.Store(nil)
		return
	}
	v.uids.Store(&next)
}

// newUID returns the UID a Create assigns (see internalView.SetUIDs).
func (s *Store[S, T]) newUID() string {
	if next := s.uids.Load(); next != nil {
		return (*next)()
	}
	return randomUID()
}

// Option configures New.
type Option func(*config)

type config struct {
	prefix    string
	clock     clock.Clock
	trace     func(context.Context) string
	admission any // an *admission[S, T], see WithAdmission

	lastValueBytes int

	served      string
	versions    *Versions
	versionsSet bool
	logger      *slog.Logger
}

// WithKeyPrefix puts every key of the Store under prefix, so several
// applications (or tests) can share one Backend. Keys become prefix + kind +
// "/" + name. A prefix that does not end in "/" gets one ("team-a" is
// "team-a/"), so one prefix never runs into another ("team-a/" and
// "team-ab/"), nor a kind into a prefix. A prefix must not start with "_":
// keys that do are reserved for what is not an object, such as election
// keys (see the package doc, Storage layout). It is a path of segments
// separated by "/" (one leading "/", as in etcd's "/registry/", is allowed):
// no segment may be empty ("a//b"), "." or ".." ("x/../y"), and it must be
// valid UTF-8 without control characters (NUL, newline). New rejects a
// prefix that breaks a rule with an error wrapping ErrInvalid.
func WithKeyPrefix(prefix string) Option { return func(c *config) { c.prefix = prefix } }

// WithClock sets the clock that stamps conditions' LastTransitionTime
// (default: the wall clock; nil keeps it, and New refuses a typed nil).
func WithClock(c clock.Clock) Option { return func(cfg *config) { cfg.clock = c } }

// New returns a Store for the objects of kind in b. A kind:
//
//   - must not be empty;
//   - must be at most 63 characters;
//   - must start with an ASCII letter;
//   - may contain only ASCII letters, digits, '.', '-' and '_'.
//
// So "Deployment", "widget" and "Widget.example.com" are kinds, while "a/b"
// (the slash separates kind and name in keys), "9lives" and "" are not. A
// kind that breaks a rule gives an error wrapping ErrInvalid that names it. New also
// returns an error wrapping ErrInvalid when b is nil or a typed nil (such as
// a nil *memstore.Store), when WithClock gave a typed nil, or when the
// steady struct tags of S or T are malformed (see ownership.SchemaFor).
func New[S, T any](b kv.Backend, kind string, opts ...Option) (*Store[S, T], error) {
	if nilness.IsNil(b) {
		return nil, fmt.Errorf("%w: nil Backend (%T)", ErrInvalid, b)
	}
	if err := validateKind(kind); err != nil {
		return nil, err
	}
	c := config{clock: clock.Real{}, lastValueBytes: defaultLastValueBytes}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	switch {
	case c.clock == nil:
		c.clock = clock.Real{}
	case nilness.IsNil(c.clock):
		return nil, fmt.Errorf("%w: nil clock (%T)", ErrInvalid, c.clock)
	}
	if err := validatePrefix(c.prefix); err != nil {
		return nil, err
	}
	if c.prefix != "" && !strings.HasSuffix(c.prefix, "/") {
		c.prefix += "/"
	}
	sc, err := newSchemas[S, T]()
	if err != nil {
		return nil, err
	}
	var ver *storeVersions
	if c.versionsSet {
		if ver, err = newStoreVersions[S, T](c.served, c.versions); err != nil {
			return nil, err
		}
	}
	ad, err := admissionFor[S, T](c.admission)
	if err != nil {
		return nil, err
	}
	s := &Store[S, T]{b: b, kind: kind, prefix: c.prefix + kind + "/", clock: c.clock, schemas: sc, trace: c.trace, memo: &managedMemo{},
		last: newLastValues(c.lastValueBytes), ver: ver, logger: c.logger, admission: ad, plainStatus: plainJSON(reflect.TypeFor[T]()), sides: sidePlansOf[S, T]()}
	s.schemas.remember = s.last != nil
	s.specEnc = sideEncoderOf(reflect.TypeFor[S]())
	if g, ok := storeaccess.Of(b).(storeaccess.PartsGetter); ok && g.Backend() == b {
		s.byName = g // not a wrapper's, whose Get may mean something else
	}
	s.ownCodec = kindOwnCodec[S, T](ver)
	s.hooks = storeaccess.NewHooks((*internalView[S, T])(s))
	return s, nil
}

// validatePrefix applies WithKeyPrefix's rules.
func validatePrefix(prefix string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: key prefix %.64q %s", ErrInvalid, prefix, why)
	}
	if strings.HasPrefix(prefix, "_") {
		return bad(`starts with "_", which is reserved for keys that are not objects`)
	}
	if !utf8.ValidString(prefix) {
		return bad("is not valid UTF-8")
	}
	if strings.ContainsFunc(prefix, unicode.IsControl) {
		return bad("contains a control character")
	}
	path := strings.TrimPrefix(prefix, "/")
	if path == "" {
		return nil
	}
	if strings.HasSuffix(path, "/") {
		path = path[:len(path)-1] // New adds the slash when it is missing
	}
	for seg := range strings.SplitSeq(path, "/") {
		switch seg {
		case "":
			return bad(`has an empty segment ("//")`)
		case ".", "..":
			return bad(`has a "." or ".." segment`)
		}
	}
	return nil
}

// Kind returns the kind of the Store's objects.
func (s *Store[S, T]) Kind() string { return s.kind }

// Backend returns the Backend the Store reads and writes.
func (s *Store[S, T]) Backend() kv.Backend { return s.b }

// keyOf returns the backend key of the object called name. It does not
// validate name.
func (s *Store[S, T]) keyOf(name string) string { return s.prefix + name }

// nameOf returns the object name a key under the Store's prefix stands for,
// and false for a key outside the Store's key space: one not under its
// prefix, or one with a further "/" (it belongs to a Store whose prefix
// nests in this one's, such as prefix "app/" with kind "Widget" under the
// Store of kind "app").
func (s *Store[S, T]) nameOf(key string) (string, bool) {
	name, ok := strings.CutPrefix(key, s.prefix)
	return name, ok && strings.IndexByte(name, '/') < 0
}

// Prefix returns the key prefix under which all of the Store's objects live:
// the configured prefix, the kind, and a slash.
func (s *Store[S, T]) Prefix() string { return s.prefix }

// Get returns the object called name, with Meta.Revision set to its
// ModRevision. A missing object gives an error wrapping ErrNotFound; a name
// that breaks the rules (ValidateName) gives one wrapping ErrInvalid, and so
// does a stored value that is not an object of the kind called name (a
// *DecodeError).
func (s *Store[S, T]) Get(ctx context.Context, name string) (*Object[S, T], error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	kv, err := s.getKV(ctx, name)
	if err != nil {
		return nil, s.wrapNotFound(name, err)
	}
	scratch := s.borrowScratch()
	// name, validated above, is the name of the key read: the decode
	// takes it as it is (no nameOf of the key) and checks only that the
	// value claims it, not its rules a second time.
	from, err := s.decodeNamed(kv, name, true, scratch, nil, copies{}, nil)
	s.giveBack(scratch)
	if err != nil {
		return nil, err
	}
	// Remembered decoded: a read-modify-write (this Get, then an Update
	// of what it returned) decodes the value once.
	if s.last != nil {
		s.remember(kv, &from, false)
	}
	return from.obj, nil
}

// getKV reads the stored object called name, a valid name, from the
// Backend, through byName where it has one: the Backend's Get of a key
// built here allocated it, as the key escapes through the interface. A
// KeyValue read so holds the Backend's own string of the key, which a
// write of the object may use (see updateRead).
func (s *Store[S, T]) getKV(ctx context.Context, name string) (kv.KeyValue, error) {
	if g := s.byName; g != nil {
		return g.GetIn(ctx, s.prefix, name)
	}
	return s.b.Get(ctx, s.prefix+name)
}

// getRaw reads the stored object with Spec and Status left encoded. read,
// when not nil, is what an Update knows of the object (see updateRead),
// and name is then a valid name (ValidateName).
func (s *Store[S, T]) getRaw(ctx context.Context, name string, read *updateRead) (*rawObject, error) {
	return s.getRawAt(ctx, s.prefix+name, name, read)
}

// getRawAt is getRaw of the object called name stored under key, a write's
// key built once for all its attempts; or, key "", an Update's read that
// finds the key (getKV) and gives it to read.key.
func (s *Store[S, T]) getRawAt(ctx context.Context, key, name string, read *updateRead) (*rawObject, error) {
	var kv kv.KeyValue
	var err error
	if key != "" {
		kv, err = s.b.Get(ctx, key)
	} else if kv, err = s.getKV(ctx, name); err == nil {
		read.key = kv.Key
	}
	if err != nil {
		return nil, s.wrapNotFound(name, err)
	}
	var meta *Meta
	var held *decodeScratch
	if read != nil {
		meta, held = read.meta, read.scratch
	}
	raw, ok := s.decodeRawAsIn(kv, name, meta, held)
	if !ok {
		raw, err = s.decodeRaw(kv, true)
	}
	if err == nil {
		s.last.read(kv)
	}
	return raw, err
}

// updateRead is what an Update knows of the object it writes, for the
// reads of its write (getRawAt): meta, the Meta of the caller's own read
// of it, which the stored metadata are likely to be (see decodeRawAs);
// and key, the object's key, which, when the Store remembers no value of
// it, the first of those reads finds (getKV) and the write then uses,
// rather than building it (an allocation per Update); and scratch, the
// scratch space an Update of a Store that remembers no values holds for
// the whole write (nil in one that does), in which its reads decode the
// current object and it encodes its spec (see decodeRawAsIn,
// encodeSpecIn): nothing keeps either past the write, which copies what
// it keeps of them into the value it writes, and each cost an allocation
// per Update (416 and ~200 bytes on the controller benchmark).
type updateRead struct {
	meta    *Meta
	key     string
	scratch *decodeScratch
}

// holdScratch gives r the scratch space of an Update of s, when s
// remembers no values (see updateRead).
func (s *Store[S, T]) holdScratch(r *updateRead) {
	if s.last == nil {
		r.scratch = s.borrowScratch()
	}
}

// releaseScratch gives back r's scratch space, if any, once the Update
// is done with what it holds: the object read, which it clears (it holds
// the caller's Meta and the Backend's value), and the spec's encoding,
// whose buffer it keeps for the next Update unless it grew past what an
// encode buffer may keep.
func (s *Store[S, T]) releaseScratch(r *updateRead) {
	sc := r.scratch
	if sc == nil {
		return
	}
	r.scratch = nil
	sc.raw = rawObject{}
	sc.spec = sc.spec[:0]
	if cap(sc.spec) > maxPooledEncode {
		sc.spec = nil
	}
	s.giveBack(sc)
}

// encodeSpecIn is encodeJSONWith of spec with the Store's encoder,
// appended to r's scratch space when it holds one (see updateRead), where
// it is valid until that space is given back; else, or should the encoder
// decline, in an allocation of its own.
func (s *Store[S, T]) encodeSpecIn(r *updateRead, spec *S) ([]byte, error) {
	if sc := r.scratch; sc != nil && s.specEnc != nil {
		if b, ok := s.specEnc(sc.spec[:0], reflect.ValueOf(spec).Elem(), 0); ok {
			sc.spec = b
			return b[:len(b):len(b)], nil
		}
	}
	return encodeJSONWith("spec", spec, s.specEnc)
}

// remembered returns the key of the object called name and, when the
// Store remembers it as it was at rev (see WithLastValues), that object and
// what is known of its sides. The key is the memory's string when it
// remembers the object, else built once, for the write's attempts to share.
// The caller must not modify the object, nor hand out what it holds.
func (s *Store[S, T]) remembered(name string, rev int64) (string, *rawObject, decodedSides) {
	key, e, ok := s.rememberedKey(name)
	ok = ok && rev != 0 && e.rev == rev
	mem, sides := s.rememberedAs(key, name, e, ok)
	return key, mem, sides
}

// latest is remembered of the latest value of the object called name the
// Store remembers, whatever its revision. It may be out of date: a write
// from it must be conditional on its revision.
func (s *Store[S, T]) latest(name string) (string, *rawObject, decodedSides) {
	key, e, ok := s.rememberedKey(name)
	mem, sides := s.rememberedAs(key, name, e, ok)
	return key, mem, sides
}

// rememberedOrRead is remembered with "" for the key of an object the
// Store remembers no value of, for the write's read to find (see
// updateRead).
func (s *Store[S, T]) rememberedOrRead(name string, rev int64) (string, *rawObject, decodedSides) {
	e, ok := s.last.latestOf(s.prefix, name)
	if !ok {
		return "", nil, decodedSides{}
	}
	mem, sides := s.rememberedAs(e.key, name, e, rev != 0 && e.rev == rev)
	return e.key, mem, sides
}

// rememberedKey returns the key of the object called name, and the latest
// value of it the Store remembers, if any: the key is then the memory's
// string, and is built only when the Store remembers no value of it.
func (s *Store[S, T]) rememberedKey(name string) (string, lastValue, bool) {
	e, ok := s.last.latestOf(s.prefix, name)
	if !ok {
		return s.prefix + name, lastValue{}, false
	}
	return e.key, e, true
}

// rememberedAs decodes e, remembered of key if ok: the object called
// name, which the caller, a write, validated (see decodeRemembered).
func (s *Store[S, T]) rememberedAs(key, name string, e lastValue, ok bool) (*rawObject, decodedSides) {
	switch {
	case !ok:
		return nil, decodedSides{}
	case e.raw != nil:
		return e.raw, e.sides
	}
	if raw, ok := s.decodeRemembered(name, e.value, e.rev, e.at); ok {
		return raw, decodedSides{}
	}
	raw, err := s.decodeRaw(kv.KeyValue{Key: key, Value: e.value, ModRevision: e.rev}, false)
	if err != nil {
		return nil, decodedSides{} // the read of the write reports it
	}
	return raw, decodedSides{}
}

// decodeRemembered is decodeRaw of value, the value the memory remembers
// at rev of the object called name, for a write from it, doing less of
// what that value does not need: its Spec and Status stay slices of value
// (as shareSides leaves them), not a copy, as the memory never modifies
// the values it holds (a Backend's, or the Store's own encoding); and the
// value's name is compared with name (sameIdentity), which the write
// validated before it looked (ValidateName), not validated again. A
// controller's status write to an object whose decoded read the memory
// no longer holds decodes its value so (flat out at 10k objects, four
// writes in five: see BenchmarkApplyStatusObservedCold). It reports false
// for a value of a versioned Store, one with a version or preserved
// fields, one decodeStored declines, or one of another kind or name, for
// decodeRaw to decode and to name what is wrong. Only the write's memory
// of its result, which may share its Spec, holds value past the write:
// among the latest own writes decoded (maxDecoded), then no more. at,
// when known, is where a decode of value found its Spec and Status
// (sidesAt): they are taken from there (decodeLaidOut).
func (s *Store[S, T]) decodeRemembered(name string, value []byte, rev int64, at sidesAt) (*rawObject, bool) {
	if s.ver != nil {
		return nil, false
	}
	scratch := s.borrowScratch()
	d := s.metaDecoderOf(name, scratch)
	raw := new(rawObject)
	var ok bool
	if at.specEnd != 0 {
		ok = decodeLaidOut(value, raw, d, at)
	} else {
		ok = decodeRawShared(value, raw, d) && raw.Version == "" && raw.Preserved == nil
	}
	ok = ok && s.sameIdentity(name, &raw.Meta) == nil
	if ok {
		raw.shareSides(nil, false)
		raw.head = d.headOf(value)
		raw.Meta.Revision = rev
	}
	s.giveBack(scratch)
	return raw, ok
}

// decodeLaidOut is decodeRawShared of value, for a Store that serves no
// version, with its Spec and Status where a decode of value found them
// (at, see sidesAt), valid: it reads the metadata and the conditions, and
// between them only checks that the text is laid out as the store writes
// it, {"metadata":…,"spec":…,"status":…, then optionally ,"conditions":…,
// and }, with the Spec and the Status at at's places, each key once and
// nothing else: so it is the value decodeStored reads whole, and its
// result decodeRawShared's. It reports false for any other text (the
// caller then decodes it the general way).
func decodeLaidOut(value []byte, raw *rawObject, d *metaDecoder, at sidesAt) bool {
	const specKey, statusKey = `,"spec":`, `,"status":`
	spec, specEnd, statusEnd := int(at.spec), int(at.specEnd), int(at.statusEnd)
	if spec < len(specKey) || specEnd <= spec || statusEnd <= specEnd+len(statusKey) || statusEnd > len(value) ||
		string(value[specEnd:specEnd+len(statusKey)]) != statusKey {
		return false
	}
	d.found, d.headEnd = d.first, 0
	d.r = jsonscan.NewReader(value)
	if !d.r.Literal(`{"metadata":`) || !d.meta(&raw.Meta) || d.r.Pos() != spec-len(specKey) || !d.r.Literal(specKey) {
		return false
	}
	d.r = jsonscan.NewReader(value[statusEnd:])
	if d.r.Literal(`,"conditions":`) {
		var ok bool
		if raw.Conditions, ok = d.conditions(); !ok {
			return false
		}
	}
	if !d.r.Literal(`}`) || !d.r.End() {
		return false
	}
	raw.Spec, raw.Status = value[spec:specEnd], value[specEnd+len(statusKey):statusEnd]
	return true
}

func (s *Store[S, T]) wrapNotFound(name string, err error) error {
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%w: %s %q", ErrNotFound, s.kind, name)
	}
	return err
}

// randomUID returns a random version 4 UUID.
func randomUID() string {
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never fails
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}
