package store

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/jsonscan"
	"github.com/steady-go/steady/internal/race"
	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store/kv"
)

type fastSpec struct {
	Image    string            `json:"image"`
	Replicas int               `json:"replicas"`
	Env      map[string]string `json:"env,omitempty"`
	Ports    []int             `json:"ports,omitempty"`
}

type fastStatus struct {
	Ready   int    `json:"ready"`
	Message string `json:"message,omitempty"`
}

// decodeObjectJSON is decodeObject's specification: encoding/json alone.
func decodeObjectJSON(value []byte) (*Object[fastSpec, fastStatus], error) {
	obj := new(Object[fastSpec, fastStatus])
	return obj, json.Unmarshal(value, &legacyObject[fastSpec, fastStatus]{Object: obj, Legacy: &obj.Meta})
}

// decodeObjectFast gives what encoding/json gives, or defers to it, with
// and without scratch space (kept from one input to the next), and with the
// sideDecoders of the Spec and Status types.
func FuzzDecodeObjectFast(f *testing.F) {
	for _, s := range rawSeeds {
		f.Add([]byte(s))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		v, err := json.Marshal(randomObject(rng))
		require.NoError(f, err)
		f.Add(v)
	}
	scratch, planned := new(decodeScratch), new(decodeScratch)
	plans := sidePlansOf[fastSpec, fastStatus]()
	f.Fuzz(func(t *testing.T, value []byte) {
		for _, d := range []*metaDecoder{{}, {kind: "K", name: "a", scratch: scratch}, {kind: "K", name: "a", scratch: planned, plans: plans}} {
			fast := new(Object[fastSpec, fastStatus])
			if _, ok := decodeObjectFast(value, fast, d, nil, copies{}); !ok {
				continue
			}
			want, err := decodeObjectJSON(value)
			require.NoError(t, err, "accepted what encoding/json rejects: %q", value)
			require.Equal(t, want, fast)
		}
	})
}

// Every object the store can write takes the fast way and decodes as
// encoding/json decodes it, also when one scratch space serves many objects
// whose strings repeat (label values, managers, an object's old and new UID),
// and with the sideDecoders of the Spec and Status types.
// An eighth of the objects under -race (see race.Sweep).
func TestDecodeObjectFastAgreesWithEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 3))
	scratch, planned := new(decodeScratch), new(decodeScratch)
	plans := sidePlansOf[fastSpec, fastStatus]()
	for i := range race.Sweep(2000, 8) {
		obj := randomObject(rng)
		value, err := json.Marshal(obj)
		require.NoError(t, err)
		want, err := decodeObjectJSON(value)
		require.NoError(t, err)
		for _, d := range []*metaDecoder{{}, {kind: obj.Meta.Kind, name: obj.Meta.Name, scratch: scratch},
			{kind: obj.Meta.Kind, name: obj.Meta.Name, scratch: planned, plans: plans}} {
			got := new(Object[fastSpec, fastStatus])
			_, ok := decodeObjectFast(value, got, d, nil, copies{})
			require.True(t, ok, "object %d takes the fast way: %s", i, value)
			require.Equal(t, want, got, "object %d: %s", i, value)
		}
		var raw, rawWant rawObject
		require.True(t, decodeRawFast(value, &raw, &metaDecoder{scratch: scratch}))
		require.NoError(t, decodeRawJSON(value, &rawWant))
		requireHead(t, &raw, value)
		raw.head = storedHead{}
		require.Equal(t, rawWant, raw)
	}
}

// What the fast way declines, encoding/json decodes: a key in another case,
// a repeated key, a null, a non-integral generation.
func TestDecodeObjectFastDefersToEncodingJSON(t *testing.T) {
	for _, meta := range []string{
		`{"Kind":"K"}`, `{"labels":null}`, `{"labels":{"tab\t":"x"}}`, `{"labels":{"a":"b","a":"c"}}`, `{"generation":2.0}`, `{"name":"a","name":"b"}`,
	} {
		d := &metaDecoder{r: jsonscan.NewReader([]byte(meta))}
		require.False(t, d.meta(new(Meta)), meta)
	}
	d := &metaDecoder{r: jsonscan.NewReader([]byte(`[{"type":"A","lastTransitionTime":null}]`))}
	_, ok := d.conditions()
	require.False(t, ok)
	got, err := decodeObject[fastSpec, fastStatus](kv.KeyValue{Key: "k", Value: []byte(`{"metadata":{"Kind":"K","labels":null},"spec":{"replicas":2}}`), ModRevision: 7}, &metaDecoder{}, nil, copies{})
	require.NoError(t, err)
	require.Equal(t, &Object[fastSpec, fastStatus]{Meta: Meta{Kind: "K", Revision: 7}, Spec: fastSpec{Replicas: 2}}, got.obj)
}

// The strings a scratch space shares are equal to what they stand for, and
// are not reallocated when they repeat.
func TestDecodeScratchSharesRepeatedStrings(t *testing.T) {
	obj := &Object[fastSpec, fastStatus]{Meta: Meta{Kind: "Kind", Name: "n", UID: "0123456789-0123456789-0123456789-0123456789",
		Labels: map[string]string{"app": "web"}, LastWrite: LastWrite{Manager: "user", Op: ownership.OpUpdate}}}
	value, err := json.Marshal(obj)
	require.NoError(t, err)
	scratch := new(decodeScratch)
	d := &metaDecoder{kind: "Kind", name: "n", scratch: scratch}
	first, err := decodeObject[fastSpec, fastStatus](kv.KeyValue{Key: "k", Value: value}, d, nil, copies{})
	require.NoError(t, err)
	var again decodedFrom[fastSpec, fastStatus]
	allocs := testing.AllocsPerRun(100, func() {
		again, err = decodeObject[fastSpec, fastStatus](kv.KeyValue{Key: "k", Value: value}, d, nil, copies{})
	})
	require.NoError(t, err)
	require.Equal(t, first.obj, again.obj)
	// The object and its labels map; no string.
	require.LessOrEqual(t, allocs, 3.0)
}

// randomObject returns an object with every Meta field and conditions set
// at random, strings drawn from a small set (so they repeat) with escapes,
// UTF-8 and long ones among them.
func randomObject(rng *rand.Rand) *Object[fastSpec, fastStatus] {
	words := []string{"", "a", "web", "app", "user", "ctrl", "Update", "Apply", "status", "ä-ü", "q\"uote", "new\nline",
		"<html>&", "\u2028", "0123456789-0123456789-0123456789-0123456789", "tab\t", `back\slash`}
	w := func() string { return words[rng.IntN(len(words))] }
	// Keys that JSON spells with escapes or UTF-8 take the encoding/json
	// way (TestDecodeObjectFastDefersToEncodingJSON); the store's own keys
	// and label keys are plain.
	plain := []string{"", "a", "web", "app", "example.com/owner", "app.kubernetes.io/name"}
	strMap := func() map[string]string {
		switch rng.IntN(3) {
		case 0:
			return nil
		case 1:
			return map[string]string{}
		}
		m := map[string]string{}
		for range 1 + rng.IntN(5) {
			m[plain[rng.IntN(len(plain))]] = w()
		}
		return m
	}
	obj := &Object[fastSpec, fastStatus]{Meta: Meta{
		Kind: w(), Name: w(), UID: fmt.Sprintf("uid-%d", rng.IntN(4)),
		Labels: strMap(), Annotations: strMap(),
		DeletionRequested: rng.IntN(2) == 0,
		LastWrite:         LastWrite{Manager: w(), Op: ownership.Operation(w()), Trace: w()},
		Generation:        rng.Int64N(1<<62) - 1<<61, StatusGeneration: rng.Int64N(10),
	}}
	for range rng.IntN(3) {
		obj.Meta.Owners = append(obj.Meta.Owners, OwnerRef{Kind: w(), Name: w(), UID: w(), Controller: rng.IntN(2) == 0})
	}
	for range rng.IntN(3) {
		obj.Meta.Finalizers = append(obj.Meta.Finalizers, w())
	}
	for range rng.IntN(3) {
		obj.Meta.Managed = append(obj.Meta.Managed, ManagedFields{Manager: w(), Operation: w(), Subresource: w(), Fields: w()})
	}
	for range rng.IntN(3) {
		obj.Conditions = append(obj.Conditions, Condition{Type: w(), Status: ConditionStatus(w()), Reason: w(), Message: w(),
			LastTransitionTime: time.Unix(rng.Int64N(1<<32), rng.Int64N(1e9)).In(time.FixedZone("", 3600*(rng.IntN(5)-2))),
			ObservedGeneration: rng.Int64N(5)})
	}
	obj.Spec = fastSpec{Image: w(), Replicas: rng.IntN(5), Env: strMap()}
	obj.Status = fastStatus{Ready: rng.IntN(3), Message: w()}
	return obj
}

// BenchmarkDecodeObject decodes the value of the event-path benchmark's
// objects (bench/eventpath_test.go: a label, one managed-fields entry, a
// small spec and status) with encoding/json alone, and the way a watch
// decodes it (decodeObjectFast with the watch's scratch space). The watch's
// way is what makes a watch event cost 5 allocations per object instead of
// 26.
//
//	go test -run '^$' -bench DecodeObject -benchmem ./store/
func BenchmarkDecodeObject(b *testing.B) {
	obj := &Object[fastSpec, fastStatus]{
		Meta: Meta{Kind: "App", Name: "obj-1", UID: "92340a08-8151-43e1-92bf-0d4043a3ded0", Labels: map[string]string{"app": "web"},
			Managed:   []ManagedFields{{Manager: "user", Operation: "Update", Fields: "~TM_mqwcA"}},
			LastWrite: LastWrite{Manager: "user", Op: ownership.OpUpdate}, Generation: 2},
		Spec: fastSpec{Image: "web:1", Replicas: 2},
	}
	value, err := json.Marshal(obj)
	require.NoError(b, err)
	kv := kv.KeyValue{Key: "App/obj-1", Value: value, ModRevision: 7}
	st, err := New[fastSpec, fastStatus](newMapBackend(), "App")
	require.NoError(b, err)
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeObjectJSON(value); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("watch", func(b *testing.B) {
		scratch := new(decodeScratch)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := st.decodeShared(kv, scratch); err != nil {
				b.Fatal(err)
			}
		}
	})
}

type plainSpec struct {
	Image    string    `json:"image"`
	Replicas int       `json:"replicas"`
	Ports    [2]uint16 `json:"ports"`
	At       time.Time `json:"at"`
	Inner    struct {
		On bool `json:"on"`
	} `json:"inner"`
}

type customSpec struct{ N int }

func (c *customSpec) UnmarshalJSON(b []byte) error { c.N = len(b); return nil }

func TestPlainCopy(t *testing.T) {
	for _, v := range []any{0, "s", 1.5, plainSpec{}, [3]string{}, time.Time{}, struct{}{}} {
		require.True(t, plainCopy(reflect.TypeOf(v)), "%T", v)
	}
	for _, v := range []any{fastSpec{}, []int{}, map[string]string{}, new(int), customSpec{}, struct{ A any }{},
		struct{ T json.RawMessage }{}, [1][]int{}, struct{ C chan int }{}} {
		require.False(t, plainCopy(reflect.TypeOf(v)), "%T", v)
	}
}

// The state before a change, decoded with the state after it as like,
// is what decoding it alone gives, and shares no map, slice or pointer
// with it: Spec and Status are copied only when plainCopy allows. A quarter
// of the pairs under -race (see race.Sweep).
func TestDecodeLikeAgreesWithDecodingAlone(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 5))
	d := &metaDecoder{scratch: new(decodeScratch)}
	copied, pairs := 0, race.Sweep(500, 4)
	for range pairs {
		a, b := randomObject(rng), randomObject(rng)
		switch rng.IntN(3) {
		case 0:
			b.Spec = a.Spec
			copied++
		case 1:
			b.Status = a.Status
			copied++
		}
		after, err := json.Marshal(a)
		require.NoError(t, err)
		before, err := json.Marshal(b)
		require.NoError(t, err)
		checkLike[plainSpec, fastStatus](t, d, after, before)
		checkLike[fastSpec, fastStatus](t, d, after, before)
		checkLike[plainSpec, plainSpec](t, d, after, before)
	}
	require.Greater(t, copied, pairs*2/5, "two pairs in three share a Spec or a Status")
}

func checkLike[S, T any](t *testing.T, d *metaDecoder, after, before []byte) {
	t.Helper()
	cp := copiesOf[S, T]()
	from, err := decodeObject[S, T](kv.KeyValue{Key: "k", Value: after}, d, nil, cp)
	if err != nil {
		return // not an object of these types
	}
	got, err := decodeObject[S, T](kv.KeyValue{Key: "k", Value: before}, d, &from, cp)
	want, wantErr := decodeObject[S, T](kv.KeyValue{Key: "k", Value: before}, &metaDecoder{}, nil, copies{})
	require.Equal(t, wantErr, err)
	if err != nil {
		return
	}
	require.Equal(t, want.obj, got.obj)
	if !cp.spec {
		require.False(t, sharesMemory(from.obj.Spec, got.obj.Spec), "a spec of %T is not shared", from.obj.Spec)
	}
}

// sharesMemory reports whether two values of a type with maps hold the
// same map (the only references fastSpec has).
func sharesMemory[S any](a, b S) bool {
	fa, ok := any(a).(fastSpec)
	if !ok {
		return false
	}
	fb := any(b).(fastSpec)
	return fa.Env != nil && fb.Env != nil && reflect.ValueOf(fa.Env).UnsafePointer() == reflect.ValueOf(fb.Env).UnsafePointer()
}

// BenchmarkTypedEvent is a watch's decoding of one modification (a spec
// write: the state before and after it), with the unchanged Status decoded
// again (decode-both) and copied from the state after the change
// (copy-unchanged, what Watch does for a Status type that plainCopy
// allows).
//
//	go test -run '^$' -bench TypedEvent -benchmem ./store/
func BenchmarkTypedEvent(b *testing.B) {
	st, err := New[plainSpec, fastStatus](newMapBackend(), "App")
	require.NoError(b, err)
	obj := &Object[plainSpec, fastStatus]{
		Meta: Meta{Kind: "App", Name: "obj-1", UID: "92340a08-8151-43e1-92bf-0d4043a3ded0", Labels: map[string]string{"app": "web"},
			Managed:   []ManagedFields{{Manager: "user", Operation: "Update", Fields: "~TM_mqwcA"}},
			LastWrite: LastWrite{Manager: "user", Op: ownership.OpUpdate}, Generation: 2},
		Spec:   plainSpec{Image: "web:1", Replicas: 2},
		Status: fastStatus{Ready: 2, Message: "all replicas are ready"},
	}
	prev, err := json.Marshal(obj)
	require.NoError(b, err)
	obj.Spec.Replicas, obj.Meta.Generation = 3, 3
	next, err := json.Marshal(obj)
	require.NoError(b, err)
	ev := kv.Event{Type: kv.EventPut, Revision: 9, KV: kv.KeyValue{Key: st.keyOf("obj-1"), Value: next, ModRevision: 9},
		Prev: kv.KeyValue{Key: st.keyOf("obj-1"), Value: prev, ModRevision: 8}}
	for _, bc := range []struct {
		name     string
		cp       copies
		withPrev bool
	}{
		{"decode-both", copies{}, true},
		{"copy-unchanged", copiesOf[plainSpec, fastStatus](), true},
		{"without-prev", copiesOf[plainSpec, fastStatus](), false}, // store/cache's watch
	} {
		b.Run(bc.name, func(b *testing.B) {
			scratch := new(decodeScratch)
			b.ReportAllocs()
			for b.Loop() {
				tev := st.typedEvent(ev, scratch, bc.cp, bc.withPrev, nil)
				if tev.Type != Modified || tev.Object.Spec.Replicas != 3 || (tev.Prev != nil) != bc.withPrev {
					b.Fatal(tev)
				}
			}
		})
	}
}

// A watch's reused json.Decoder reads scalar Specs and Statuses (a number
// ends only at the end of its bytes) one after another as json.Unmarshal
// does, errors included.
func TestDecodeScratchReadsScalarsInTurn(t *testing.T) {
	scratch := new(decodeScratch)
	for _, value := range []string{
		`{"metadata":{"kind":"K","name":"a"},"spec":7,"status":"x"}`,
		`{"metadata":{"kind":"K","name":"a"},"spec":-0,"status":""}`,
		`{"metadata":{"kind":"K","name":"a"},"spec":1.5,"status":"x"}`, // not an int
		`{"metadata":{"kind":"K","name":"a"},"spec":12,"status":"\u00e9"}`,
		`{"metadata":{"kind":"K","name":"a"},"spec":"7","status":"x"}`, // not an int
		`{"metadata":{"kind":"K","name":"a"},"spec":3,"status":null}`,
	} {
		want := new(Object[int, string])
		wantErr := json.Unmarshal([]byte(value), &legacyObject[int, string]{Object: want, Legacy: &want.Meta})
		got, err := decodeObject[int, string](kv.KeyValue{Key: "K/a", Value: []byte(value)}, &metaDecoder{kind: "K", name: "a", scratch: scratch}, nil, copies{})
		if wantErr != nil {
			require.Error(t, err, value)
			continue
		}
		require.NoError(t, err, value)
		require.Equal(t, want, got.obj, value)
	}
}
