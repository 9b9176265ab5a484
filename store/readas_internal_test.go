package store

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/jsonscan"
	"github.com/steady-go/steady/store/kv"
)

// readAsClock stamps every condition with one time, so that two Stores
// given the same writes store the same bytes.
type readAsClock struct {
	clock.Real
	t time.Time
}

func (c readAsClock) Now() time.Time { return c.t }

// newReadAsStore is a Store without its memory of values, as a client
// that reads before it writes has, with UIDs and times that repeat from one
// such Store to the next.
func newReadAsStore(t *testing.T, b kv.Backend) *Store[keepSpec, keepStatus] {
	t.Helper()
	st, err := New[keepSpec, keepStatus](b, "Keep", WithLastValues(0), WithClock(readAsClock{t: time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)}))
	require.NoError(t, err)
	n := 0
	st.SetUIDs(func() string { n++; return fmt.Sprintf("uid-%d", n) })
	return st
}

// newReadAsObjects returns a Store (newReadAsStore) over a new map Backend
// holding three objects, each a case of its own for the metadata a read
// takes: "bare", with none; "full", with labels, annotations, an owner,
// finalizers, a status and its condition, its deletion requested; and
// "escaped", with a label value that encoding/json escapes (appendMeta
// declines it).
func newReadAsObjects(t *testing.T) (*mapBackend, *Store[keepSpec, keepStatus]) {
	t.Helper()
	ctx := context.Background()
	b := newMapBackend()
	st := newReadAsStore(t, b)
	user, ctrl := st.As("user"), st.As("ctrl")
	_, err := user.Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: "bare"}})
	require.NoError(t, err)
	_, err = user.Create(ctx, &Object[keepSpec, keepStatus]{
		Meta: Meta{Name: "full", Labels: map[string]string{"app": "a", "tier": "b"}, Annotations: map[string]string{"note": "x"},
			Owners: []OwnerRef{{Kind: "Set", Name: "s", UID: "u", Controller: true}}, Finalizers: []string{"f1", "f2"}},
		Spec: keepSpec{Replicas: 2, Image: "img", Tags: []string{"t"}, Ports: []keepPort{{Name: "http", Port: 80}}},
	})
	require.NoError(t, err)
	_, err = ctrl.ApplyStatus(ctx, "full", keepStatus{Ready: 1}, []Condition{{Type: "Ready", Status: ConditionTrue, Reason: "Up", Message: "m", ObservedGeneration: 1}})
	require.NoError(t, err)
	_, err = user.Delete(ctx, "full") // its finalizers keep it, deletion requested
	require.NoError(t, err)
	_, err = user.Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: "escaped", Labels: map[string]string{"html": "<b>"}}})
	require.NoError(t, err)
	return b, st
}

// requireSameRaw requires got, as decodeRawAs read it, to be what
// decodeRaw read, want.
func requireSameRaw(t *testing.T, want, got *rawObject) {
	t.Helper()
	require.Equal(t, want.Meta, got.Meta)
	require.Equal(t, string(want.Spec), string(got.Spec))
	require.Equal(t, string(want.Status), string(got.Status))
	require.Equal(t, want.Conditions, got.Conditions)
	require.Equal(t, want.Version, got.Version)
	require.Equal(t, string(want.Preserved), string(got.Preserved))
	require.Equal(t, string(want.specKey()), string(got.specKey()))
}

// TestDecodeRawAsIsDecodeRaw checks that a read that takes the metadata
// from the caller's read (decodeRawAs) gives what the general read gives,
// and that it takes them only when the stored metadata are exactly the
// caller's.
func TestDecodeRawAsIsDecodeRaw(t *testing.T) {
	ctx := context.Background()
	b, st := newReadAsObjects(t)

	type hint struct {
		name   string
		change func(m *Meta)
		taken  bool
	}
	hints := []hint{
		{"as read", func(*Meta) {}, true},
		{"empty maps and lists", func(m *Meta) {
			if m.Labels == nil {
				m.Labels, m.Annotations, m.Owners, m.Finalizers = map[string]string{}, map[string]string{}, []OwnerRef{}, []string{}
			}
			if m.Managed == nil {
				m.Managed = []ManagedFields{}
			}
		}, true},
		{"kind and revision ignored", func(m *Meta) { m.Kind, m.Revision = "", 42 }, true},
		{"label added", func(m *Meta) { m.Labels = map[string]string{"extra": "y"} }, false},
		{"uid", func(m *Meta) { m.UID += "x" }, false},
		{"generation", func(m *Meta) { m.Generation++ }, false},
		{"status generation", func(m *Meta) { m.StatusGeneration++ }, false},
		{"deletion", func(m *Meta) { m.DeletionRequested = !m.DeletionRequested }, false},
		{"records", func(m *Meta) { m.Managed = m.Managed[:len(m.Managed)-1] }, false},
		{"last write", func(m *Meta) { m.LastWrite.Trace = "t" }, false},
	}
	for _, name := range []string{"bare", "full", "escaped"} {
		stored, err := b.Get(ctx, st.keyOf(name))
		require.NoError(t, err)
		want, err := st.decodeRaw(stored, true)
		require.NoError(t, err)
		obj, err := st.Get(ctx, name)
		require.NoError(t, err)
		for _, h := range hints {
			t.Run(name+"/"+h.name, func(t *testing.T) {
				m := obj.Meta
				h.change(&m)
				got, ok := st.decodeRawAs(stored, name, &m)
				require.Equal(t, h.taken && name != "escaped", ok)
				if ok {
					requireSameRaw(t, want, got)
				}
			})
		}
	}
	// A value with the caller's metadata but laid out otherwise is left to
	// the general read.
	stored, err := b.Get(ctx, st.keyOf("bare"))
	require.NoError(t, err)
	obj, err := st.Get(ctx, "bare")
	require.NoError(t, err)
	for _, v := range []string{
		string(stored.Value[:len(stored.Value)-1]) + `,"preserved":{}}`,
		string(stored.Value[:len(stored.Value)-1]) + ` x}`,
		replaceOnce(stored.Value, `,"status":`, `, "status":`),
	} {
		_, ok := st.decodeRawAs(kv.KeyValue{Key: stored.Key, Value: []byte(v), ModRevision: stored.ModRevision}, "bare", &obj.Meta)
		require.False(t, ok, v)
	}
}

func replaceOnce(b []byte, old, new string) string {
	return string(bytes.Replace(b, []byte(old), []byte(new), 1))
}

// TestUpdateFromReadKeepsGuarantees runs a read-modify-write client (a
// Store without memory: Get, then Update) through the writes whose read
// takes the metadata from its Get, and checks each of Update's guarantees
// on that path, and that every value it stores is byte for byte the one the
// general read gives: a twin Store, given the same writes, reads each
// object the general way (its caller's UID, which Update ignores, is not
// the stored one).
func TestUpdateFromReadKeepsGuarantees(t *testing.T) {
	ctx := context.Background()
	type side struct {
		b  *mapBackend
		st *Store[keepSpec, keepStatus]
	}
	fast, general := side{b: newMapBackend()}, side{b: newMapBackend()}
	fast.st, general.st = newReadAsStore(t, fast.b), newReadAsStore(t, general.b)
	sides := []*side{&fast, &general}
	for _, s := range sides {
		_, err := s.st.As("user").Create(ctx, &Object[keepSpec, keepStatus]{
			Meta: Meta{Name: "a", Labels: map[string]string{"app": "a"}},
			Spec: keepSpec{Replicas: 1, Image: "img", Tags: []string{"x"}},
		})
		require.NoError(t, err)
		_, err = s.st.As("ctrl").ApplyStatus(ctx, "a", keepStatus{Ready: 1}, []Condition{{Type: "Ready", Status: ConditionTrue, Reason: "Up"}})
		require.NoError(t, err)
		// A status field the Status type does not know, written around
		// the store: Update keeps the stored status as it is.
		cur, err := s.b.Get(ctx, s.st.keyOf("a"))
		require.NoError(t, err)
		v := bytes.Replace(cur.Value, []byte(`"status":{"ready":1,"message":""}`), []byte(`"status":{"ready":1,"message":"","extra":true}`), 1)
		require.NotEqual(t, cur.Value, v)
		_, err = s.b.Txn(ctx, []kv.Cond{{Key: cur.Key, Target: kv.ModRevision, Revision: cur.ModRevision}}, kv.Write{Kind: kv.WritePut, Key: cur.Key, Value: v})
		require.NoError(t, err)
	}
	stored := func(s *side) (kv.KeyValue, *rawObject) {
		cur, err := s.b.Get(ctx, s.st.keyOf("a"))
		require.NoError(t, err)
		raw, err := s.st.decodeRaw(cur, true)
		require.NoError(t, err)
		return cur, raw
	}
	// update reads "a" on each side, changes it with change and writes it
	// back as manager, on the fast side with the read taking its Meta, and
	// returns the objects written, with the errors.
	update := func(manager string, change func(*Object[keepSpec, keepStatus])) (objs [2]*Object[keepSpec, keepStatus], errs [2]error) {
		t.Helper()
		for i, s := range sides {
			o, err := s.st.Get(ctx, "a")
			require.NoError(t, err)
			change(o)
			cur, _ := s.b.Get(ctx, s.st.keyOf("a"))
			if s == &general {
				o.Meta.UID = "not-" + o.Meta.UID
			}
			_, taken := s.st.decodeRawAs(cur, "a", &o.Meta)
			require.Equal(t, s == &fast, taken, "the fast side's read takes the caller's Meta, the general side's does not")
			_, errs[i] = s.st.As(manager).Update(ctx, o)
			objs[i] = o
		}
		a, _ := stored(&fast)
		g, _ := stored(&general)
		require.Equal(t, string(g.Value), string(a.Value), "the value stored is the general read's")
		require.Equal(t, g.ModRevision, a.ModRevision)
		return objs, errs
	}

	beforeKV, before := stored(&fast)
	require.Contains(t, string(before.Status), `"extra":true`)
	// A spec change by another manager: the generation is bumped, the
	// status and conditions are kept as stored, the caller's object gets
	// the new Meta, and the changed field is recorded as the manager's.
	objs, errs := update("user2", func(o *Object[keepSpec, keepStatus]) { o.Spec.Replicas = 2 })
	require.NoError(t, errs[0])
	afterKV, after := stored(&fast)
	require.Equal(t, before.Meta.Generation+1, after.Meta.Generation)
	require.Equal(t, before.Meta.StatusGeneration, after.Meta.StatusGeneration)
	require.Equal(t, string(before.Status), string(after.Status))
	require.Equal(t, before.Conditions, after.Conditions)
	require.Equal(t, afterKV.ModRevision, objs[0].Meta.Revision)
	require.Equal(t, after.Meta.Generation, objs[0].Meta.Generation)
	require.Equal(t, after.Meta.Managed, objs[0].Meta.Managed)
	tree, err := specTree(after)
	require.NoError(t, err)
	replicas := diff.Path{{Kind: diff.FieldElem, Name: "spec"}, {Kind: diff.FieldElem, Name: "replicas"}}
	owners := map[string]bool{}
	for _, e := range fast.st.schemas.decodeManaged(&after.Meta, specSide, tree) {
		if e.Set.Has(replicas) {
			owners[e.Manager+" "+string(e.Operation)] = true
		}
	}
	require.Equal(t, map[string]bool{"user2 Update": true}, owners)
	require.Greater(t, afterKV.ModRevision, beforeKV.ModRevision)

	// An Update that changes nothing writes nothing: no new revision, no
	// generation bump.
	_, errs = update("user2", func(*Object[keepSpec, keepStatus]) {})
	require.NoError(t, errs[0])
	sameKV, same := stored(&fast)
	require.Equal(t, afterKV.ModRevision, sameKV.ModRevision)
	require.Equal(t, after.Meta.Generation, same.Meta.Generation)

	// The manager that already owns what it changes keeps the record as it
	// is (keepManaged), on a value read this way too.
	_, errs = update("user2", func(o *Object[keepSpec, keepStatus]) { o.Spec.Replicas = 3 })
	require.NoError(t, errs[0])
	_, kept := stored(&fast)
	require.Equal(t, same.Meta.Managed, kept.Meta.Managed)
	require.Equal(t, same.Meta.Generation+1, kept.Meta.Generation)

	// A stale read: the object was written since, with the very same
	// bytes, so the stored metadata are still the caller's, but not its
	// revision. The Update fails with ErrConflict and writes nothing.
	for _, s := range sides {
		o, err := s.st.Get(ctx, "a")
		require.NoError(t, err)
		cur, err := s.b.Get(ctx, s.st.keyOf("a"))
		require.NoError(t, err)
		_, err = s.b.Txn(ctx, []kv.Cond{{Key: cur.Key, Target: kv.ModRevision, Revision: cur.ModRevision}}, kv.Write{Kind: kv.WritePut, Key: cur.Key, Value: cur.Value})
		require.NoError(t, err)
		rewritten, err := s.b.Get(ctx, s.st.keyOf("a"))
		require.NoError(t, err)
		if s == &fast {
			_, taken := s.st.decodeRawAs(rewritten, "a", &o.Meta)
			require.True(t, taken)
		}
		o.Spec.Replicas = 9
		_, err = s.st.As("user").Update(ctx, o)
		require.ErrorIs(t, err, ErrConflict)
		now, err := s.b.Get(ctx, s.st.keyOf("a"))
		require.NoError(t, err)
		require.Equal(t, rewritten, now)
	}
}

// TestKeepManagedTrustsOnlyAShapeKeyedSpec checks that keepManaged, given
// a stored spec that Decode refuses (a list holding a number beyond
// float64's range, written around the store) and a new spec that ends as it
// does, goes the general way, which fails with ErrInvalid, as it did before
// it skipped the unchanged end of a spec that the read gave a shape key:
// the read gives such a spec none.
func TestKeepManagedTrustsOnlyAShapeKeyedSpec(t *testing.T) {
	ctx := context.Background()
	b := newMapBackend()
	st := newReadAsStore(t, b)
	_, err := st.As("user").Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: "a"}, Spec: keepSpec{Replicas: 1}})
	require.NoError(t, err)
	cur, err := b.Get(ctx, st.keyOf("a"))
	require.NoError(t, err)
	v := bytes.Replace(cur.Value, []byte(`"args":null`), []byte(`"args":[1e400]`), 1)
	require.NotEqual(t, cur.Value, v)
	_, err = b.Txn(ctx, []kv.Cond{{Key: cur.Key, Target: kv.ModRevision, Revision: cur.ModRevision}}, kv.Write{Kind: kv.WritePut, Key: cur.Key, Value: v})
	require.NoError(t, err)
	stored, err := b.Get(ctx, st.keyOf("a"))
	require.NoError(t, err)
	read, err := st.decodeRaw(stored, true)
	require.NoError(t, err)
	require.Nil(t, read.specKey())
	next := *read
	next.Spec = bytes.Replace(read.Spec, []byte(`"replicas":1`), []byte(`"replicas":2`), 1)
	require.NotEqual(t, read.Spec, next.Spec)
	next.shape = knownShape{}
	keep, _ := st.schemas.keepManaged(read, &next, specSide, "user", nil)
	require.False(t, keep, "a spec Decode refuses goes the general way")
	_, err = st.schemas.recordUpdate(read, &next, specSide, "user", nil)
	require.ErrorIs(t, err, ErrInvalid)
}

// TestAppendMetaKnownTakesRememberedText checks that the read of a write
// takes the text of the ownership records and of the last write from what
// a Get's decoder remembers of them (appendMetaKnown), that this text is
// what appendMeta writes for them, and that it takes it only for records
// and a last write that are the remembered ones.
func TestAppendMetaKnownTakesRememberedText(t *testing.T) {
	ctx := context.Background()
	b := newMapBackend()
	st := newReadAsStore(t, b)
	_, err := st.As("user").Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: "a", Labels: map[string]string{"app": "a"}},
		Spec: keepSpec{Replicas: 1, Image: "img"}})
	require.NoError(t, err)
	_, err = st.As("ctrl").ApplyStatus(ctx, "a", keepStatus{Ready: 1}, nil)
	require.NoError(t, err)
	stored, err := b.Get(ctx, st.keyOf("a"))
	require.NoError(t, err)
	sc := new(decodeScratch)
	from, err := st.decodeLike(stored, sc, nil, copies{})
	require.NoError(t, err)
	m := from.obj.Meta
	m.Revision = 0
	require.Len(t, m.Managed, 2)

	// What the read remembers is what appendMeta writes.
	records, writes := memoText(&sc.managed, m.Managed), memoText(&sc.writes, []LastWrite{m.LastWrite})
	require.NotNil(t, records, "the read remembers the records")
	require.NotNil(t, writes, "the read remembers the last write")
	ok := true
	require.Equal(t, string(appendManaged(nil, m.Managed, &ok)), string(records))
	require.Equal(t, string(appendLastWrite(nil, &m.LastWrite, &ok)), string(writes))
	require.True(t, ok)
	want, ok := appendMeta([]byte(`{"metadata":`), &m)
	require.True(t, ok)
	head, _ := appendMetaHead([]byte(`{"metadata":`), &m)
	got, headEnd, ok := appendMetaKnown(nil, &m, sc)
	require.True(t, ok)
	require.Equal(t, string(want), string(got))
	require.Equal(t, len(head), headEnd)

	// It takes the remembered text rather than writing it again...
	marked := new(decodeScratch)
	marked.managed.keep([]byte(`[records]`), m.Managed)
	marked.writes.keep([]byte(`{write}`), []LastWrite{m.LastWrite})
	got, headEnd, _ = appendMetaKnown(nil, &m, marked)
	require.Contains(t, string(got), `,"managed":[records],"lastWrite":{write},"generation":`)
	require.Equal(t, `,"lastWrite":`, string(got[headEnd:headEnd+len(`,"lastWrite":`)]))
	// ...but only for the remembered records and last write.
	other := m
	other.Managed = slices.Clone(m.Managed)
	other.Managed[1].Fields += "x"
	other.LastWrite.Trace = "t"
	want, _ = appendMeta([]byte(`{"metadata":`), &other)
	got, _, _ = appendMetaKnown(nil, &other, marked)
	require.Equal(t, string(want), string(got))
}

// TestDecodeRawAsReadsAKeptShapeAsReadSpec checks that the read of a write
// whose stored spec has the shape of the last write that kept its record
// (keptWrite.spec, read by readSpecLike) gives what the general read
// gives, its shape key included, whatever the spec: one of that shape with
// other values, one of another shape, and one of that shape with a value
// out of range (no shape key) or not JSON, whose write still fails as it
// did (ErrInvalid), not as a conflict nor kept.
func TestDecodeRawAsReadsAKeptShapeAsReadSpec(t *testing.T) {
	ctx := context.Background()
	b := newMapBackend()
	st := newReadAsStore(t, b)
	user := st.As("user")
	for _, name := range []string{"a", "b"} {
		_, err := user.Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: name}, Spec: keepSpec{Image: "img", Env: map[string]string{"k": name}, Args: []string{"x"}}})
		require.NoError(t, err)
	}
	// Replicas changed, object after object: the second keeps the write.
	for i, name := range []string{"a", "b", "a"} {
		obj, err := st.Get(ctx, name)
		require.NoError(t, err)
		obj.Spec.Replicas = i + 1
		_, err = user.Update(ctx, obj)
		require.NoError(t, err)
	}
	k := st.schemas.codecs.lastKept()
	require.NotNil(t, k)
	require.NotNil(t, k.spec, "the kept write's spec shape")
	stored, err := b.Get(ctx, st.keyOf("b"))
	require.NoError(t, err)
	obj, err := st.Get(ctx, "b")
	require.NoError(t, err)
	const outOfRange = `{"replicas":1e400,"image":"img","ptr":null,"env":{"k":"v"},"tuned":null,"tags":null,"ports":null,"args":["x"]}`
	const notJSON = `{"replicas":01,"image":"img","ptr":null,"env":{"k":"v"},"tuned":null,"tags":null,"ports":null,"args":["x"]}`
	start := bytes.Index(stored.Value, []byte(`,"spec":`)) + len(`,"spec":`)
	end := bytes.Index(stored.Value, []byte(`,"status":`))
	for _, c := range []struct {
		name, spec string
		kept       bool // read against the kept shape
		keyed      bool
		decodes    bool
	}{
		{"as stored", string(stored.Value[start:end]), true, true, true},
		{"other values", `{"replicas":7,"image":"o\u0074her","ptr":null,"env":{"k":"v"},"tuned":null,"tags":null,"ports":null,"args":["x"]}`, true, true, true},
		{"another shape", `{"replicas":7,"image":"img","ptr":null,"env":{"k":"v","l":"w"},"tuned":null,"tags":null,"ports":null,"args":["x"]}`, false, true, true},
		{"a list changed", `{"replicas":7,"image":"img","ptr":null,"env":{"k":"v"},"tuned":null,"tags":null,"ports":null,"args":["y"]}`, false, true, true},
		{"out of range", outOfRange, false, false, true},
		{"not JSON", notJSON, false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := kv.KeyValue{Key: stored.Key, ModRevision: stored.ModRevision,
				Value: []byte(string(stored.Value[:start]) + c.spec + string(stored.Value[end:]))}
			r := jsonscan.NewReader([]byte(c.spec))
			_, taken := r.RawOfShape(k.spec)
			require.Equal(t, c.kept, taken)
			got, ok := st.decodeRawAs(v, "b", &obj.Meta)
			want, err := st.decodeRaw(v, true)
			require.Equal(t, c.decodes, ok)
			if !c.decodes {
				require.ErrorIs(t, err, ErrInvalid)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.keyed, want.specKey() != nil)
			requireSameRaw(t, want, got)
		})
	}
	// A write read from a stored spec the general read refuses, or whose
	// record it cannot decode against it, fails as it: the read of the
	// kept shape does not take it.
	// The stored spec with its replicas out of range, the rest as the
	// write encodes it, so that the change could be read against the kept
	// shape (jsonscan's ChangedScalarsOfShape), which takes the spec as
	// valid.
	asStored := string(stored.Value[start:end])
	at := strings.Index(asStored, `"replicas":`) + len(`"replicas":`)
	replicasOutOfRange := asStored[:at] + "1e400" + asStored[at+strings.IndexByte(asStored[at:], ','):]
	require.NotEqual(t, asStored, replicasOutOfRange)
	rev := stored.ModRevision
	for _, spec := range []string{outOfRange, notJSON, replicasOutOfRange} {
		bad := []byte(string(stored.Value[:start]) + spec + string(stored.Value[end:]))
		rev, err = b.Txn(ctx, []kv.Cond{{Key: stored.Key, Target: kv.ModRevision, Revision: rev}}, kv.Write{Kind: kv.WritePut, Key: stored.Key, Value: bad})
		require.NoError(t, err)
		obj.Meta.Revision, obj.Spec.Replicas = rev, 9
		_, err = user.Update(ctx, obj)
		require.ErrorIs(t, err, ErrInvalid, spec)
		require.NotErrorIs(t, err, ErrConflict, spec)
	}
}

// TestDecodeRawAsSharesTheValueReadWithoutMemory checks that the read of a
// write of a Store that does not remember values keeps Spec and Status as
// slices of the value read (shareSides), capped so that an append cannot
// write into it, with a shape key that a later read does not overwrite;
// and that a Store that remembers values copies them (ownSides).
func TestDecodeRawAsSharesTheValueReadWithoutMemory(t *testing.T) {
	ctx := context.Background()
	b := newMapBackend()
	st := newReadAsStore(t, b)
	remembering, err := New[keepSpec, keepStatus](b, "Keep")
	require.NoError(t, err)
	user := st.As("user")
	for _, name := range []string{"a", "b"} {
		_, err := user.Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: name}, Spec: keepSpec{Image: name, Env: map[string]string{"k": name}}})
		require.NoError(t, err)
		_, err = st.As("ctrl").ApplyStatus(ctx, name, keepStatus{Ready: 1}, nil)
		require.NoError(t, err)
	}
	within := func(v, part []byte) bool {
		start := uintptr(unsafe.Pointer(unsafe.SliceData(v)))
		p := uintptr(unsafe.Pointer(unsafe.SliceData(part)))
		return p >= start && p+uintptr(len(part)) <= start+uintptr(len(v))
	}
	stored, err := b.Get(ctx, st.keyOf("a"))
	require.NoError(t, err)
	value := bytes.Clone(stored.Value)
	obj, err := st.Get(ctx, "a")
	require.NoError(t, err)
	got, ok := st.decodeRawAs(stored, "a", &obj.Meta)
	require.True(t, ok)
	require.True(t, within(stored.Value, got.Spec) && within(stored.Value, got.Status), "shared")
	require.Equal(t, len(got.Spec), cap(got.Spec))
	require.Equal(t, len(got.Status), cap(got.Status))
	key := bytes.Clone(got.specKey())
	require.NotNil(t, key)
	_ = append(got.Spec, "x"...)
	_ = append(got.Status, "x"...)
	require.Equal(t, value, stored.Value, "the value read is never written")
	// Another read, of another spec, through the same scratch.
	other, err := b.Get(ctx, st.keyOf("b"))
	require.NoError(t, err)
	_, err = st.decodeRaw(kv.KeyValue{Key: other.Key, ModRevision: other.ModRevision,
		Value: []byte(replaceOnce(other.Value, `"env":{"k":"b"}`, `"env":{"k":"b","l":"c"}`))}, true)
	require.NoError(t, err)
	require.Equal(t, string(key), string(got.specKey()), "the shape key is the raw's own")
	want, ok := jsonscan.AppendShapeKey(nil, got.Spec)
	require.True(t, ok)
	require.Equal(t, "p"+string(want), "p"+string(got.specKey()))

	mine, ok := remembering.decodeRawAs(stored, "a", &obj.Meta)
	require.True(t, ok)
	require.False(t, within(stored.Value, mine.Spec) || within(stored.Value, mine.Status), "copied")
	requireSameRaw(t, got, mine)
}

// TestAppendMetaKnownIsAppendMeta checks that appendMetaKnown writes what
// appendTo writes for metadata of a Store's kind and a valid name (the
// opening of the value and appendMeta's text), and declines what appendMeta
// declines, over random metadata whose other strings may need escaping,
// with records and last writes whose text no read remembers; and that the
// kind and name it writes without a look are plain JSON whatever byte they
// hold: every byte a kind or a name may hold is one plainJSONString takes.
func TestAppendMetaKnownIsAppendMeta(t *testing.T) {
	for c := range 256 {
		s := "a" + string([]byte{byte(c)}) + "a"
		if validateKind(s) == nil || ValidateName(s) == nil {
			require.True(t, plainJSONString(s), "%q", s)
		}
	}
	rng := rand.New(rand.NewPCG(58, 1))
	kinds := []string{"App", "a", "Web.v1-beta_2", "x9"}
	names := []string{"a", "app-00001", "web.example.com", "0"}
	for i := range 3000 {
		m := randomMeta(rng, i%2 == 0)
		m.Kind, m.Name = kinds[rng.IntN(len(kinds))], names[rng.IntN(len(names))]
		want, wantOK := appendMeta([]byte(`{"metadata":`), &m)
		head, _ := appendMetaHead([]byte(`{"metadata":`), &m)
		got, headEnd, ok := appendMetaKnown(nil, &m, new(decodeScratch))
		require.Equal(t, wantOK, ok, "%+v", m)
		if ok {
			require.Equal(t, string(want), string(got))
			require.Equal(t, len(head), headEnd)
		}
	}
}
