package store

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/jsonscan"
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
	return obj, json.Unmarshal(value, &legacyObject[fastSpec, fastStatus]{obj, &obj.Meta})
}

// decodeObjectFast gives what encoding/json gives, or defers to it, with
// and without scratch space (kept from one input to the next).
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
	scratch := new(decodeScratch)
	f.Fuzz(func(t *testing.T, value []byte) {
		for _, d := range []*metaDecoder{{}, {kind: "K", name: "a", scratch: scratch}} {
			fast := new(Object[fastSpec, fastStatus])
			if !decodeObjectFast(value, fast, d) {
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
// whose strings repeat (label values, managers, an object's old and new UID).
func TestDecodeObjectFastAgreesWithEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 3))
	scratch := new(decodeScratch)
	for i := range 2000 {
		obj := randomObject(rng)
		value, err := json.Marshal(obj)
		require.NoError(t, err)
		want, err := decodeObjectJSON(value)
		require.NoError(t, err)
		for _, d := range []*metaDecoder{{}, {kind: obj.Meta.Kind, name: obj.Meta.Name, scratch: scratch}} {
			got := new(Object[fastSpec, fastStatus])
			require.True(t, decodeObjectFast(value, got, d), "object %d takes the fast way: %s", i, value)
			require.Equal(t, want, got, "object %d: %s", i, value)
		}
		var raw, rawWant rawObject
		require.True(t, decodeRawFast(value, &raw, &metaDecoder{scratch: scratch}))
		require.NoError(t, decodeRawJSON(value, &rawWant))
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
	got, err := decodeObject[fastSpec, fastStatus](KV{Key: "k", Value: []byte(`{"metadata":{"Kind":"K","labels":null},"spec":{"replicas":2}}`), ModRevision: 7}, &metaDecoder{})
	require.NoError(t, err)
	require.Equal(t, &Object[fastSpec, fastStatus]{Meta: Meta{Kind: "K", Revision: 7}, Spec: fastSpec{Replicas: 2}}, got)
}

// The strings a scratch space shares are equal to what they stand for, and
// are not reallocated when they repeat.
func TestDecodeScratchSharesRepeatedStrings(t *testing.T) {
	obj := &Object[fastSpec, fastStatus]{Meta: Meta{Kind: "Kind", Name: "n", UID: "0123456789-0123456789-0123456789-0123456789",
		Labels: map[string]string{"app": "web"}, LastWrite: LastWrite{Manager: "user", Op: OpUpdate}}}
	value, err := json.Marshal(obj)
	require.NoError(t, err)
	scratch := new(decodeScratch)
	d := &metaDecoder{kind: "Kind", name: "n", scratch: scratch}
	first, err := decodeObject[fastSpec, fastStatus](KV{Key: "k", Value: value}, d)
	require.NoError(t, err)
	var again *Object[fastSpec, fastStatus]
	allocs := testing.AllocsPerRun(100, func() {
		again, err = decodeObject[fastSpec, fastStatus](KV{Key: "k", Value: value}, d)
	})
	require.NoError(t, err)
	require.Equal(t, first, again)
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
		LastWrite:         LastWrite{Manager: w(), Op: Op(w()), Trace: w()},
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
			LastWrite: LastWrite{Manager: "user", Op: OpUpdate}, Generation: 2},
		Spec: fastSpec{Image: "web:1", Replicas: 2},
	}
	value, err := json.Marshal(obj)
	require.NoError(b, err)
	kv := KV{Key: "App/obj-1", Value: value, ModRevision: 7}
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
