package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
)

// rawForCompare is raw without the shape key a read may compute: a cache
// of the spec's shape, which codecOf computes again when it is missing.
func rawForCompare(raw *rawObject) rawObject {
	c := *raw
	c.shape = knownShape{}
	return c
}

// What a Store without the memory of values keeps of a Get (decodedGets)
// is, for every value, what the read of a write decodes from the same
// value (decodeRaw): values the Store wrote, with every part of the
// metadata, conditions and ownership records, and values written around
// it in other forms. A caller that modifies what Get returned changes
// nothing kept, and a write's read is served from it.
func TestDecodedGetsAreTheReadOfAWrite(t *testing.T) {
	ctx := context.Background()
	b := newMapBackend()
	st, err := New[keepSpec, keepStatus](b, "Keep", WithLastValues(0))
	require.NoError(t, err)
	require.NotNil(t, st.gets)
	managers := []string{"user", "ctrl", "scaler"}
	rng := rand.New(rand.NewPCG(26, 2))
	kept := 0
	for obj := range 12 {
		name := fmt.Sprintf("k%d", obj)
		_, err := st.As("user").Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: name}, Spec: keepSpec{Replicas: 1}})
		require.NoError(t, err)
		for step := range 30 {
			o, err := st.Get(ctx, name)
			require.NoError(t, err)
			key := st.prefix + name
			stored, err := b.Get(ctx, key)
			require.NoError(t, err)
			want, err := st.decodeRaw(stored, true)
			require.NoError(t, err)
			got := st.gets.lookup(stored)
			require.NotNil(t, got, "%s step %d: the Get's read is kept", name, step)
			kept++
			require.Equal(t, rawForCompare(want), rawForCompare(got), "%s step %d", name, step)
			raw, err := st.getRaw(ctx, name)
			require.NoError(t, err)
			require.Same(t, got, raw, "the write's read is served from the Get")

			// The caller owns what Get returned.
			o.Meta.Labels = map[string]string{"mine": "x"}
			if len(o.Meta.Managed) > 0 {
				o.Meta.Managed[0].Fields, o.Meta.Managed[0].Manager = "{}", "thief"
			}
			if len(o.Conditions) > 0 {
				o.Conditions[0].Reason = "Changed"
			}
			if len(o.Meta.Finalizers) > 0 {
				o.Meta.Finalizers[0] = "changed"
			}
			if len(o.Meta.Owners) > 0 {
				o.Meta.Owners[0].Name = "changed"
			}
			require.Equal(t, rawForCompare(want), rawForCompare(st.gets.lookup(stored)), "%s step %d: the caller's changes reach what was kept", name, step)

			w := st.As(managers[rng.IntN(len(managers))])
			o, err = st.Get(ctx, name) // afresh
			require.NoError(t, err)
			v := rng.IntN(4)
			switch rng.IntN(6) {
			case 0:
				o.Spec.Replicas = v
				o.Meta.Labels = map[string]string{"l": fmt.Sprint(v)}
				o.Meta.Annotations = map[string]string{"a": fmt.Sprint(step)}
				_, err = w.Update(ctx, o)
			case 1:
				o.Meta.Finalizers = []string{fmt.Sprint("example.com/f", v)}
				o.Meta.Owners = []OwnerRef{{Kind: "Keep", Name: "owner", UID: fmt.Sprint("u", v)}}
				_, err = w.Update(ctx, o)
			case 2:
				_, err = w.Apply(ctx, name, map[string]any{"image": fmt.Sprint("img", v)}, WithForce())
			case 3:
				o.Status.Ready = v
				_, err = w.UpdateStatus(ctx, o)
			case 4:
				_, err = w.ApplyStatus(ctx, name, map[string]any{"message": fmt.Sprint("m", v)},
					[]Condition{{Type: fmt.Sprint("C", v%2), Status: ConditionTrue, Reason: "R", Message: "m"}}, WithForce())
			case 5:
				o.Spec.Tags = append(o.Spec.Tags, fmt.Sprint("t", step))
				_, err = w.Update(ctx, o)
			}
			require.NoError(t, err)
		}
	}
	require.Positive(t, kept)

	// Values written around the Store: the legacy metadata key, another
	// order of the keys, and spaces.
	around := 0
	for i, value := range []string{
		`{"meta":{"kind":"Keep","name":"old","uid":"u1","generation":3,"labels":{"a":"b"}},"spec":{"replicas":2},"status":{"ready":1}}`,
		`{"status":{"ready":1}, "spec": {"replicas":2}, "metadata": {"name":"old","kind":"Keep","generation":2}, "conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-02T03:04:05Z"}]}`,
		`{"metadata":{"kind":"Keep","name":"old"},"spec":null,"status":null}`,
	} {
		stored := kv.KeyValue{Key: st.prefix + "old", Value: []byte(value), ModRevision: int64(1000 + i)}
		b.mu.Lock()
		b.m[stored.Key] = stored
		b.mu.Unlock()
		_, err := st.Get(ctx, "old")
		require.NoError(t, err)
		want, err := st.decodeRaw(stored, true)
		require.NoError(t, err)
		if got := st.gets.lookup(stored); got != nil {
			require.Equal(t, rawForCompare(want), rawForCompare(got), "value %d", i)
			around++
		}
	}
	require.Equal(t, 3, around, "each value written around the Store is kept")
}

// An entry serves only a read of its key, revision and bytes.
func TestDecodedGetsServeOnlyTheSameValue(t *testing.T) {
	g := &decodedGets{}
	require.Nil(t, (*decodedGets)(nil).lookup(kv.KeyValue{Key: "a", Value: []byte("v"), ModRevision: 1}))
	raw := &rawObject{}
	g.put(kv.KeyValue{Key: "a", Value: []byte("value"), ModRevision: 7}, raw)
	require.Same(t, raw, g.lookup(kv.KeyValue{Key: "a", Value: []byte("value"), ModRevision: 7}))
	require.Nil(t, g.lookup(kv.KeyValue{Key: "a", Value: []byte("value"), ModRevision: 8}), "another revision")
	require.Nil(t, g.lookup(kv.KeyValue{Key: "b", Value: []byte("value"), ModRevision: 7}), "another key")
	require.Nil(t, g.lookup(kv.KeyValue{Key: "a", Value: []byte("other"), ModRevision: 7}), "other bytes")
	require.Nil(t, g.lookup(kv.KeyValue{Key: "a", Value: []byte("val"), ModRevision: 7}), "a prefix of the bytes")

	g.put(kv.KeyValue{Key: "big", Value: make([]byte, maxDecodedGetBytes+1), ModRevision: 1}, raw)
	require.Nil(t, g.lookup(kv.KeyValue{Key: "big", Value: make([]byte, maxDecodedGetBytes+1), ModRevision: 1}), "too large to keep")
	for i := range maxDecodedGets {
		g.put(kv.KeyValue{Key: fmt.Sprint("k", i), Value: []byte("v"), ModRevision: 9}, &rawObject{})
	}
	require.Nil(t, g.lookup(kv.KeyValue{Key: "a", Value: []byte("value"), ModRevision: 7}), "the oldest entry gave way")
	require.NotNil(t, g.lookup(kv.KeyValue{Key: fmt.Sprint("k", maxDecodedGets-1), Value: []byte("v"), ModRevision: 9}))

	st, err := New[keepSpec, keepStatus](newMapBackend(), "Keep")
	require.NoError(t, err)
	require.Nil(t, st.gets, "with the memory of values, Get remembers there")
}
