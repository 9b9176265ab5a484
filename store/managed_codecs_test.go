package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store/kv"
)

// Two objects' metadata have the same shape key exactly when their
// spec-side metadata trees have the same shape (metaTree with shape), the
// trees a Codec is made from: label and annotation values do not count,
// which keys there are, and the owners and finalizers, do.
func TestMetaShapeKeyTellsShapesApart(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	metas := make([]Meta, 120)
	for i := range metas {
		metas[i] = randomObject(rng).Meta
	}
	metas = append(metas,
		Meta{Labels: map[string]string{`a"b`: ""}}, Meta{Labels: map[string]string{`a`: "", `b`: ""}},
		Meta{Labels: map[string]string{"a": ""}}, Meta{Annotations: map[string]string{"a": ""}},
		Meta{Finalizers: []string{"a"}}, Meta{Finalizers: []string{"a", "a"}},
		Meta{Owners: []OwnerRef{{Kind: "K", Name: "n"}}}, Meta{Owners: []OwnerRef{{Kind: "K", Name: "n", Controller: true}}},
		Meta{Owners: []OwnerRef{{Kind: "Kn"}}}, Meta{})
	keys := make([]string, len(metas))
	trees := make([]map[string]any, len(metas))
	for i := range metas {
		keys[i], trees[i] = string(appendMetaShape(nil, &metas[i])), metaTree(&metas[i], true)
	}
	same, differ := 0, 0
	for i := range metas {
		for j := range metas {
			shapesEqual := reflect.DeepEqual(trees[i], trees[j])
			require.Equalf(t, shapesEqual, keys[i] == keys[j], "metadata %+v and %+v: keys %q and %q", metas[i], metas[j], keys[i], keys[j])
			if i != j && shapesEqual {
				same++
			} else if !shapesEqual {
				differ++
			}
		}
	}
	require.Positive(t, same, "some distinct metadata share a shape")
	require.Positive(t, differ)
}

// Two objects' status sides have the same shape key exactly when Codecs
// of their trees are alike (the same shape hash): the conditions' types and
// which of their fields are set count, their values (messages, times,
// generations) do not, so one Codec and one converted record serve a
// condition's every update.
func TestStatusShapeKeyIgnoresConditionValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 11))
	sc, err := newSchemas[keepSpec, keepStatus]()
	require.NoError(t, err)
	pick := func(vs ...string) string { return vs[rng.IntN(len(vs))] }
	raws := make([]*rawObject, 150)
	for i := range raws {
		raw := &rawObject{Status: []byte(pick(`{"ready":1}`, `{"ready":2}`, `{"ready":1,"message":"m"}`))}
		for range rng.IntN(3) {
			c := Condition{Type: pick("Ready", "Synced", ""), Status: ConditionStatus(pick("True", "False")),
				Reason: pick("", "Done"), Message: pick("", "one", "two"),
				LastTransitionTime: time.Unix(rng.Int64N(3), 0).UTC(), ObservedGeneration: rng.Int64N(3)}
			raw.Conditions = append(raw.Conditions, c)
		}
		raws[i] = raw
	}
	everything, err := ownership.DecodeSet("status")
	require.NoError(t, err)
	keys, hashes := make([]string, len(raws)), make([]string, len(raws))
	for i, raw := range raws {
		k, ok := sideShapeKey(nil, raw, statusSide)
		require.True(t, ok)
		keys[i] = string(k)
		tree, err := sideTreeOf(raw, statusSide, true)
		require.NoError(t, err)
		hashes[i] = ownership.NewCodec(tree, sc.status).Encode(everything)[:7] // "~" and the shape hash
	}
	same, differ := 0, 0
	for i := range raws {
		for j := range raws {
			if keys[i] == keys[j] {
				require.Equalf(t, hashes[i], hashes[j], "status %s %+v and %s %+v share a key but not a Codec", raws[i].Status, raws[i].Conditions, raws[j].Status, raws[j].Conditions)
				if !reflect.DeepEqual(raws[i].Conditions, raws[j].Conditions) {
					same++
				}
			} else if hashes[i] != hashes[j] {
				differ++
			}
		}
	}
	require.Positive(t, differ)
	require.Positive(t, same, "conditions that differ in values only share a key")
}

// statusCodecs counts the status-side Codecs st remembers.
func statusCodecs[S, T any](st *Store[S, T]) int {
	st.schemas.codecs.mu.Lock()
	defer st.schemas.codecs.mu.Unlock()
	n := 0
	for k := range st.schemas.codecs.codecs {
		if k[0] == 's' {
			n++
		}
	}
	return n
}

// requireFreshRecord checks that every entry of name's stored record is
// what a Codec of the stored object's own tree encodes: a record written
// through a remembered Codec of another shape would not be.
func requireFreshRecord[S, T any](t *testing.T, st *Store[S, T], name string) {
	t.Helper()
	raw, err := st.getRaw(context.Background(), name, nil)
	require.NoError(t, err)
	for _, side := range []string{specSide, statusSide} {
		tree, err := sideTree(raw, side)
		require.NoError(t, err)
		fresh := ownership.NewCodec(tree, st.schemas.of(side))
		for _, e := range raw.Meta.Managed {
			if e.Subresource != side {
				continue
			}
			set, ok := fresh.DecodeNodes(e.Fields)
			require.True(t, ok, "%s %s: %q decodes to the object's own nodes", side, e.Manager, e.Fields)
			require.Equal(t, e.Fields, fresh.Encode(set), "%s %s", side, e.Manager)
		}
	}
}

// A controller's status writes to objects of one status shape use one
// Codec, remembered by shape, for the record they decode and the one they
// write; and every record written, through remembered Codecs and across
// changes of shape (conditions added, spec map keys that differ from
// object to object), is the one a Codec of the object's own tree writes.
func TestWritesRememberCodecsByShape(t *testing.T) {
	ctx := context.Background()
	st, err := New[keepSpec, keepStatus](newMapBackend(), "Keep")
	require.NoError(t, err)
	const n = 4
	for i := range n {
		name := fmt.Sprint("k", i)
		env := map[string]string{}
		for j := range i + 1 {
			env[fmt.Sprint("E", j)] = "v"
		}
		_, err := st.As("user").Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: name}, Spec: keepSpec{Image: "i", Env: env}})
		require.NoError(t, err)
		for r := range 2 {
			_, err = st.As("ctrl").ApplyStatus(ctx, name, map[string]any{"ready": r + 1}, nil)
			require.NoError(t, err)
			requireFreshRecord(t, st, name)
			_, err = st.As("applier").Apply(ctx, name, map[string]any{"replicas": r + 1, "env": map[string]any{"A": fmt.Sprint(r)}}, WithForce())
			require.NoError(t, err)
			requireFreshRecord(t, st, name)
		}
	}
	require.Equal(t, 1, statusCodecs(st), "objects of one status shape share one Codec")
	for i := range n {
		name := fmt.Sprint("k", i)
		_, err = st.As("ctrl").ApplyStatus(ctx, name, map[string]any{"ready": 9}, []Condition{{Type: "Ready", Status: "True", Reason: "Done"}})
		require.NoError(t, err)
		requireFreshRecord(t, st, name)
		_, err = st.As("other").ApplyStatus(ctx, name, map[string]any{"message": "m"}, nil)
		require.NoError(t, err)
		requireFreshRecord(t, st, name)
		o, err := st.Get(ctx, name)
		require.NoError(t, err)
		o.Spec.Env["B"] = "new key"
		o.Status.Message = "by update"
		_, err = st.As("user").Update(ctx, o)
		require.NoError(t, err)
		requireFreshRecord(t, st, name)
	}
}

// A converted read takes the spec's shape key from the pass that decodes
// the value (metaDecoder.specShape) rather than reading the spec again:
// the key is the one sideShapeKey reads, with or without scratch space,
// and there is none when no spec-side record is relative to the value.
func TestDecodeReadsTheSpecShapeKeySideShapeKeyReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 4))
	scratch := &decodeScratch{}
	for range 200 {
		obj := randomObject(rng)
		relative := rng.IntN(4) > 0
		if relative {
			obj.Meta.Managed = append(obj.Meta.Managed, ManagedFields{Manager: "m", Fields: "~AAAAAA"})
		}
		if rng.IntN(2) == 0 {
			obj.Spec.Ports = []int{rng.IntN(3), 8080}
		}
		value, err := json.Marshal(obj)
		require.NoError(t, err)
		for _, sc := range []*decodeScratch{nil, scratch} {
			var raw rawObject
			d := &metaDecoder{kind: obj.Meta.Kind, name: obj.Meta.Name, scratch: sc, specShape: true}
			require.True(t, decodeRawShared(value, &raw, d), "%s", value)
			want, ok := sideShapeKey([]byte("x"), &raw, specSide)
			require.True(t, ok)
			if !relative && !hasRelative(obj.Meta.Managed, specSide) {
				require.Nil(t, d.specKey)
				continue
			}
			require.NotNil(t, d.specKey, "%s", value)
			require.Equal(t, string(want), string(specShapeKey([]byte("x"), d.specKey, &raw.Meta)))
		}
	}
}

// The read of a write (Store.getRaw) keeps the spec's shape key it read
// while slicing the spec, for the write's Codec (codecOf): it is the key
// sideShapeKey reads, and it holds for those bytes only. A copy of the
// object with another Spec (the next value of an Update or an Apply), even
// one that spells the same text, has no key, so that no Codec is looked up
// by the shape of a spec that is not there.
func TestWriteReadKeepsTheSpecShapeKeyOfItsSpecOnly(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 1))
	for range 200 {
		obj := randomObject(rng)
		obj.Meta.Managed = append(obj.Meta.Managed, ManagedFields{Manager: "m", Fields: "~AAAAAA"})
		if rng.IntN(2) == 0 {
			obj.Spec.Ports = []int{rng.IntN(3), 8080}
		}
		value, err := json.Marshal(obj)
		require.NoError(t, err)
		d := &metaDecoder{kind: obj.Meta.Kind, name: obj.Meta.Name, scratch: &decodeScratch{}, specShape: true}
		raw, err := decodeRaw(kv.KeyValue{Key: "k", Value: value, ModRevision: 1}, d)
		require.NoError(t, err)
		want, ok := sideShapeKey(nil, raw, specSide)
		require.True(t, ok)
		require.NotNil(t, raw.specKey(), "%s", value)
		require.Equal(t, string(want), string(specShapeKey(nil, raw.specKey(), &raw.Meta)))

		kept := *raw // a status write's next value: the same Spec
		require.Equal(t, string(want), string(specShapeKey(nil, kept.specKey(), &kept.Meta)))
		for _, spec := range [][]byte{[]byte(`{"other":{"shape":1}}`), bytes.Clone(raw.Spec), raw.Spec[:len(raw.Spec)-1]} {
			next := *raw
			next.Spec = spec
			require.Nil(t, next.specKey(), "the key of %s for %s", raw.Spec, spec)
		}
	}
}

// A controller's status writes whose conditions differ only in values
// (a message with a count in it, a transition time) use one status Codec:
// a Codec depends on which conditions there are and which of their fields,
// not on what the fields say. Conditions of other types, in another order
// or with other fields present get Codecs of their own, and every record
// written is the one a Codec of the object's own tree writes.
func TestStatusCodecIgnoresConditionValues(t *testing.T) {
	ctx := context.Background()
	st, err := New[keepSpec, keepStatus](newMapBackend(), "Keep")
	require.NoError(t, err)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	write := func(i int, conds []Condition) {
		t.Helper()
		name := fmt.Sprint("k", i)
		_, err := st.As("user").Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: name}, Spec: keepSpec{Image: "i"}})
		require.NoError(t, err)
		_, err = st.As("ctrl").ApplyStatus(ctx, name, map[string]any{"ready": i}, conds)
		require.NoError(t, err)
		requireFreshRecord(t, st, name)
	}
	for i := range 20 {
		write(i, []Condition{
			{Type: "Ready", Status: "False", Reason: "Progressing", Message: fmt.Sprintf("%d/5 running", i%6),
				LastTransitionTime: at.Add(time.Duration(i) * 1234567 * time.Nanosecond), ObservedGeneration: int64(1 + i%3)},
			{Type: "Reconciling", Status: "True", Reason: "NewGeneration", LastTransitionTime: at.Add(time.Duration(i) * time.Second)},
		})
	}
	require.Equal(t, 1, statusCodecs(st), "conditions that differ in values only share a Codec")
	shapes := [][]Condition{
		{{Type: "Reconciling", Status: "True", Reason: "NewGeneration"}, {Type: "Ready", Status: "False", Reason: "Progressing", Message: "m", ObservedGeneration: 1}},
		{{Type: "Ready", Status: "False", Reason: "Progressing", ObservedGeneration: 1}, {Type: "Reconciling", Status: "True", Reason: "NewGeneration"}},
		{{Type: "Ready", Status: "False", Reason: "Progressing", Message: "m"}, {Type: "Reconciling", Status: "True", Reason: "NewGeneration"}},
		{{Type: "Ready", Status: "False", Message: "m", ObservedGeneration: 1}, {Type: "Reconciling", Status: "True", Reason: "NewGeneration"}},
		{{Type: "Ready", Status: "False", Reason: "Progressing", Message: "m", ObservedGeneration: 1}, {Type: "Stalled", Status: "True", Reason: "NewGeneration"}},
		{{Type: "Ready", Status: "False", Reason: "Progressing", Message: "m", ObservedGeneration: 1}},
	}
	for i, conds := range shapes {
		write(100+i, conds)
		require.Equal(t, 2+i, statusCodecs(st), "shape %d: %+v has a Codec of its own", i, conds)
	}
}

// sideCodec, which reads a side's Codec from its JSON text, gives the
// Codec of the side's tree (the same shape hash and bits), for metadata,
// owners, finalizers and conditions of every kind of string, and fails
// where the tree does.
func TestSideCodecIsTheCodecOfTheSideTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 4))
	sc, err := newSchemas[fastSpec, fastStatus]()
	require.NoError(t, err)
	var raws []*rawObject
	for range 300 {
		obj := randomObject(rng)
		spec, err := json.Marshal(obj.Spec)
		require.NoError(t, err)
		status, err := json.Marshal(obj.Status)
		require.NoError(t, err)
		raws = append(raws, &rawObject{Meta: obj.Meta, Spec: spec, Status: status, Conditions: obj.Conditions})
	}
	raws = append(raws,
		&rawObject{Meta: Meta{Labels: map[string]string{`a"b`: "", "\x7f": "", "é": ""}}},
		&rawObject{Meta: Meta{Finalizers: []string{"b", "a", "b"}}, Spec: []byte(`{"env":{"k\u00e9y":""}}`)},
		&rawObject{Spec: []byte(`{"image":1e999}`)},
		&rawObject{Conditions: []Condition{{Type: "\xff"}, {Type: "Ready", LastTransitionTime: time.Unix(1, 0)}}},
		&rawObject{Conditions: []Condition{{Type: "Ready", LastTransitionTime: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}},
		&rawObject{Status: []byte(`{"ready":`)})
	everything, err := ownership.DecodeSet("metadata,spec,status,conditions")
	require.NoError(t, err)
	read := 0
	for _, raw := range raws {
		for _, side := range []string{specSide, statusSide} {
			tree, treeErr := sideTreeOf(raw, side, true)
			c, err := sideCodec(raw, side, sc.of(side))
			if treeErr != nil {
				require.Error(t, err, "%s side of %+v", side, raw)
				continue
			}
			require.NoError(t, err, "%s side of %+v", side, raw)
			require.Equal(t, ownership.NewCodec(tree, sc.of(side)).Encode(everything), c.Encode(everything), "%s side of %+v", side, raw)
			doc := appendSpecDoc
			if side == statusSide {
				doc = appendStatusDoc
			}
			if _, ok := doc(nil, raw); ok {
				read++
			}
		}
	}
	require.Greater(t, read, len(raws)/3, "sides are read from their text")
}
