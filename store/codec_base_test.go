package store

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"
	"weak"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/jsonscan"
	"github.com/steady-go/steady/internal/race"
	"github.com/steady-go/steady/store/kv"
)

// overBase decodes value over base as a watch does for an object held
// decoded from base (decodeOver), and as it does without one; it reports
// false when base is not a value a watch would use (decodeStored does not
// read it whole, or it does not decode).
func overBase(t *testing.T, base, value []byte, scratch *decodeScratch) (got, want decodedFrom[fastSpec, fastStatus], gotErr, wantErr error, ok bool) {
	t.Helper()
	raw := new(rawObject)
	if !decodeRawFast(base, raw, &metaDecoder{}) {
		return got, want, nil, nil, false
	}
	plans := sidePlansOf[fastSpec, fastStatus]()
	held, err := decodeObject[fastSpec, fastStatus](kv.KeyValue{Key: "K/a", Value: base}, &metaDecoder{kind: "K", name: "a", plans: plans}, nil, copies{})
	if err != nil {
		return got, want, nil, nil, false
	}
	scratch.base.set(base, value, &held.obj.Meta, held.obj.Conditions, copies{spec: true, status: true})
	scratch.base.withHead(raw.head.text()) // as the memory knows it (baseHeadOf)
	d := &metaDecoder{kind: "K", name: "a", scratch: scratch, plans: plans, base: &scratch.base}
	got, gotErr = decodeObject(kv.KeyValue{Key: "K/a", Value: value}, d, &decodedFrom[fastSpec, fastStatus]{obj: held.obj}, copies{})
	scratch.base = baseValue{}
	want, wantErr = decodeObject[fastSpec, fastStatus](kv.KeyValue{Key: "K/a", Value: value}, &metaDecoder{kind: "K", name: "a", plans: plans}, nil, copies{})
	return got, want, gotErr, wantErr, true
}

// requireOverBase holds decoding value over base to the decoding of value
// alone: the same object, or the same error.
func requireOverBase(t *testing.T, base, value []byte, scratch *decodeScratch) {
	t.Helper()
	got, want, gotErr, wantErr, ok := overBase(t, base, value, scratch)
	if !ok {
		return
	}
	require.Equal(t, wantErr, gotErr, "%s\nover\n%s", value, base)
	if wantErr == nil {
		require.Equal(t, want.obj, got.obj, "%s\nover\n%s", value, base)
	}
}

// changed returns a copy of obj with some of its parts changed, as the
// writes do: the spec, the status, the conditions, the metadata a write
// stamps, the ownership records, the labels.
func changed(rng *rand.Rand, obj *Object[fastSpec, fastStatus]) *Object[fastSpec, fastStatus] {
	next := *obj
	next.Meta = obj.Meta.clone()
	next.Conditions = append([]Condition(nil), obj.Conditions...)
	for range 1 + rng.IntN(3) {
		switch rng.IntN(8) {
		case 0:
			next.Spec.Replicas = rng.IntN(3)
		case 1:
			next.Spec.Image = []string{"", "web:1", "web:2", `q"uote`}[rng.IntN(4)]
		case 2:
			next.Status.Ready = rng.IntN(3)
		case 3:
			next.Status.Message = []string{"", "ready", "not ready"}[rng.IntN(3)]
		case 4:
			next.Meta.LastWrite.Manager = []string{"user", "ctl", "a"}[rng.IntN(3)]
			next.Meta.Generation++
		case 5:
			next.Meta.Managed = append(next.Meta.Managed, ManagedFields{Manager: "m", Operation: "Update", Fields: "~x"})
		case 6:
			next.Conditions = append(next.Conditions, Condition{Type: "Ready", Status: ConditionTrue, LastTransitionTime: time.Unix(int64(rng.IntN(100)), 0).UTC()})
		case 7:
			next.Meta.Labels = map[string]string{"app": []string{"web", "db"}[rng.IntN(2)]}
		}
	}
	return &next
}

// A watch event's object decoded over the object held for the value before
// the change (see baseValue) is the object its value decodes to alone, or
// the same error: for values the store writes, each changed in a few of its
// parts from the one before, and in either order.
func TestDecodeOverBaseAgreesWithDecoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 1))
	scratch := new(decodeScratch)
	for range race.Sweep(3000, 8) {
		obj := randomObject(rng)
		obj.Meta.Kind, obj.Meta.Name = "K", "a"
		base, err := json.Marshal(obj)
		require.NoError(t, err)
		value, err := json.Marshal(changed(rng, obj))
		require.NoError(t, err)
		requireOverBase(t, base, value, scratch)
		requireOverBase(t, value, base, scratch)
	}
}

// The values whose bytes around a part are the base's but the part is not
// its: what a test of only the common bytes would take, decoded whole.
var overBaseCases = []struct{ name, base, value string }{
	{"a member that moved to the end",
		`{"metadata":{"kind":"K","name":"a"},"status":{"ready":1},"spec":{"replicas":1}}`,
		`{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":2},"status":{"ready":1}}`},
	{"the same member in a string of the base",
		`{"metadata":{"kind":"K","name":"a"},"spec":{"image":"x,\"status\":{\"ready\":1}}"},"status":{"ready":2}}`,
		`{"metadata":{"kind":"K","name":"a"},"spec":{"image":"x"},"status":{"ready":1}}`},
	{"the status as a spec's field",
		`{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":1,"status":{"ready":1}}}`,
		`{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":1},"status":{"ready":1}}`},
	{"white space before the key",
		`{"metadata":{"kind":"K","name":"a"},"spec":{"image":"x"}, "status":{"ready":1}}`,
		`{"metadata":{"kind":"K","name":"a"},"spec":{"image":"y"}, "status":{"ready":1}}`},
	{"white space before the colon",
		`{"metadata":{"kind":"K","name":"a"},"spec":{"image":"x"},"status" :{"ready":1}}`,
		`{"metadata":{"kind":"K","name":"a"},"spec":{"image":"y"},"status" :{"ready":1}}`},
	{"a record that goes on past the common prefix",
		`{"metadata":{"kind":"K","name":"a","managed":[{"manager":"m","operation":"Update","fields":"~x"}]},"spec":null}`,
		`{"metadata":{"kind":"K","name":"a","managed":[{"manager":"m","operation":"Update","fields":"~x"},{"manager":"n","operation":"Apply","fields":"~y"}]},"spec":null}`},
	{"a record that ends the common prefix",
		`{"metadata":{"kind":"K","name":"a","managed":[{"manager":"m","operation":"Update","fields":"~x"}],"generation":1}}`,
		`{"metadata":{"kind":"K","name":"a","managed":[{"manager":"m","operation":"Update","fields":"~x"}],"generation":2}}`},
	{"labels that go on past the common prefix",
		`{"metadata":{"kind":"K","name":"a","labels":{"a":"b"}}}`,
		`{"metadata":{"kind":"K","name":"a","labels":{"a":"b","c":"d"}}}`},
	{"a repeated member in the value",
		`{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":1},"status":{"ready":1}}`,
		`{"metadata":{"kind":"K","name":"a"},"status":{"ready":2},"spec":{"replicas":1},"status":{"ready":1}}`},
	{"conditions in the common suffix",
		`{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":1},"status":{"ready":1},"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}`,
		`{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":2},"status":{"ready":1},"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}`},
	{"conditions that changed",
		`{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":1},"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}`,
		`{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":1},"conditions":[{"type":"Ready","status":"False","lastTransitionTime":"2026-01-01T00:00:00Z"}]}`},
	{"the same value", `{"metadata":{"kind":"K","name":"a","managed":[]},"spec":{"replicas":1},"status":{"ready":1}}`,
		`{"metadata":{"kind":"K","name":"a","managed":[]},"spec":{"replicas":1},"status":{"ready":1}}`},
	{"a value that does not decode",
		`{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":1},"status":{"ready":1}}`,
		`{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":"x"},"status":{"ready":1}}`},
	{"a value cut short",
		`{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":1},"status":{"ready":1}}`,
		`{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":1},"status":{"ready":1}`},
}

func TestDecodeOverBaseOfLookalikes(t *testing.T) {
	scratch := new(decodeScratch)
	for _, c := range overBaseCases {
		t.Run(c.name, func(t *testing.T) {
			_, _, _, _, ok := overBase(t, []byte(c.base), []byte(c.value), scratch)
			require.True(t, ok, "the base is one a watch decodes over")
			requireOverBase(t, []byte(c.base), []byte(c.value), scratch)
			requireOverBase(t, []byte(c.value), []byte(c.base), scratch)
		})
	}
}

// What is the same is the held object's, memory shared: a spec write
// leaves the ownership records, the labels, the status, the conditions
// and the spec's map as they were.
func TestDecodeOverBaseTakesWhatIsTheSame(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	obj := &Object[fastSpec, fastStatus]{
		Meta: Meta{Kind: "K", Name: "a", UID: "u", Labels: map[string]string{"app": "web"},
			Managed:   []ManagedFields{{Manager: "user", Operation: "Update", Fields: "~x"}, {Manager: "ctl", Operation: "Apply", Subresource: "status", Fields: "~y"}},
			LastWrite: LastWrite{Manager: "ctl", Op: "ApplyStatus"}, Generation: 1},
		Spec:       fastSpec{Image: "web:1", Replicas: 1, Env: map[string]string{"A": "1"}},
		Status:     fastStatus{Ready: 1},
		Conditions: []Condition{{Type: "Ready", Status: ConditionTrue, LastTransitionTime: at}},
	}
	base, err := json.Marshal(obj)
	require.NoError(t, err)
	next := *obj
	next.Meta.LastWrite = LastWrite{Manager: "user", Op: "Update"}
	next.Meta.Generation, next.Spec.Replicas = 2, 2
	value, err := json.Marshal(&next)
	require.NoError(t, err)

	held, got, b := decodeOverBase(t, base, value)
	next.Meta.Revision = 0
	require.Equal(t, &next, got.obj)
	require.Same(t, &held.obj.Meta.Managed[0], &got.obj.Meta.Managed[0], "the records")
	require.Same(t, &held.obj.Conditions[0], &got.obj.Conditions[0], "the conditions")
	require.True(t, b.statusSame, "the status")
	require.False(t, b.specSame, "the spec changed")
	require.True(t, sameMap(held.obj.Spec.Env, got.obj.Spec.Env), "the spec's map the write left as it was")
	require.True(t, sameMap(held.obj.Meta.Labels, got.obj.Meta.Labels), "the labels")
}

// A value whose head (the metadata up to their last write, see
// storedHead) is byte for byte the base's, as the memory knows it, takes
// the held object's head fields with one comparison, without reading
// them: the held object is what the base decodes to (WatchUndecoded's
// promise), as it is for the Status a spec write left as it was. A value
// whose head differs, or a base whose head is not known, is read field by
// field, as the held object's are compared with the text.
func TestDecodeOverBaseTakesTheHeadTheBaseHolds(t *testing.T) {
	obj := &Object[fastSpec, fastStatus]{
		Meta: Meta{Kind: "K", Name: "a", UID: "u", Labels: map[string]string{"app": "web"}, Finalizers: []string{"f"},
			Managed:   []ManagedFields{{Manager: "user", Operation: "Update", Fields: "~x"}, {Manager: "ctl", Operation: "Apply", Subresource: "status", Fields: "~y"}},
			LastWrite: LastWrite{Manager: "ctl", Op: "ApplyStatus"}, Generation: 1, StatusGeneration: 1},
		Spec:   fastSpec{Image: "web:1", Replicas: 1},
		Status: fastStatus{Ready: 1},
	}
	base, err := json.Marshal(obj)
	require.NoError(t, err)
	raw := new(rawObject)
	require.True(t, decodeRawFast(base, raw, &metaDecoder{}))
	require.NotEmpty(t, raw.head.text(), "the base's head")
	plans := sidePlansOf[fastSpec, fastStatus]()
	over := func(held *Object[fastSpec, fastStatus], value, head []byte) *Object[fastSpec, fastStatus] {
		t.Helper()
		b := new(baseValue)
		b.set(base, value, &held.Meta, held.Conditions, copies{spec: true, status: true})
		b.withHead(head)
		got, err := decodeObject(kv.KeyValue{Key: "K/a", Value: value}, &metaDecoder{kind: "K", name: "a", plans: plans, base: b}, &decodedFrom[fastSpec, fastStatus]{obj: held}, copies{})
		require.NoError(t, err)
		return got.obj
	}
	// The held object as it would be were it not what the base decodes
	// to: its fields before the last write tell which way the head was
	// read.
	broken := *obj
	broken.Meta.UID, broken.Meta.Labels, broken.Meta.Finalizers = "not-u", map[string]string{"app": "db"}, nil
	spec := func(m Meta) []byte {
		next := *obj
		next.Meta = m
		next.Meta.LastWrite = LastWrite{Manager: "user", Op: "Update"}
		next.Meta.Generation, next.Spec.Replicas = 2, 2
		value, err := json.Marshal(&next)
		require.NoError(t, err)
		return value
	}

	value := spec(obj.Meta)
	got := over(&broken, value, raw.head.text())
	require.Equal(t, "not-u", got.Meta.UID, "the held object's UID, its text not read")
	require.Equal(t, broken.Meta.Labels, got.Meta.Labels)
	require.Nil(t, got.Meta.Finalizers)
	require.Equal(t, LastWrite{Manager: "user", Op: "Update"}, got.Meta.LastWrite, "what follows the head, read")
	require.Equal(t, int64(2), got.Meta.Generation)
	require.Equal(t, 2, got.Spec.Replicas)

	held := *obj
	got = over(&held, value, raw.head.text())
	require.Same(t, &held.Meta.Managed[0], &got.Meta.Managed[0], "the records")
	require.True(t, sameMap(held.Meta.Labels, got.Meta.Labels), "the labels")
	require.Same(t, &held.Meta.Finalizers[0], &got.Meta.Finalizers[0], "the finalizers")
	want, err := decodeObject[fastSpec, fastStatus](kv.KeyValue{Key: "K/a", Value: value}, &metaDecoder{kind: "K", name: "a", plans: plans}, nil, copies{})
	require.NoError(t, err)
	require.Equal(t, want.obj, got, "what decoding the value gives")

	// Not known, or not a head of the base: read.
	require.Equal(t, "u", over(&broken, value, nil).Meta.UID)
	require.Equal(t, "u", over(&broken, value, append([]byte(nil), raw.head.text()...)).Meta.UID, "a copy of the head, not the base's")
	// A head that differs from the base's (one more finalizer): read.
	m := obj.Meta
	m.Finalizers = []string{"f", "g"}
	got = over(&broken, spec(m), raw.head.text())
	require.Equal(t, "u", got.Meta.UID)
	require.Equal(t, []string{"f", "g"}, got.Meta.Finalizers)
}

// A watch takes the base's head from the Store's memory of it, while it
// keeps the value decoded: the object held for it, were it not what the
// base decodes to, shows which way the event's head was read.
func TestWatchTakesTheHeadOfTheValueRemembered(t *testing.T) {
	st, err := New[ctlSpec, ctlStatus](newMapBackend(), "App")
	require.NoError(t, err)
	w := newHeldSpecWrite(t, st, controllerApp(), func(s *ctlSpec) { s.Replicas = 6 })
	broken := *w.held
	broken.Meta.UID = "not-" + w.held.Meta.UID
	decode := st.decoder(false, nil, st.heldObjects(func(string, int64) *Object[ctlSpec, ctlStatus] { return &broken }))

	st.last.wrote(w.key, 8, nil, w.raw, w.ev.Prev.Value, decodedSides{})
	tev := decode(w.ev)
	require.Equal(t, Modified, tev.Type)
	require.Equal(t, broken.Meta.UID, tev.Object.Meta.UID, "the held object's, the head not read")
	require.Equal(t, 6, int(tev.Object.Spec.Replicas))

	// Past maxDecoded later writes the memory holds the value no longer
	// decoded (a controller's status write, when the next spec write of
	// its object comes): the head's length is still known.
	st.last.forget(w.key, 10) // the decode remembered revision 9
	st.last.wrote(w.key, 8, nil, w.raw, w.ev.Prev.Value, decodedSides{})
	for i := range maxDecoded + 1 {
		st.last.wrote(fmt.Sprintf("%s-other-%d", w.key, i), 9, nil, w.raw, w.ev.Prev.Value, decodedSides{})
	}
	e, ok := st.last.latest(w.key)
	require.True(t, ok)
	require.Equal(t, int64(8), e.rev)
	require.Nil(t, e.raw, "displaced from the decoded values")
	tev = decode(w.ev)
	require.Equal(t, broken.Meta.UID, tev.Object.Meta.UID, "the held object's, the head not read, with the value no longer decoded")

	st.last.forget(w.key, 10)
	tev = decode(w.ev)
	require.Equal(t, w.held.Meta.UID, tev.Object.Meta.UID, "not remembered: read")
}

// The event of a value over a held object whose name is the key's needs
// no second ValidateName of it (the held object's was validated), but
// still its identity: a value that claims another name, or another kind,
// is undecodable as ever.
func TestWatchOverHeldChecksTheValuesIdentity(t *testing.T) {
	st, err := New[ctlSpec, ctlStatus](newMapBackend(), "App")
	require.NoError(t, err)
	w := newHeldSpecWrite(t, st, controllerApp(), func(s *ctlSpec) { s.Replicas = 6 })
	decode := st.decoder(false, nil, st.heldObjects(func(string, int64) *Object[ctlSpec, ctlStatus] { return w.held }))
	for _, c := range []struct{ from, to string }{{`"name":"app-1"`, `"name":"app-2"`}, {`"kind":"App"`, `"kind":"Other"`}} {
		ev := w.ev
		ev.KV.Value = []byte(strings.Replace(string(ev.KV.Value), c.from, c.to, 1))
		require.NotEqual(t, w.ev.KV.Value, ev.KV.Value)
		st.last.wrote(w.key, 8, nil, w.raw, w.ev.Prev.Value, decodedSides{})
		tev := decode(ev)
		require.NotNil(t, tev.Undecodable, c.to)
		require.ErrorContains(t, tev.Undecodable, "the value claims")
		st.last.forget(w.key, 10)
	}
	tev := decode(w.ev)
	require.Nil(t, tev.Undecodable)
	require.Equal(t, 6, int(tev.Object.Spec.Replicas))
}

// A scratch space's decoder starts every value afresh: metaDecoderOf
// zeroes what a decode left in it, and giveBack leaves it zero (so that
// the next metaDecoderOf need not).
func TestScratchDecoderStartsAfresh(t *testing.T) {
	st, err := New[ctlSpec, ctlStatus](newMapBackend(), "App")
	require.NoError(t, err)
	scratch := new(decodeScratch)
	fresh := metaDecoder{kind: "App", name: "a", scratch: scratch, plans: st.sides}
	require.Equal(t, fresh, *st.metaDecoderOf("a", scratch))
	d := &scratch.d
	d.r, d.found, d.otherVersion, d.typed, d.specShape, d.specKey = jsonscan.NewReader([]byte(`{}`)), "v1", true, true, true, []byte("k")
	d.base, d.held, d.headEnd = &scratch.base, unsafe.Pointer(scratch), 7
	d.into = sidesIntoOf(st.sides, new(Object[ctlSpec, ctlStatus]), nil)
	require.Equal(t, fresh, *st.metaDecoderOf("a", scratch), "what the last decode left, zeroed")

	d.found, d.base, d.headEnd = "v1", &scratch.base, 7
	st.giveBack(scratch)
	require.Equal(t, metaDecoder{}, scratch.d, "given back: nothing kept")
	require.False(t, scratch.used)
	fresh.name = "b"
	require.Equal(t, fresh, *st.metaDecoderOf("b", scratch), "borrowed again")
}

func sameMap(a, b map[string]string) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// FuzzDecodeOverBase: whatever the base and the value, a decoding over a
// base a watch would use gives what the value's decoding alone gives.
func FuzzDecodeOverBase(f *testing.F) {
	for _, c := range overBaseCases {
		f.Add([]byte(c.base), []byte(c.value))
	}
	rng := rand.New(rand.NewPCG(26, 2))
	for range 20 {
		obj := randomObject(rng)
		base, err := json.Marshal(obj)
		require.NoError(f, err)
		value, err := json.Marshal(changed(rng, obj))
		require.NoError(f, err)
		f.Add(base, value)
	}
	scratch := new(decodeScratch)
	f.Fuzz(func(t *testing.T, base, value []byte) {
		requireOverBase(t, base, value, scratch)
	})
}

// baseValue's samePrefix and sameSuffix, asked about every position of a
// value in a random order (so that each answer may come from what earlier
// ones found), answer as the common prefix and suffix of the two values,
// counted byte by byte, say.
func TestBaseValueSamePrefixAndSuffix(t *testing.T) {
	common := func(a, b []byte, at func([]byte, int) byte) int {
		n := 0
		for n < min(len(a), len(b)) && at(a, n) == at(b, n) {
			n++
		}
		return n
	}
	front := func(s []byte, i int) byte { return s[i] }
	back := func(s []byte, i int) byte { return s[len(s)-1-i] }
	rng := rand.New(rand.NewPCG(55, 1))
	for _, c := range []struct{ a, b string }{
		{"", ""},
		{"abc", "abc"},
		{"abcdefghijklmnop", "abcdefghijklmnoX"},
		{"Xbcdefghijklmnop", "abcdefghijklmnop"},
		{"0123456789abcdefXYZ", "0123456789abcdefxyz"},
		{"XYZ0123456789abcdef", "xyz0123456789abcdef"},
		{"ab", "abcdefghijkl"},
		{"kl", "abcdefghijkl"},
		{"a0123456789abcdefz", "b0123456789abcdefz"},
		{"abcabc", "abc"},
		{strings.Repeat("x", 200) + "a" + strings.Repeat("y", 150), strings.Repeat("x", 200) + "b" + strings.Repeat("y", 150)},
		{strings.Repeat("x", 128) + "a" + strings.Repeat("y", 128), strings.Repeat("x", 128) + "bc" + strings.Repeat("y", 128)},
		{strings.Repeat("x", 129), strings.Repeat("x", 64)},
	} {
		for _, p := range [][2][]byte{{[]byte(c.a), []byte(c.b)}, {[]byte(c.b), []byte(c.a)}, {nil, []byte(c.b)}} {
			base, value := p[0], p[1]
			prefix, suffix := common(base, value, front), common(base, value, back)
			for range 20 {
				var b baseValue
				b.set(base, value, nil, nil, copies{})
				for _, i := range rng.Perm(2 * (len(value) + 1)) {
					if at := i / 2; i%2 == 0 {
						require.Equal(t, at <= prefix, b.samePrefix(value, at), "samePrefix(%d) of %q over %q", at, value, base)
					} else {
						require.Equal(t, len(value)-at <= suffix, b.sameSuffix(value, at), "sameSuffix(%d) of %q over %q", at, value, base)
					}
				}
			}
		}
	}
}

// A watch decodes a value over the object held for the value before it
// only when the Store remembers that value as one decodeStored reads whole
// (lastValue.whole): each key there once. Here the value before has its
// metadata twice, which encoding/json merges (the records of the second),
// and the Store remembers it as read, undecoded: the new value, whose
// metadata are the first's byte for byte, is decoded whole. Remembered as
// its own write (whole), a value's records are the held object's.
func TestWatchDecodesOverOnlyAValueReadWhole(t *testing.T) {
	st, err := New[fastSpec, fastStatus](newMapBackend(), "App")
	require.NoError(t, err)
	key := st.keyOf("a")
	first := `{"kind":"App","name":"a","managed":[{"manager":"m","operation":"Update","fields":"~x"}]}`
	twice := []byte(`{"metadata":` + first + `,"metadata":{"kind":"App","name":"a","managed":[{"manager":"n","operation":"Apply","fields":"~y"}]},"spec":{"replicas":1},"status":{"ready":1}}`)
	next := []byte(`{"metadata":` + first + `,"spec":{"replicas":2},"status":{"ready":1}}`)
	var held *Object[fastSpec, fastStatus]
	decode := st.decoder(false, nil, st.heldObjects(func(name string, rev int64) *Object[fastSpec, fastStatus] {
		if name == "a" && held != nil && rev == held.Meta.Revision {
			return held
		}
		return nil
	}))
	event := func(prev, value []byte, rev int64) *Object[fastSpec, fastStatus] {
		ev := decode(kv.Event{Type: kv.EventPut, Revision: rev, KV: kv.KeyValue{Key: key, Value: value, ModRevision: rev},
			Prev: kv.KeyValue{Key: key, Value: prev, ModRevision: rev - 1}})
		require.Nil(t, ev.Undecodable)
		return ev.Object
	}

	held = new(Object[fastSpec, fastStatus])
	require.NoError(t, json.Unmarshal(twice, &legacyObject[fastSpec, fastStatus]{Object: held, Legacy: &held.Meta}))
	held.Meta.Revision = 1
	require.Equal(t, "n", held.Meta.Managed[0].Manager, "encoding/json keeps the second metadata's records")
	st.last.read(kv.KeyValue{Key: key, Value: twice, ModRevision: 1})
	got := event(twice, next, 2)
	require.Equal(t, "m", got.Meta.Managed[0].Manager, "the records of the value")
	require.Equal(t, 2, got.Spec.Replicas)

	// The Store's own write of got, as its encoding gives it.
	own := *got
	own.Status.Ready = 2
	val, err := json.Marshal(&own)
	require.NoError(t, err)
	raw, err := decodeRaw(kv.KeyValue{Key: key, Value: val, ModRevision: 3}, &metaDecoder{})
	require.NoError(t, err)
	st.last.wrote(key, 3, nil, raw, val, decodedSides{})
	held = event(next, val, 3)
	changed := []byte(strings.Replace(string(val), `"replicas":2`, `"replicas":3`, 1))
	got = event(val, changed, 4)
	require.Equal(t, 3, got.Spec.Replicas)
	require.Equal(t, 2, got.Status.Ready)
	require.Same(t, &held.Meta.Managed[0], &got.Meta.Managed[0], "the held object's records")
}

// BenchmarkWatchSpecWriteOverHeld is a cache's watch decoding another
// client's spec write (the Store's watch with held objects, without the
// state before): decoded whole (no-held), and over the object held for the
// Store's own status write before it (over-held), which the write left
// with its records, status and conditions as they were, and over it
// when the Store no longer remembers that write (held-only, as past its
// memory at a million objects): the metadata alone taken from it.
//
//	go test -run '^$' -bench WatchSpecWriteOverHeld -benchmem ./store/
func BenchmarkWatchSpecWriteOverHeld(b *testing.B) {
	st, err := New[fastSpec, fastStatus](newMapBackend(), "App")
	require.NoError(b, err)
	obj := &Object[fastSpec, fastStatus]{
		Meta: Meta{Kind: "App", Name: "app-1", UID: "33c810c9-5b5b-447e-ac54-555352fe88da",
			Managed:   []ManagedFields{{Manager: "user", Operation: "Update", Fields: "~OVitRw_g"}, {Manager: "app-controller", Operation: "Apply", Subresource: "status", Fields: "~Dha_owBA"}},
			LastWrite: LastWrite{Manager: "app-controller", Op: "ApplyStatus"}, Generation: 2, StatusGeneration: 2},
		Spec:   fastSpec{Image: "registry.example.com/platform/web-frontend:v1.27.3", Replicas: 5, Env: map[string]string{"app": "web", "shard": "1"}, Ports: []int{8080, 8443}},
		Status: fastStatus{Ready: 5, Message: "all replicas are ready"},
	}
	w := newHeldSpecWrite(b, st, obj, func(s *fastSpec) { s.Replicas = 6 })
	for _, bc := range []struct {
		name     string
		held     func(string, int64) *Object[fastSpec, fastStatus]
		remember bool
	}{
		{"no-held", func(string, int64) *Object[fastSpec, fastStatus] { return nil }, true},
		{"over-held", func(string, int64) *Object[fastSpec, fastStatus] { return w.held }, true},
		{"held-only", func(string, int64) *Object[fastSpec, fastStatus] { return w.held }, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			decode := st.decoder(false, nil, st.heldObjects(bc.held))
			b.ReportAllocs()
			for b.Loop() {
				// The Store remembers its write; the event, the value after it.
				st.last.forget(w.key, 10)
				if bc.remember {
					st.last.wrote(w.key, 8, nil, w.raw, w.ev.Prev.Value, decodedSides{})
				}
				tev := decode(w.ev)
				if tev.Type != Modified || tev.Object.Spec.Replicas != 6 || (&tev.Object.Meta.Managed[0] == &w.held.Meta.Managed[0]) != (bc.name != "no-held") {
					b.Fatal(tev)
				}
			}
		})
	}
}

// A Spec or Status its sideDecoder declines (a key spelled in another
// case, which encoding/json matches) is read again as bytes and decoded
// by encoding/json, the rest of the value the fast way, in one pass.
func TestDecodeObjectFastSideDeclined(t *testing.T) {
	plans := sidePlansOf[fastSpec, fastStatus]()
	for _, value := range []string{
		`{"metadata":{"kind":"K","name":"a"},"spec":{"Image":"web:1","replicas":2},"status":{"ready":1}}`,
		`{"metadata":{"kind":"K","name":"a"},"spec":{"image":"web:1"},"status":{"Ready":1,"message":"m"}}`,
		`{"metadata":{"kind":"K","name":"a"},"spec": {"image":"web:1","replicas":2.0},"status":{"ready":1}}`, // not an int
		`{"metadata":{"kind":"K","name":"a"},"spec": {"image":"web:1","env":{"A":"1","A":"2"}},"status":{"ready":1}}`,
	} {
		obj := new(Object[fastSpec, fastStatus])
		from, ok := decodeObjectFast([]byte(value), obj, &metaDecoder{kind: "K", name: "a", plans: plans}, nil, copies{})
		want, err := decodeObjectJSON([]byte(value))
		if err != nil {
			require.False(t, ok, value)
			continue
		}
		require.True(t, ok, value)
		require.Equal(t, want, obj, value)
		require.True(t, json.Valid(from.spec) && json.Valid(from.status), value)
	}
}

// heldSpec has a field of each kind a Spec decoded over the held object
// may share (see heldSide), at the top and in a nested struct, and some
// it may not.
type heldSpec struct {
	Image    string            `json:"image"`
	Replicas int               `json:"replicas"`
	Args     []string          `json:"args,omitempty"`
	Selector map[string]string `json:"selector,omitempty"`
	Ports    []int             `json:"ports,omitempty"`
	Pod      heldPod           `json:"pod"`
	Phase    heldPhase         `json:"phase,omitempty"`
}

type heldPod struct {
	Name    string            `json:"name"`
	Command []string          `json:"command"`
	Labels  map[string]string `json:"labels"`
}

type heldPhase string

// randomHeldSpec returns a heldSpec whose strings are, some, ones that
// the encoding spells with escapes, and whose lists and maps are, some,
// nil or empty.
func randomHeldSpec(rng *rand.Rand) heldSpec {
	words := []string{"", "a", "web", "--port=80", `q"uote`, "<b>", "ä", "0123456789-0123456789-0123456789"}
	w := func() string { return words[rng.IntN(len(words))] }
	strs := func() []string {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		s := make([]string, 1+rng.IntN(3))
		for i := range s {
			s[i] = w()
		}
		return s
	}
	strMap := func() map[string]string {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return map[string]string{}
		}
		m := map[string]string{}
		for range 1 + rng.IntN(3) {
			m[[]string{"app", "shard", "tier", "a.b/c"}[rng.IntN(4)]] = w()
		}
		return m
	}
	return heldSpec{Image: w(), Replicas: rng.IntN(3), Args: strs(), Selector: strMap(), Ports: []int{rng.IntN(2)},
		Pod: heldPod{Name: w(), Command: strs(), Labels: strMap()}, Phase: heldPhase(w())}
}

// changedHeldSpec returns a copy of s with some of its fields changed:
// replaced, or one element added, removed or changed.
func changedHeldSpec(rng *rand.Rand, s heldSpec) heldSpec {
	next := s
	next.Args, next.Pod.Command = slices.Clone(s.Args), slices.Clone(s.Pod.Command)
	next.Selector, next.Pod.Labels = maps.Clone(s.Selector), maps.Clone(s.Pod.Labels)
	other := randomHeldSpec(rng)
	for range 1 + rng.IntN(2) {
		switch rng.IntN(9) {
		case 0:
			next.Replicas++
		case 1:
			next.Image = other.Image
		case 2:
			next.Args = other.Args
		case 3:
			next.Args = append(next.Args, "x")
		case 4:
			if len(next.Args) > 0 {
				next.Args = next.Args[:len(next.Args)-1]
			}
		case 5:
			next.Selector = other.Selector
		case 6:
			if next.Selector == nil {
				next.Selector = map[string]string{}
			}
			next.Selector[[]string{"app", "zone"}[rng.IntN(2)]] = "x"
		case 7:
			for k := range next.Selector {
				delete(next.Selector, k)
				break
			}
		case 8:
			next.Pod = other.Pod
		}
	}
	return next
}

// asIs reports whether the encoding spells each string as it is, in
// printable ASCII (see Reader.Plain): the texts whose fields a Spec
// decoded over the held one shares.
func asIs(ss ...string) bool {
	for _, s := range ss {
		b, _ := json.Marshal(s)
		if string(b) != `"`+s+`"` || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r > 0x7e }) {
			return false
		}
	}
	return true
}

// sharedAsIs reports, for one list or map field, whether a Spec decoded
// over the held one shares held's: when it decodes to an equal one that
// is not empty, written with strings spelled as they are.
func sharedAsIs(held, got any) (shared, want bool) {
	rh, rg := reflect.ValueOf(held), reflect.ValueOf(got)
	shared = rh.Len() > 0 && rg.Len() > 0 && rh.UnsafePointer() == rg.UnsafePointer()
	if rh.Len() == 0 || !reflect.DeepEqual(held, got) {
		return shared, false
	}
	switch v := held.(type) {
	case []string:
		return shared, asIs(v...)
	case map[string]string:
		return shared, asIs(slices.Collect(maps.Keys(v))...) && asIs(slices.Collect(maps.Values(v))...)
	}
	return shared, false
}

// A Spec decoded over the held object (a watch's, see heldSide) is the
// Spec its value decodes to alone, and shares each string, list of strings
// and map of strings, at the top and in a nested struct, that the held
// Spec holds equal, not empty, and whose text it reads as it is (the
// encoding's), and no other: for random Specs each changed in a few fields
// from the held one, in either order.
func TestDecodeOverHeldSharesWhatDecodesEqual(t *testing.T) {
	rng := rand.New(rand.NewPCG(44, 1))
	plans := sidePlansOf[heldSpec, fastStatus]()
	require.NotNil(t, plans.spec)
	decode := func(value []byte, held *Object[heldSpec, fastStatus]) *Object[heldSpec, fastStatus] {
		t.Helper()
		d := &metaDecoder{kind: "K", name: "a", plans: plans}
		var like *decodedFrom[heldSpec, fastStatus]
		if held != nil {
			d.base = new(baseValue)
			d.base.set(nil, value, &held.Meta, held.Conditions, copies{spec: true, status: true})
			like = &decodedFrom[heldSpec, fastStatus]{obj: held}
		}
		from, err := decodeObject(kv.KeyValue{Key: "K/a", Value: value}, d, like, copies{})
		require.NoError(t, err)
		return from.obj
	}
	var shared, decoded int
	for range race.Sweep(3000, 8) {
		obj := &Object[heldSpec, fastStatus]{Meta: Meta{Kind: "K", Name: "a"}, Spec: randomHeldSpec(rng)}
		next := &Object[heldSpec, fastStatus]{Meta: obj.Meta, Spec: changedHeldSpec(rng, obj.Spec)}
		for _, pair := range [][2]*Object[heldSpec, fastStatus]{{obj, next}, {next, obj}} {
			base, err := json.Marshal(pair[0])
			require.NoError(t, err)
			value, err := json.Marshal(pair[1])
			require.NoError(t, err)
			held := decode(base, nil)
			got, want := decode(value, held), decode(value, nil)
			require.Equal(t, want, got, "%s\nover\n%s", value, base)
			check := func(name string, h, g any) {
				t.Helper()
				sharedNow, want := sharedAsIs(h, g)
				require.Equal(t, want, sharedNow, "%s: %s\nover\n%s", name, value, base)
				if sharedNow {
					shared++
				} else {
					decoded++
				}
			}
			check("args", held.Spec.Args, got.Spec.Args)
			check("selector", held.Spec.Selector, got.Spec.Selector)
			check("pod.command", held.Spec.Pod.Command, got.Spec.Pod.Command)
			check("pod.labels", held.Spec.Pod.Labels, got.Spec.Pod.Labels)
		}
	}
	require.Positive(t, shared)
	require.Positive(t, decoded)
}

// A write of the metadata alone (labels, by another manager) leaves the
// spec and the status as they were, in the common suffix: decoded over
// the object held for the value before it, the new object takes that
// object's Spec as it is (baseValue.specSame), its map and slice memory
// shared, rather than decoding the spec's bytes again into ones of its
// own.
func TestDecodeOverBaseTakesTheSideTheBaseHolds(t *testing.T) {
	obj := &Object[fastSpec, fastStatus]{
		Meta: Meta{Kind: "K", Name: "a", Managed: []ManagedFields{{Manager: "ctl", Operation: "Apply", Subresource: "status", Fields: "~x"}},
			LastWrite: LastWrite{Manager: "ctl", Op: "ApplyStatus"}, Generation: 1, StatusGeneration: 1},
		Spec:   fastSpec{Image: "web:1", Replicas: 1, Env: map[string]string{"A": "1"}, Ports: []int{80}},
		Status: fastStatus{Ready: 0},
	}
	base, err := json.Marshal(obj)
	require.NoError(t, err)
	next := *obj
	next.Meta.LastWrite = LastWrite{Manager: "user", Op: "Update"}
	next.Meta.Labels = map[string]string{"app": "web"}
	value, err := json.Marshal(&next)
	require.NoError(t, err)

	held, got, b := decodeOverBase(t, base, value)
	require.Equal(t, &next, got.obj)
	require.True(t, b.specSame, "the spec's bytes are the base's")
	require.True(t, b.statusSame, "the status's bytes are the base's")
	require.True(t, sameMap(held.obj.Spec.Env, got.obj.Spec.Env), "the held object's spec, its map shared")
	require.Same(t, &held.obj.Spec.Ports[0], &got.obj.Spec.Ports[0], "the held object's spec, its slice shared")
}

// A watch's decoder keeps no reference to the objects it decoded, nor to
// the held object it decoded over, once it returned: its scratch space
// (the metaDecoder's sidesInto, its base, its held pointer) is emptied, so
// an object the caller no longer holds can be collected before the next
// event comes.
func TestWatchDecoderKeepsNoObject(t *testing.T) {
	st, err := New[fastSpec, fastStatus](newMapBackend(), "App")
	require.NoError(t, err)
	obj := &Object[fastSpec, fastStatus]{
		Meta: Meta{Kind: "App", Name: "a", Managed: []ManagedFields{{Manager: "ctl", Operation: "Apply", Subresource: "status", Fields: "~y"}},
			LastWrite: LastWrite{Manager: "ctl", Op: "ApplyStatus"}, Generation: 1, StatusGeneration: 1},
		Spec:   fastSpec{Image: "web:1", Replicas: 1, Env: map[string]string{"A": "1"}},
		Status: fastStatus{Ready: 1},
	}
	w := newHeldSpecWrite(t, st, obj, func(s *fastSpec) { s.Replicas = 2 })
	held := w.held
	decode := st.decoder(false, nil, st.heldObjects(func(name string, rev int64) *Object[fastSpec, fastStatus] {
		if name == "a" && held != nil && rev == held.Meta.Revision {
			return held
		}
		return nil
	}))
	st.last.wrote(w.key, 8, nil, w.raw, w.ev.Prev.Value, decodedSides{})
	ev := decode(w.ev)
	require.Equal(t, Modified, ev.Type)
	require.Equal(t, 2, ev.Object.Spec.Replicas)
	require.True(t, sameMap(held.Spec.Env, ev.Object.Spec.Env), "decoded over the held object")
	gotWeak, heldWeak := weak.Make(ev.Object), weak.Make(held)
	ev, held, w = Event[fastSpec, fastStatus]{}, nil, heldSpecWrite[fastSpec, fastStatus]{}
	runtime.GC()
	require.Nil(t, gotWeak.Value(), "the decoded object is the caller's alone")
	require.Nil(t, heldWeak.Value(), "the held object is the caller's alone")
	runtime.KeepAlive(decode)
}

// textSpec has the []string and map[string]string fields whose decoded
// values a watch's objects share (see sharedValues).
type textSpec struct {
	N    int               `json:"n"`
	Args []string          `json:"args"`
	Sel  map[string]string `json:"sel"`
}

// A watch whose objects are shared decodes a held object's list or map
// that was decoded from the same text (sharedValues.texts), or found to
// be what it decodes to, as the held one, read by one comparison of that
// text; a text that differs, or a held list that is only part of the one
// decoded from the text, is decoded.
func TestWatchTakesHeldListsByTheirText(t *testing.T) {
	st, err := New[textSpec, fastStatus](newMapBackend(), "App")
	require.NoError(t, err)
	key := st.keyOf("a")
	var held *Object[textSpec, fastStatus]
	h := st.heldObjects(func(name string, rev int64) *Object[textSpec, fastStatus] {
		if name == "a" && held != nil && rev == held.Meta.Revision {
			return held
		}
		return nil
	})
	scratch := &decodeScratch{sharing: new(sharedValues)}
	event := func(rev int64, spec textSpec) *Object[textSpec, fastStatus] {
		t.Helper()
		value, err := json.Marshal(&Object[textSpec, fastStatus]{Meta: Meta{Kind: "App", Name: "a", Generation: rev}, Spec: spec})
		require.NoError(t, err)
		ev := st.typedEvent(kv.Event{Type: kv.EventPut, Revision: rev, KV: kv.KeyValue{Key: key, Value: value, ModRevision: rev},
			Prev: kv.KeyValue{Key: key, ModRevision: rev - 1}}, scratch, copiesOf[textSpec, fastStatus](), false, h)
		require.Nil(t, ev.Undecodable)
		require.Equal(t, spec, ev.Object.Spec)
		return ev.Object
	}
	args, sel := []string{"--a", "--b", "--c"}, map[string]string{"app": "web", "shard": "1"}
	first := event(1, textSpec{N: 1, Args: args, Sel: sel})
	p, _ := listAt(first.Spec.Args)
	require.Equal(t, sharedText{text: `["--a","--b","--c"]`, n: 3}, scratch.sharing.texts[p], "the list's text")
	p, _ = mapAt(first.Spec.Sel)
	require.Equal(t, sharedText{text: `{"app":"web","shard":"1"}`, n: 2}, scratch.sharing.texts[p], "the map's text")

	held = first
	second := event(2, textSpec{N: 2, Args: args, Sel: sel})
	require.Same(t, &first.Spec.Args[0], &second.Spec.Args[0], "the held list")
	require.True(t, sameMap(first.Spec.Sel, second.Spec.Sel), "the held map")

	held = second
	third := event(3, textSpec{N: 3, Args: []string{"--a", "--b"}, Sel: map[string]string{"app": "web"}})
	require.NotSame(t, &first.Spec.Args[0], &third.Spec.Args[0])

	// A held list that is part of one decoded from a text: that text
	// decodes to more than it holds.
	part := *first
	part.Spec.Args = first.Spec.Args[:2]
	part.Meta.Revision = 3
	held = &part
	fourth := event(4, textSpec{N: 4, Args: args, Sel: sel})
	require.Len(t, fourth.Spec.Args, 3)

	// A held list and map of no text known (a listing's, say), found the
	// same element by element, are known by that text from then on.
	own := Object[textSpec, fastStatus]{Meta: Meta{Kind: "App", Name: "a", Revision: 4},
		Spec: textSpec{Args: []string{"--a", "--b", "--c"}, Sel: map[string]string{"app": "web", "shard": "1"}}}
	held = &own
	fifth := event(5, textSpec{N: 5, Args: args, Sel: sel})
	require.Same(t, &own.Spec.Args[0], &fifth.Spec.Args[0], "the held list")
	p, _ = listAt(own.Spec.Args)
	require.Equal(t, sharedText{text: `["--a","--b","--c"]`, n: 3}, scratch.sharing.texts[p], "the held list's text")
	p, _ = mapAt(own.Spec.Sel)
	require.Equal(t, sharedText{text: `{"app":"web","shard":"1"}`, n: 2}, scratch.sharing.texts[p], "the held map's text")
}

// decodeOverBase decodes base, the value of key K/a, as a watch holds it,
// then value over it as a watch decodes the next event (its base set from
// the held object, both sides copyable): the held object, the decoded one
// and the base.
func decodeOverBase(t *testing.T, base, value []byte) (held, got decodedFrom[fastSpec, fastStatus], b *baseValue) {
	t.Helper()
	plans := sidePlansOf[fastSpec, fastStatus]()
	held, err := decodeObject[fastSpec, fastStatus](kv.KeyValue{Key: "K/a", Value: base}, &metaDecoder{kind: "K", name: "a", plans: plans}, nil, copies{})
	require.NoError(t, err)
	b = new(baseValue)
	b.set(base, value, &held.obj.Meta, held.obj.Conditions, copies{spec: true, status: true})
	got, err = decodeObject(kv.KeyValue{Key: "K/a", Value: value}, &metaDecoder{kind: "K", name: "a", plans: plans, base: b}, &decodedFrom[fastSpec, fastStatus]{obj: held.obj}, copies{})
	require.NoError(t, err)
	return held, got, b
}

// A status and conditions in the common suffix are the base's bytes, which
// it was read whole from: the decoder finds where each ends by structure
// alone (jsonscan's SkipValid), without validating them again, and that is
// where they end: past quotes, backslashes, braces and brackets within
// their strings, the status's bytes exactly its text, and the object the
// one the value decodes to.
func TestDecodeOverBaseReadsTheSuffixToItsEnd(t *testing.T) {
	obj := &Object[fastSpec, fastStatus]{
		Meta:   Meta{Kind: "K", Name: "a", LastWrite: LastWrite{Manager: "ctl", Op: "ApplyStatus"}, Generation: 1},
		Spec:   fastSpec{Image: "web:1", Replicas: 1},
		Status: fastStatus{Ready: 2, Message: `a\"}],{["\` + "\u00e9"},
		Conditions: []Condition{{Type: "Ready", Status: ConditionFalse, Reason: `x"]}`, Message: `}]"\`,
			LastTransitionTime: time.Unix(1, 0).UTC()}},
	}
	base, err := json.Marshal(obj)
	require.NoError(t, err)
	next := *obj
	next.Meta.LastWrite, next.Meta.Generation = LastWrite{Manager: "user", Op: "Update"}, 2
	next.Spec.Replicas = 3
	value, err := json.Marshal(&next)
	require.NoError(t, err)
	status, err := json.Marshal(obj.Status)
	require.NoError(t, err)

	held, got, b := decodeOverBase(t, base, value)
	require.Equal(t, &next, got.obj)
	require.True(t, b.statusSame, "the status's bytes are the base's")
	require.Equal(t, string(status), string(got.status), "the status's bytes, to their end")
	require.Same(t, &held.obj.Conditions[0], &got.obj.Conditions[0], "the held object's conditions")
}
