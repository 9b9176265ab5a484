package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/race"
	"github.com/steady-go/steady/store/kv"
)

// TestDecodeRememberedIsDecodeRaw checks that a write's decode of the
// value its Store remembers (decodeRemembered) gives what the general
// decode gives (decodeRaw), head and revision included, with its Spec and
// Status in the value itself, capped there; and that it leaves to
// decodeRaw every value it cannot read so: one of another kind or name,
// with a version or preserved fields, or not laid out as the store
// writes it.
func TestDecodeRememberedIsDecodeRaw(t *testing.T) {
	ctx := context.Background()
	b, st := newReadAsObjects(t)

	for _, name := range []string{"bare", "full", "escaped"} {
		stored, err := b.Get(ctx, st.keyOf(name))
		require.NoError(t, err)
		want, err := st.decodeRaw(stored, false)
		require.NoError(t, err)
		got, ok := st.decodeRemembered(name, stored.Value, stored.ModRevision, sidesAt{})
		require.True(t, ok, name)
		requireSameRaw(t, want, got)
		require.Equal(t, stored.ModRevision, got.Meta.Revision)
		if name != "escaped" { // a head is cut only from metadata read as written
			require.NotEmpty(t, got.head.text(), name)
		}
		require.Equal(t, string(want.head.text()), string(got.head.text()), name)
		for _, side := range [][]byte{got.Spec, got.Status} {
			require.True(t, inValue(side, stored.Value), "%s: a side of the value itself", name)
			require.Equal(t, len(side), cap(side), "%s: capped: no append writes into the value", name)
		}
	}

	stored, err := b.Get(ctx, st.keyOf("bare"))
	require.NoError(t, err)
	for _, c := range []struct{ why, name, value string }{
		{"another name", "other", string(stored.Value)},
		{"another kind", "bare", replaceOnce(stored.Value, `"kind":"Keep"`, `"kind":"Other"`)},
		{"a version", "bare", `{"version":"v1",` + string(stored.Value[1:])},
		{"preserved fields", "bare", string(stored.Value[:len(stored.Value)-1]) + `,"preserved":{}}`},
		{"not the store's layout", "bare", string(stored.Value[:len(stored.Value)-1]) + `,"extra":1}`},
		{"not JSON", "bare", string(stored.Value[:len(stored.Value)-1])},
	} {
		_, ok := st.decodeRemembered(c.name, []byte(c.value), stored.ModRevision, sidesAt{})
		require.False(t, ok, c.why)
		if c.why == "not the store's layout" {
			// What decodeRaw reads the general way.
			_, err := st.decodeRaw(kv.KeyValue{Key: st.keyOf(c.name), Value: []byte(c.value), ModRevision: 1}, false)
			require.NoError(t, err)
		}
	}
}

// inValue reports whether side lies within value's bytes.
func inValue(side, value []byte) bool {
	if len(side) == 0 {
		return false
	}
	p, v := uintptr(unsafe.Pointer(unsafe.SliceData(side))), uintptr(unsafe.Pointer(unsafe.SliceData(value)))
	return v <= p && p+uintptr(len(side)) <= v+uintptr(len(value))
}

// TestDecodeLaidOutIsDecodeRaw checks that a write's decode of a value
// whose Spec and Status the memory knows the places of (sidesAt, as a
// watch's decode of that value found them) gives what the general decode
// gives (decodeRaw), head included, for random values the store writes;
// and that a place one byte off either way, or a value not laid out as
// the store writes it around them, is left to decodeRaw.
func TestDecodeLaidOutIsDecodeRaw(t *testing.T) {
	st, err := New[fastSpec, fastStatus](newMapBackend(), "K")
	require.NoError(t, err)
	plans := sidePlansOf[fastSpec, fastStatus]()
	rng := rand.New(rand.NewPCG(59, 1))
	for i := range race.Sweep(2000, 8) {
		obj := randomObject(rng)
		obj.Meta.Kind, obj.Meta.Name = "K", "a"
		value, err := json.Marshal(obj)
		require.NoError(t, err)
		stored := kv.KeyValue{Key: st.keyOf("a"), Value: value, ModRevision: int64(i + 1)}
		want, err := st.decodeRaw(stored, false)
		require.NoError(t, err)
		// Where a watch's decode of the value finds its sides.
		from, err := decodeObject[fastSpec, fastStatus](stored, &metaDecoder{kind: "K", name: "a", plans: plans}, nil, copies{})
		require.NoError(t, err)
		at := sidesIn(&rawObject{Spec: from.spec, Status: from.status}, value)
		require.NotZero(t, at.specEnd, "%s", value)
		require.Equal(t, string(want.Spec), string(value[at.spec:at.specEnd]))

		got, ok := st.decodeRemembered("a", value, stored.ModRevision, at)
		require.True(t, ok, "%s", value)
		requireSameRaw(t, want, got)
		require.Equal(t, stored.ModRevision, got.Meta.Revision)
		require.Equal(t, string(want.head.text()), string(got.head.text()))
		for _, side := range [][]byte{got.Spec, got.Status} {
			require.True(t, inValue(side, value), "a side of the value itself")
			require.Equal(t, len(side), cap(side), "capped: no append writes into the value")
		}
		for _, off := range []sidesAt{
			{at.spec - 1, at.specEnd, at.statusEnd}, {at.spec + 1, at.specEnd, at.statusEnd},
			{at.spec, at.specEnd - 1, at.statusEnd}, {at.spec, at.specEnd + 1, at.statusEnd},
			{at.spec, at.specEnd, at.statusEnd - 1}, {at.spec, at.specEnd, at.statusEnd + 1},
		} {
			_, ok := st.decodeRemembered("a", value, stored.ModRevision, off)
			require.False(t, ok, "%+v of %+v in %s", off, at, value)
		}
	}

	// Values whose sides lie where at says, in another layout around them.
	value := []byte(`{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":1},"status":{"ready":1}}`)
	raw := new(rawObject)
	require.True(t, decodeRawShared(value, raw, &metaDecoder{}))
	at := sidesIn(raw, value)
	require.NotZero(t, at.specEnd)
	for _, c := range []struct{ why, value string }{
		{"preserved fields", `{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":1},"status":{"ready":1},"preserved":{}}`},
		{"a repeated spec", `{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":1},"status":{"ready":1},"spec":{}}`},
		{"conditions not a list", `{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":1},"status":{"ready":1},"conditions":{}}`},
		{"more after the end", `{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":1},"status":{"ready":1}}{}`},
		{"white space before the spec", `{"metadata":{"kind":"K","name":"a"} ,"spec":{"replicas":1},"status":{"ready":1}}`},
		{"another name", `{"metadata":{"kind":"K","name":"b"},"spec":{"replicas":1},"status":{"ready":1}}`},
		{"metadata that do not decode", `{"metadata":{"kind":"K","name":"a","uid":1},"spec":{"replicas":1},"status":{"ready":1}}`},
	} {
		_, ok := st.decodeRemembered("a", []byte(c.value), 1, at)
		require.False(t, ok, c.why)
	}
	// A versioned Store's values are its general decode's.
	_, ok := st.decodeRemembered("a", value, 1, at)
	require.True(t, ok)
	st.ver = &storeVersions{}
	_, ok = st.decodeRemembered("a", value, 1, at)
	require.False(t, ok, "a versioned Store")
}

// TestLastValuesKeepWhereADroppedReadsSidesLie checks that a value read
// decoded keeps where its Spec and Status lie (sidesAt) once the memory
// drops its decode, and only while it holds the very bytes they were
// found in: a read of the same revision in other bytes forgets them; a
// write's decode, whose sides are not its value's, gives none.
func TestLastValuesKeepWhereADroppedReadsSidesLie(t *testing.T) {
	l := newLastValues(1 << 30)
	value := []byte(`{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":1},"status":{"ready":1}}`)
	raw := new(rawObject)
	require.True(t, decodeRawShared(value, raw, &metaDecoder{}))
	drop := func() {
		for i := range maxDecodedReads {
			l.readDecoded(kv.KeyValue{Key: fmt.Sprint("k", i), Value: []byte("value"), ModRevision: 1}, &rawObject{})
		}
	}
	l.readDecoded(kv.KeyValue{Key: "a", Value: value, ModRevision: 1}, raw)
	e, _ := l.lookup("a", 1)
	require.NotNil(t, e.raw)
	require.Zero(t, e.at, "none while decoded")
	drop()
	e, _ = l.lookup("a", 1)
	require.Nil(t, e.raw, "dropped")
	require.Equal(t, `{"replicas":1}`, string(value[e.at.spec:e.at.specEnd]))
	require.Equal(t, `{"ready":1}`, string(value[e.at.specEnd+uint32(len(`,"status":`)):e.at.statusEnd]))

	// Sides found apart from each other, or not in the value, are not
	// placed.
	spaced := []byte(`{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":1}, "status":{"ready":1}}`)
	apart := new(rawObject)
	require.True(t, decodeRawShared(spaced, apart, &metaDecoder{}))
	require.Zero(t, sidesIn(apart, spaced), "white space between the sides")
	require.Zero(t, sidesIn(raw, spaced), "sides of another value")

	l.read(kv.KeyValue{Key: "a", Value: value, ModRevision: 1})
	e, _ = l.lookup("a", 1)
	require.NotZero(t, e.at.specEnd, "the same bytes read again")
	l.read(kv.KeyValue{Key: "a", Value: bytes.Clone(value), ModRevision: 1})
	e, _ = l.lookup("a", 1)
	require.Zero(t, e.at, "other bytes of the revision")

	// A write's decode shares its sides with the value it came from.
	next := []byte(`{"metadata":{"kind":"K","name":"a"},"spec":{"replicas":1},"status":{"ready":2}}`)
	l.wrote("a", 2, raw, &rawObject{Meta: raw.Meta, Spec: raw.Spec, Status: []byte(`{"ready":2}`)}, next, decodedSides{})
	for i := range maxDecoded {
		l.wrote(fmt.Sprint("w", i), 1, nil, &rawObject{}, []byte("value"), decodedSides{})
	}
	e, _ = l.lookup("a", 2)
	require.Nil(t, e.raw, "dropped")
	require.Zero(t, e.at, "a write's sides are not its value's")
}

// TestColdStatusApplyAgrees checks that a status apply to an object whose
// decoded read the memory dropped, keeping where its Spec and Status lie
// (sidesAt: the controller's status write flat out), gives what the same
// apply gives to a Store without a memory over the same stored values:
// the same result, the same error (a generation or UID the stored object
// does not have, a field another manager owns) and the same bytes stored,
// for random statuses, conditions and options.
func TestColdStatusApplyAgrees(t *testing.T) {
	ctx := t.Context()
	clk := WithClock(readAsClock{t: time.Date(2026, 12, 5, 5, 0, 0, 0, time.UTC)})
	on := newMapBackend()
	counted := &getCounter{mapBackend: on}
	st, err := New[fastSpec, fastStatus](counted, "K", clk)
	require.NoError(t, err)
	other, err := New[fastSpec, fastStatus](on, "K", WithLastValues(0), clk)
	require.NoError(t, err)
	const cold = 40
	names := make([]string, maxDecodedReads+cold)
	read := make([]*Object[fastSpec, fastStatus], len(names))
	for i := range names {
		names[i] = fmt.Sprintf("obj-%04d", i)
		_, err := other.As("user").Create(ctx, &Object[fastSpec, fastStatus]{Meta: Meta{Name: names[i], Labels: map[string]string{"app": "a"}}, Spec: fastSpec{Image: "web:1"}})
		require.NoError(t, err)
		var conds []Condition
		if i%3 == 0 {
			conds = []Condition{{Type: "Ready", Status: ConditionTrue}}
		}
		_, err = st.As([]string{"ctrl", "other-ctrl"}[i%2]).ApplyStatus(ctx, names[i], fastStatus{Ready: 1}, conds)
		require.NoError(t, err)
		o, err := other.Get(ctx, names[i])
		require.NoError(t, err)
		o.Spec.Replicas = 2 + i%3
		_, err = other.As("user").Update(ctx, o)
		require.NoError(t, err)
		read[i], err = st.Get(ctx, names[i])
		require.NoError(t, err)
	}
	off := newMapBackend()
	off.m, off.rev = maps.Clone(on.m), on.rev
	plain, err := New[fastSpec, fastStatus](off, "K", WithLastValues(0), clk)
	require.NoError(t, err)

	rng := rand.New(rand.NewPCG(59, 2))
	var changed, refused int
	for i := range cold {
		e, ok := st.last.latest(st.keyOf(names[i]))
		require.True(t, ok)
		require.Nil(t, e.raw, "%s: its decoded read dropped", names[i])
		require.NotZero(t, e.at.specEnd, "%s: where its sides lie kept", names[i])
		var status any = fastStatus{Ready: rng.IntN(3)}
		if rng.IntN(4) == 0 {
			status = map[string]any{"ready": rng.IntN(3), "message": "m"}
		}
		var conds []Condition
		if rng.IntN(3) == 0 {
			conds = []Condition{{Type: "Ready", Status: []ConditionStatus{ConditionTrue, ConditionFalse}[rng.IntN(2)]}}
		}
		var opts []WriteOption
		switch m := read[i].Meta; rng.IntN(5) {
		case 0:
			opts = append(opts, WithObserved(m))
		case 1:
			m.Generation-- // a spec the stored object moved past
			opts = append(opts, WithObserved(m))
		case 2:
			m.UID = "another"
			opts = append(opts, WithObserved(m))
		case 3:
			opts = append(opts, WithForce())
		}
		manager := []string{"ctrl", "other-ctrl"}[rng.IntN(2)]
		gets := counted.gets.Load()
		got, gotErr := st.As(manager).ApplyStatus(ctx, names[i], status, conds, opts...)
		if got.Changed {
			require.Equal(t, gets, counted.gets.Load(), "%s: a write from the memory reads nothing", names[i])
		}
		want, wantErr := plain.As(manager).ApplyStatus(ctx, names[i], status, conds, opts...)
		require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), names[i])
		require.Equal(t, want, got, names[i])
		require.Equal(t, string(off.m[st.keyOf(names[i])].Value), string(on.m[st.keyOf(names[i])].Value), names[i])
		if got.Changed {
			changed++
		}
		if gotErr != nil {
			refused++
		}
	}
	require.Greater(t, changed, cold/4, "applies that write")
	require.Greater(t, refused, cold/8, "applies refused")
}

// getCounter is a mapBackend that counts its Gets.
type getCounter struct {
	*mapBackend
	gets atomic.Int64
}

func (b *getCounter) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	b.gets.Add(1)
	return b.mapBackend.Get(ctx, key)
}
