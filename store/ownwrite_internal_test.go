package store

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
)

// A write remembers, against the value remembered before it, what it left
// as it was: the head (headAs), when that value was read whole and its
// head is the write's byte for byte, and the spec (sameSpecAs), when the
// write's Spec is the very text of the value it was computed from, with
// the length of its spec text (specLen). Both hold once the write is no
// longer remembered decoded.
func TestWriteRemembersTheHeadAndSpecItLeft(t *testing.T) {
	st, err := New[ctlSpec, ctlStatus](newMapBackend(), "App")
	require.NoError(t, err)
	w := newStatusWrite(t, st)
	latest := func(l *lastValues) lastValue {
		e, ok := l.latest(w.key)
		require.True(t, ok)
		return e
	}
	for _, displaced := range []bool{false, true} {
		l := newLastValues(64 << 20)
		w.remember(l, displaced)
		e := latest(l)
		require.Equal(t, int64(8), e.headAs, "displaced %v", displaced)
		require.Equal(t, int64(8), e.sameSpecAs, "displaced %v", displaced)
		require.Equal(t, len(w.wrote.Spec), e.specLen)
		at := strings.Index(string(e.value), `,"spec":`) + len(`,"spec":`)
		require.Equal(t, string(w.wrote.Spec), string(e.value[at:at+e.specLen]), "the value's spec text")
	}

	// The value before read but not decoded (not known whole): no head;
	// the spec is the value the write was computed from's all the same.
	l := newLastValues(64 << 20)
	l.read(w.ev.Prev)
	l.wrote(w.key, 9, w.read, w.wrote, w.ev.KV.Value, decodedSides{})
	e := latest(l)
	require.Zero(t, e.headAs)
	require.Equal(t, int64(8), e.sameSpecAs)

	// A value before of another head of the same length (its UID's last
	// letter), read whole: no head.
	other := []byte(strings.Replace(string(w.ev.Prev.Value), `88da"`, `88db"`, 1))
	require.NotEqual(t, string(other), string(w.ev.Prev.Value))
	otherRaw, err := decodeRaw(kv.KeyValue{Key: w.key, Value: other, ModRevision: 8}, &metaDecoder{})
	require.NoError(t, err)
	l = newLastValues(64 << 20)
	l.readDecoded(kv.KeyValue{Key: w.key, Value: other, ModRevision: 8}, otherRaw)
	l.wrote(w.key, 9, w.read, w.wrote, w.ev.KV.Value, decodedSides{})
	require.Zero(t, latest(l).headAs)

	// A write of another spec, over a value not decoded: no spec.
	next := *w.wrote
	next.Spec = json.RawMessage(strings.Replace(string(next.Spec), `"replicas":6`, `"replicas":7`, 1))
	value, err := next.encode()
	require.NoError(t, err)
	l = newLastValues(64 << 20)
	l.read(w.ev.Prev)
	l.wrote(w.key, 9, w.read, &next, value, decodedSides{})
	require.Zero(t, latest(l).sameSpecAs)
}

// The watch event of the Store's own write that the memory no longer
// holds decoded, over the object held for the value it was computed from,
// decodes to what the event's bytes decode to: its head taken from the
// held object when the write left it as it was (headAs), its Spec when
// it left that too and the event's value is the one it wrote (sameSpecAs),
// with the held object's memory; anything else read from the event.
func TestWatchOverOwnWriteNoLongerDecodedIsItsBytes(t *testing.T) {
	st, err := New[ctlSpec, ctlStatus](newMapBackend(), "App")
	require.NoError(t, err)
	w := newStatusWrite(t, st)
	decode := st.decoder(false, nil, st.heldObjects(func(name string, rev int64) *Object[ctlSpec, ctlStatus] {
		if rev == 8 {
			return w.held
		}
		return nil
	}))
	event := func(value []byte) *Object[ctlSpec, ctlStatus] {
		t.Helper()
		ev := w.ev
		ev.KV.Value = value
		tev := decode(ev)
		require.Nil(t, tev.Undecodable)
		want, err := decodeObjectAs[ctlSpec, ctlStatus](ev.KV)
		require.NoError(t, err)
		require.Equal(t, want, tev.Object, "what the event's bytes decode to")
		return tev.Object
	}

	// A status write: head and spec as they were, taken from the held
	// object, its memory shared.
	w.remember(st.last, true)
	got := event(w.ev.KV.Value)
	require.Same(t, &w.held.Meta.Managed[0], &got.Meta.Managed[0])
	require.Same(t, &w.held.Spec.Args[0], &got.Spec.Args[0])
	require.Equal(t, int64(6), got.Status.ReadyReplicas)

	// Another value of the write's revision than the one the Store
	// remembers (a backend that rewrote it): its spec is read.
	w.remember(st.last, true)
	rewritten := []byte(strings.Replace(string(w.ev.KV.Value), `"replicas":6`, `"replicas":7`, 1))
	require.Equal(t, int64(7), event(rewritten).Spec.Replicas)

	// The Store's own spec write (7 replicas): its spec is read.
	next := *w.wrote
	next.Spec = json.RawMessage(strings.Replace(string(next.Spec), `"replicas":6`, `"replicas":7`, 1))
	value := w.rewrite(t, st.last, &next)
	require.Equal(t, int64(7), event(value).Spec.Replicas)

	// A write that gave the object another record of the same length
	// (its manager's fields): its metadata are read.
	first := *w.wrote
	first.Meta.Managed = append([]ManagedFields(nil), w.wrote.Meta.Managed...)
	first.Meta.Managed[1].Fields = "~Dha_owBB"
	value = w.rewrite(t, st.last, &first)
	got = event(value)
	require.Equal(t, "~Dha_owBB", got.Meta.Managed[1].Fields)
	require.Same(t, &w.held.Spec.Args[0], &got.Spec.Args[0], "the spec as it was")
}

// rewrite makes l remember, as remember does, raw written at 9 in place
// of the status write, no longer decoded, and returns its value.
func (w *statusWrite[S, T]) rewrite(t *testing.T, l *lastValues, raw *rawObject) []byte {
	value, err := raw.encode()
	require.NoError(t, err)
	own, err := decodeRaw(kv.KeyValue{Key: w.key, Value: value, ModRevision: 9}, &metaDecoder{})
	require.NoError(t, err)
	require.NotNil(t, own.head.text(), "the head of its value, as a write knows it")
	l.forget(w.key, 10)
	l.readDecoded(w.ev.Prev, w.read)
	l.wrote(w.key, 9, w.read, own, value, decodedSides{})
	drop(l, w.key)
	return value
}

// drop makes l keep only the value of key, as decodedLocked does once
// maxDecoded later own writes came.
func drop(l *lastValues, key string) {
	l.mu.Lock()
	l.items[l.position(key)].raw = nil
	l.mu.Unlock()
}

// decodeObjectAs is encoding/json's decoding of kv's value.
func decodeObjectAs[S, T any](kv kv.KeyValue) (*Object[S, T], error) {
	obj := new(Object[S, T])
	err := json.Unmarshal(kv.Value, &legacyObject[S, T]{Object: obj, Legacy: &obj.Meta})
	obj.Meta.Revision = kv.ModRevision
	return obj, err
}
