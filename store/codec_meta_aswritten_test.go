package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/jsonscan"
	"github.com/steady-go/steady/internal/race"
	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store/kv"
)

// randomMeta returns metadata with each field set or left out at random,
// strings drawn from a small set so that they repeat: plain ASCII when
// plain (what metaAsWritten reads), else with escapes, UTF-8 and invalid
// UTF-8 among them.
func randomMeta(rng *rand.Rand, plain bool) Meta {
	words := []string{"", "a", "web", "user", "app-controller", "Update", "Apply", "status", "~M4qSfwfg", "~Dha_owBA",
		"0786044a-cc99-43e9-8d3c-81e0ae48fb9c", "example.com/owner", "del\x7f"}
	if !plain {
		words = append(words, "ä-ü", `q"uote`, "new\nline", "<html>&", "\u2028", `back\slash`, "bad\xffutf8")
	}
	w := func() string { return words[rng.IntN(len(words))] }
	strMap := func() map[string]string {
		if rng.IntN(3) == 0 {
			return nil
		}
		m := map[string]string{}
		for range 1 + rng.IntN(4) {
			m[w()] = w()
		}
		return m
	}
	m := Meta{Kind: w(), Name: w(), UID: w(), Labels: strMap(), Annotations: strMap(), DeletionRequested: rng.IntN(4) == 0,
		LastWrite:  LastWrite{Manager: w(), Op: ownership.Operation(w())},
		Generation: rng.Int64N(1<<62) - 1<<61}
	if rng.IntN(3) == 0 {
		m.LastWrite.Trace = w()
	}
	if rng.IntN(2) == 0 {
		m.StatusGeneration = rng.Int64N(1 << 40)
	}
	for range rng.IntN(3) {
		m.Owners = append(m.Owners, OwnerRef{Kind: w(), Name: w(), UID: w(), Controller: rng.IntN(2) == 0})
	}
	for range rng.IntN(3) {
		m.Finalizers = append(m.Finalizers, w())
	}
	for range rng.IntN(4) {
		m.Managed = append(m.Managed, ManagedFields{Manager: w(), Operation: w(), Subresource: w(), Fields: w()})
	}
	return m
}

// nearby returns m changed as writes change metadata: a new generation
// and last write, a record added, dropped or changed, a label changed, or
// nothing; m itself is left as it is.
func nearby(rng *rand.Rand, m Meta) Meta {
	n := m.clone()
	for range rng.IntN(4) {
		switch rng.IntN(6) {
		case 0:
			n.Generation++
			n.LastWrite = LastWrite{Manager: "user", Op: ownership.OpUpdate}
		case 1:
			n.Managed = append(n.Managed, ManagedFields{Manager: "m", Operation: "Apply", Fields: "~x"})
		case 2:
			if len(n.Managed) > 0 {
				n.Managed = n.Managed[1:]
			}
		case 3:
			if len(n.Managed) > 0 {
				n.Managed[len(n.Managed)-1].Fields += "y"
			}
		case 4:
			n.Labels = map[string]string{"app": []string{"web", "db"}[rng.IntN(2)]}
		case 5:
			n.Owners, n.Finalizers = nil, []string{"f"}
		}
	}
	return n
}

// edited returns text changed in one of the ways a value already in a
// store may be bad, or written by another encoder: a byte dropped,
// changed or doubled, white space, a member twice, a null, an escape, a
// number out of range.
func edited(rng *rand.Rand, text []byte) []byte {
	s := string(text)
	i := rng.IntN(len(s))
	switch rng.IntN(8) {
	case 0:
		return []byte(s[:i] + s[i+1:])
	case 1:
		const bytes = "\"{}[],:0-a\\ x\x00"
		return []byte(s[:i] + bytes[rng.IntN(len(bytes)):][:1] + s[i+1:])
	case 2:
		return []byte(s[:i] + s[i:i+1] + s[i:])
	case 3:
		return []byte(s[:i] + " " + s[i:])
	case 4:
		return []byte(strings.Replace(s, `{"kind":`, `{"generation":7,"kind":`, 1))
	case 5:
		return []byte(strings.Replace(s, `"managed":[`, `"managed":null,"x":[`, 1))
	case 6:
		return []byte(strings.Replace(s, `"manager":"`, `"manager":"\u0041`, 1))
	}
	return []byte(strings.Replace(s, `"generation":`, `"generation":99999999999999999999`, 1))
}

// encodings returns m as the store writes it (appendMeta, when it does)
// and as encoding/json writes it.
func encodings(t *testing.T, m *Meta) [][]byte {
	t.Helper()
	out := [][]byte{}
	if b, ok := appendMeta(nil, m); ok {
		out = append(out, b)
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return append(out, b)
}

// decodeMetaOver decodes the metadata text as a watch does over an object
// held with metadata held (nil: none), whose value's bytes are not known.
func decodeMetaOver(text []byte, held *Meta, scratch *decodeScratch) (m Meta, ok bool) {
	d := &metaDecoder{kind: "App", name: "a", scratch: scratch, r: jsonscan.NewReader(text)}
	if held != nil {
		scratch.base.set(nil, text, held, nil, copies{})
		d.base = &scratch.base
	}
	ok = d.meta(&m) && d.r.End()
	scratch.base = baseValue{}
	return m, ok
}

// requireMetaAsDecoded holds decoding text over held to encoding/json's
// decoding of it alone: what meta accepts, encoding/json accepts, and
// both give the same Meta.
func requireMetaAsDecoded(t *testing.T, text []byte, held *Meta, scratch *decodeScratch) (Meta, bool) {
	t.Helper()
	got, ok := decodeMetaOver(text, held, scratch)
	if !ok {
		return got, false
	}
	var want Meta
	require.NoError(t, json.Unmarshal(text, &want), "accepted what encoding/json rejects: %s", text)
	require.Equal(t, want, got, "%s\nover %+v", text, held)
	return got, true
}

// The metadata decoded over a held object's are what decoding them alone
// gives, for metadata as the store and as encoding/json write them, near
// the held ones or not, plain or not, and for the same texts spoiled or
// spelled otherwise (what meta does not accept, the caller decodes with
// encoding/json); the store's own spelling of plain metadata takes the
// way without a call per member. An eighth of the cases under -race.
func TestMetaAsWrittenAgreesWithDecoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 7))
	scratch := new(decodeScratch)
	for range race.Sweep(4000, 8) {
		plain := rng.IntN(4) > 0
		m := randomMeta(rng, plain)
		var held *Meta
		switch rng.IntN(4) {
		case 1:
			h := nearby(rng, m)
			held = &h
		case 2:
			h := randomMeta(rng, rng.IntN(2) == 0)
			held = &h
		case 3:
			h := m.clone()
			held = &h
		}
		for i, text := range encodings(t, &m) {
			_, ok := requireMetaAsDecoded(t, text, held, scratch)
			require.True(t, ok || !plain, "%s", text) // a key with escapes is encoding/json's
			if plain && i == 0 {
				d := &metaDecoder{scratch: scratch, r: jsonscan.NewReader(text)}
				require.True(t, d.metaAsWritten(new(Meta), held), "as the store writes them: %s", text)
			}
			for range 3 {
				requireMetaAsDecoded(t, edited(rng, text), held, scratch)
			}
		}
	}
}

// FuzzMetaAsWritten: whatever the text and the held metadata, what meta
// accepts is what encoding/json decodes.
func FuzzMetaAsWritten(f *testing.F) {
	rng := rand.New(rand.NewPCG(26, 8))
	for range 20 {
		m := randomMeta(rng, rng.IntN(2) == 0)
		h := nearby(rng, m)
		b, _ := appendMeta(nil, &m)
		hb, _ := appendMeta(nil, &h)
		f.Add(b, hb)
	}
	scratch := new(decodeScratch)
	f.Fuzz(func(t *testing.T, text, heldText []byte) {
		var held Meta
		if json.Unmarshal(heldText, &held) != nil {
			requireMetaAsDecoded(t, text, nil, scratch)
			return
		}
		requireMetaAsDecoded(t, text, &held, scratch)
	})
}

// What is the same as the held metadata is the held one's, memory
// shared; what is not, and everything without a held object, owns its
// memory: no decoded string is a view of the bytes it was decoded from,
// which the Backend may reuse.
func TestMetaAsWrittenSharesOnlyTheHeldObject(t *testing.T) {
	held := Meta{Kind: "App", Name: "a", UID: "u-1", Labels: map[string]string{"app": "web"},
		Owners:     []OwnerRef{{Kind: "Set", Name: "s", UID: "u-0", Controller: true}},
		Finalizers: []string{"example.com/f"},
		Managed:    []ManagedFields{{Manager: "user", Operation: "Update", Fields: "~M4qSfwfg"}, {Manager: "app-controller", Operation: "Apply", Subresource: "status", Fields: "~Dha_owBA"}},
		LastWrite:  LastWrite{Manager: "app-controller", Op: ownership.OpApplyStatus}, Generation: 2, StatusGeneration: 1}
	next := held.clone()
	next.LastWrite, next.Generation = LastWrite{Manager: "user", Op: ownership.OpUpdate}, 3
	text, ok := appendMeta(nil, &next)
	require.True(t, ok)

	scratch := new(decodeScratch)
	got, ok := requireMetaAsDecoded(t, text, &held, scratch)
	require.True(t, ok)
	require.Same(t, &held.Managed[0], &got.Managed[0], "the records")
	require.Same(t, &held.Owners[0], &got.Owners[0], "the owners")
	require.Same(t, &held.Finalizers[0], &got.Finalizers[0], "the finalizers")
	require.True(t, sameMap(held.Labels, got.Labels), "the labels")

	// One record changed: a new list, the unchanged record's strings
	// still the held ones'.
	next.Managed = []ManagedFields{next.Managed[0], {Manager: "app-controller", Operation: "Apply", Subresource: "status", Fields: "~Other"}}
	text, _ = appendMeta(nil, &next)
	got, ok = requireMetaAsDecoded(t, text, &held, scratch)
	require.True(t, ok)
	require.NotSame(t, &held.Managed[0], &got.Managed[0])
	require.Same(t, unsafe.StringData(held.Managed[0].Fields), unsafe.StringData(got.Managed[0].Fields))

	for _, over := range []*Meta{nil, &held} {
		for _, fresh := range []*decodeScratch{new(decodeScratch), scratch} {
			buf := append([]byte(nil), text...)
			got, ok := decodeMetaOver(buf, over, fresh)
			require.True(t, ok)
			want := got.clone()
			want.Managed = deepManaged(got.Managed)
			for i := range buf {
				buf[i] = 'x'
			}
			require.Equal(t, want, got, "a decoded string is a view of the bytes")
			require.Equal(t, "~Other", got.Managed[1].Fields)
		}
	}
}

// deepManaged copies records and their strings' bytes.
func deepManaged(in []ManagedFields) []ManagedFields {
	out := make([]ManagedFields, len(in))
	for i, f := range in {
		out[i] = ManagedFields{Manager: strings.Clone(f.Manager), Operation: strings.Clone(f.Operation), Subresource: strings.Clone(f.Subresource), Fields: strings.Clone(f.Fields)}
	}
	return out
}

// A watch whose Store remembers no value (as at a million objects, past
// its memory) still decodes each write's metadata over the object held for
// the value before it, and each event's object is what its value decodes
// to alone; a bad value in the store is that event's clear error, and the
// writes after it decode as ever.
func TestWatchDecodesMetaOverHeldWithoutRememberedValues(t *testing.T) {
	st, err := New[fastSpec, fastStatus](newMapBackend(), "App", WithLastValues(0))
	require.NoError(t, err)
	key := st.keyOf("a")
	held := map[int64]*Object[fastSpec, fastStatus]{}
	decode := st.decoder(false, nil, st.heldObjects(func(name string, rev int64) *Object[fastSpec, fastStatus] {
		return held[rev]
	}))
	rng := rand.New(rand.NewPCG(26, 9))
	m := randomMeta(rng, true)
	m.Kind, m.Name = "App", "a"
	var prev []byte
	shared, bad := 0, 0
	for rev := int64(1); rev <= int64(race.Sweep(600, 4)); rev++ {
		m = nearby(rng, m)
		obj := &Object[fastSpec, fastStatus]{Meta: m, Spec: fastSpec{Replicas: int(rev)}}
		value, err := json.Marshal(obj)
		require.NoError(t, err)
		if rng.IntN(8) == 0 {
			value = edited(rng, value)
		}
		ev := decode(kv.Event{Type: kv.EventPut, Revision: rev, KV: kv.KeyValue{Key: key, Value: value, ModRevision: rev},
			Prev: kv.KeyValue{Key: key, Value: prev, ModRevision: rev - 1}})
		prev = value
		want, wantErr := st.decode(kv.KeyValue{Key: key, Value: value, ModRevision: rev})
		if wantErr != nil {
			bad++
			var de *DecodeError
			require.True(t, errors.As(ev.Undecodable, &de), "%s", value)
			require.Equal(t, wantErr, ev.Undecodable)
			require.Contains(t, ev.Undecodable.Error(), fmt.Sprintf(`App "a" at revision %d does not decode`, rev))
			continue
		}
		require.Nil(t, ev.Undecodable, "%s", value)
		require.Equal(t, want, ev.Object, "%s", value)
		if h := held[rev-1]; h != nil && len(h.Meta.Managed) > 0 && len(ev.Object.Meta.Managed) > 0 && &h.Meta.Managed[0] == &ev.Object.Meta.Managed[0] {
			shared++
		}
		held[rev] = ev.Object
	}
	require.Positive(t, bad, "some values are bad")
	require.Positive(t, shared, "some records are the held object's")
}

// Texts near the store's spelling, over held metadata they resemble: what
// meta accepts is what encoding/json decodes, and the held object's parts
// are taken only where they are the same.
func TestMetaAsWrittenEdgeCases(t *testing.T) {
	held := Meta{Kind: "App", Name: "a", UID: "u", Labels: map[string]string{"a": "1", "b": "2"},
		Owners:     []OwnerRef{{Kind: "K", Name: "o", UID: "u0", Controller: true}},
		Finalizers: []string{"f", "g"},
		Managed:    []ManagedFields{{Manager: "m", Operation: "Update", Fields: "~x"}, {Manager: "n", Operation: "Apply", Subresource: "status", Fields: "~y"}},
		LastWrite:  LastWrite{Manager: "m", Op: "Update"}, Generation: 1}
	const head, tail = `{"kind":"App","name":"a","uid":"u"`, `,"lastWrite":{"manager":"m","op":"Update"},"generation":1}`
	scratch := new(decodeScratch)
	for _, c := range []struct {
		name, text string
		asWritten  bool // metaAsWritten reads it
	}{
		{"as held", head + `,"labels":{"a":"1","b":"2"},"owners":[{"kind":"K","name":"o","uid":"u0","controller":true}],"finalizers":["f","g"],` +
			`"managed":[{"manager":"m","operation":"Update","fields":"~x"},{"manager":"n","operation":"Apply","subresource":"status","fields":"~y"}]` + tail, true},
		{"a label twice", head + `,"labels":{"a":"1","a":"1"}` + tail, false},
		{"a label twice, held's count", head + `,"labels":{"a":"1","a":"2"}` + tail, false},
		{"labels out of order", head + `,"labels":{"b":"2","a":"1"}` + tail, false},
		{"one label of two", head + `,"labels":{"a":"1"}` + tail, true},
		{"a label more", head + `,"labels":{"a":"1","b":"2","c":"3"}` + tail, true},
		{"no labels", head + `,"labels":{}` + tail, false},
		{"the first record", head + `,"managed":[{"manager":"m","operation":"Update","fields":"~x"}]` + tail, true},
		{"a record more", head + `,"managed":[{"manager":"m","operation":"Update","fields":"~x"},{"manager":"n","operation":"Apply","subresource":"status","fields":"~y"},{"manager":"o","operation":"Apply","fields":"~z"}]` + tail, true},
		{"no records", head + `,"managed":[]` + tail, false},
		{"records null", head + `,"managed":null` + tail, false},
		{"an empty subresource", head + `,"managed":[{"manager":"m","operation":"Update","subresource":"","fields":"~x"}]` + tail, false},
		{"fields first", head + `,"managed":[{"fields":"~x","manager":"m","operation":"Update"}]` + tail, false},
		{"an escaped manager", head + `,"managed":[{"manager":"\u006d","operation":"Update","fields":"~x"}]` + tail, false},
		{"a UTF-8 manager", head + `,"managed":[{"manager":"ä","operation":"Update","fields":"~x"}]` + tail, false},
		{"invalid UTF-8", head + `,"managed":[{"manager":"m` + "\xff" + `","operation":"Update","fields":"~x"}]` + tail, false},
		{"a control character", head + `,"finalizers":["f` + "\x01" + `"]` + tail, false},
		{"not a controller", head + `,"owners":[{"kind":"K","name":"o","uid":"u0","controller":false}]` + tail, false},
		{"no deletion", head + `,"deletionRequested":false` + tail, false},
		{"a deletion", head + `,"deletionRequested":true` + tail, true},
		{"status generation 0", head + `,"lastWrite":{"manager":"m","op":"Update"},"generation":1,"statusGeneration":0}`, false},
		{"status generation -0", head + `,"lastWrite":{"manager":"m","op":"Update"},"generation":1,"statusGeneration":-0}`, false},
		{"generation 0", head + `,"lastWrite":{"manager":"m","op":"Update"},"generation":0}`, true},
		{"generation -0", head + `,"lastWrite":{"manager":"m","op":"Update"},"generation":-0}`, false},
		{"an empty trace", head + `,"lastWrite":{"manager":"m","op":"Update","trace":""},"generation":1}`, false},
		{"a label with <", head + `,"labels":{"a":"<1"}` + tail, false},
		{"an annotation with >", head + `,"annotations":{"a>":"1"}` + tail, false},
		{"a finalizer with &", head + `,"finalizers":["f&g"]` + tail, false},
		{"a UID with <", `{"kind":"App","name":"a","uid":"u<"` + tail, false},
		{"a record with &", head + `,"managed":[{"manager":"m","operation":"Update","fields":"~&"}]` + tail, false},
		{"a manager with DEL", head + `,"lastWrite":{"manager":"m` + "\x7f" + `","op":"Update"},"generation":1}`, true},
		{"a trace", head + `,"lastWrite":{"manager":"m","op":"Update","trace":"t"},"generation":1}`, true},
		{"generation too big", head + `,"lastWrite":{"manager":"m","op":"Update"},"generation":9223372036854775808}`, false},
		{"generation 1.0", head + `,"lastWrite":{"manager":"m","op":"Update"},"generation":1.0}`, false},
		{"generation a string", head + `,"lastWrite":{"manager":"m","op":"Update"},"generation":"1"}`, false},
		{"white space", head + `, "lastWrite":{"manager":"m","op":"Update"},"generation":1}`, false},
		{"white space in the number", head + `,"lastWrite":{"manager":"m","op":"Update"},"generation": 1}`, false},
		{"white space in the status generation", head + `,"lastWrite":{"manager":"m","op":"Update"},"generation":1,"statusGeneration":` + "\n2}", false},
		{"no generation", head + `,"lastWrite":{"manager":"m","op":"Update"}}`, false},
		{"cut short", head + `,"lastWrite":{"manager":"m","op":"Update"},"generation":1`, false},
		{"a key twice", head + `,"uid":"v"` + tail, false},
		{"an unknown key", head + `,"x":1` + tail, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &metaDecoder{scratch: scratch, r: jsonscan.NewReader([]byte(c.text))}
			require.Equal(t, c.asWritten, d.metaAsWritten(new(Meta), &held) && d.r.End(), "read as written")
			got, ok := requireMetaAsDecoded(t, []byte(c.text), &held, scratch)
			var want Meta
			if json.Unmarshal([]byte(c.text), &want) == nil {
				require.True(t, ok || !c.asWritten)
			}
			if ok && len(got.Managed) > 0 && len(got.Managed) != len(held.Managed) {
				require.NotSame(t, &held.Managed[0], &got.Managed[0], "a list of another length is not the held one")
			}
			if ok && len(got.Labels) > 0 && !reflect.DeepEqual(got.Labels, held.Labels) {
				require.False(t, sameMap(held.Labels, got.Labels), "other labels are not the held map")
			}
		})
	}
}

// Metadata whose records and last write repeat from one value to the next
// (what the scratch space remembers by their text, see textMemo) decode
// as encoding/json decodes them, whether their text is remembered, was
// remembered and pushed out, or differs from a remembered one by a byte
// near its end; over a held object whose records are the same they are
// its records, and otherwise records that no later decode shares or
// changes. A quarter of the cases under -race.
func TestTextMemoAgreesWithDecoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 1))
	// Metadata the store writes as they are (appendMeta): no "del\x7f".
	plainMeta := func() Meta {
		for {
			m := randomMeta(rng, true)
			if _, ok := appendMeta(nil, &m); ok && len(m.Managed) > 0 {
				return m
			}
		}
	}
	pool := func(n int) []Meta {
		out := make([]Meta, n)
		for i := range out {
			out[i] = plainMeta()
		}
		return out
	}
	records, writes := pool(4), pool(4)
	scratch := new(decodeScratch)
	checked, remembered := 0, 0
	for range race.Sweep(3000, 4) {
		m := plainMeta()
		if rng.IntN(8) > 0 {
			m.Managed = slices.Clone(records[rng.IntN(len(records))].Managed)
		}
		if rng.IntN(8) > 0 {
			m.LastWrite = writes[rng.IntN(len(writes))].LastWrite
		}
		if n := len(m.Managed); n > 0 && rng.IntN(6) == 0 {
			m.Managed[n-1].Fields += "z" // a remembered text's but for its end
		}
		var held *Meta
		switch rng.IntN(3) {
		case 1:
			h := m.clone()
			held = &h
		case 2:
			h := nearby(rng, m)
			held = &h
		}
		text, ok := appendMeta(nil, &m)
		if !ok {
			continue // not plain: encoding/json's
		}
		got, ok := requireMetaAsDecoded(t, text, held, scratch)
		require.True(t, ok, "%s", text)
		if len(got.Managed) == 0 {
			continue
		}
		if held != nil && slices.Equal(held.Managed, got.Managed) {
			require.Same(t, &held.Managed[0], &got.Managed[0], "the held records")
		} else {
			// The caller's own records: changing them changes nothing
			// the scratch space remembers.
			got.Managed[0].Fields = "changed"
		}
		checked++
		list, _ := appendMeta(nil, &Meta{Managed: m.Managed})
		if text := scratch.managed.text[0]; text[0] == '[' && bytes.Contains(list, text) {
			remembered++
		}
	}
	require.Greater(t, checked, race.Sweep(3000, 4)/4)
	require.Equal(t, checked, remembered, "the records read last are remembered")
}
