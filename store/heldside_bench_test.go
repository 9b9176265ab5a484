package store

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
)

// ctlSpec and ctlStatus are the controller benchmark's App
// (bench/internal/ctlbench): a ~200-byte spec with a slice and a map.
type ctlSpec struct {
	Replicas int64             `json:"replicas"`
	Image    string            `json:"image"`
	Args     []string          `json:"args"`
	Selector map[string]string `json:"selector"`
}

type ctlStatus struct {
	ReadyReplicas int64 `json:"readyReplicas"`
}

// BenchmarkWatchControllerSpecWrite is a cache's watch decoding the
// controller benchmark's spec update by another client (a new count) over
// the object held for the Store's own status write before it, which the
// Store remembers (over-held), and no longer remembers (held-only): the
// Status and the records taken from the held object, and now the spec's
// image, args and selector too (see heldSide).
//
//	go test -run '^$' -bench WatchControllerSpecWrite -benchmem ./store/
func BenchmarkWatchControllerSpecWrite(b *testing.B) {
	st, err := New[ctlSpec, ctlStatus](newMapBackend(), "App")
	require.NoError(b, err)
	w := newHeldSpecWrite(b, st, controllerApp(), func(s *ctlSpec) { s.Replicas = 6 })
	for _, bc := range []struct {
		name     string
		remember bool
	}{{"over-held", true}, {"held-only", false}} {
		b.Run(bc.name, func(b *testing.B) {
			decode := st.decoder(false, nil, st.heldObjects(func(string, int64) *Object[ctlSpec, ctlStatus] { return w.held }))
			b.ReportAllocs()
			for b.Loop() {
				st.last.forget(w.key, 10)
				if bc.remember {
					st.last.wrote(w.key, 8, nil, w.raw, w.ev.Prev.Value, decodedSides{})
				}
				tev := decode(w.ev)
				if tev.Type != Modified || tev.Object.Spec.Replicas != 6 || len(tev.Object.Spec.Args) != 3 || tev.Object.Status.ReadyReplicas != 5 {
					b.Fatal(tev)
				}
			}
		})
	}
}

// BenchmarkGetController is another client's Get of the controller
// benchmark's object (a Store that remembers nothing, as the benchmark's
// other writer): the whole value decoded, with no held object to take
// from.
//
//	go test -run '^$' -bench GetController -benchmem ./store/
func BenchmarkGetController(b *testing.B) {
	be := newMapBackend()
	st, err := New[ctlSpec, ctlStatus](be, "App", WithLastValues(0))
	require.NoError(b, err)
	key := st.keyOf("app-1")
	obj := controllerApp()
	obj.Meta.StatusGeneration, obj.Status.ReadyReplicas = 1, 3 // the status lags
	value, err := json.Marshal(obj)
	require.NoError(b, err)
	be.m[key] = kv.KeyValue{Key: key, Value: value, CreateRevision: 1, ModRevision: 8}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		got, err := st.Get(ctx, "app-1")
		if err != nil || got.Spec.Replicas != 5 || got.Meta.Managed[1].Subresource != "status" {
			b.Fatal(got, err)
		}
	}
}

// controllerApp is the controller benchmark's object (bench/cmd/ctl-steady)
// as its Loop's status write left it: 5 replicas, all ready.
func controllerApp() *Object[ctlSpec, ctlStatus] {
	return &Object[ctlSpec, ctlStatus]{
		Meta: Meta{Kind: "App", Name: "app-1", UID: "33c810c9-5b5b-447e-ac54-555352fe88da",
			Managed:   []ManagedFields{{Manager: "user", Operation: "Update", Fields: "~OVitRw_g"}, {Manager: "app-controller", Operation: "Apply", Subresource: "status", Fields: "~Dha_owBA"}},
			LastWrite: LastWrite{Manager: "app-controller", Op: "ApplyStatus"}, Generation: 2, StatusGeneration: 2},
		Spec: ctlSpec{Replicas: 5, Image: "registry.example.com/platform/web-frontend:v1.27.3",
			Args:     []string{"--listen=:8080", "--log-level=info", "--config=/etc/web/config.yaml"},
			Selector: map[string]string{"app": "web", "shard": "1"}},
		Status: ctlStatus{ReadyReplicas: 5},
	}
}

// heldSpecWrite is what a held-object benchmark replays: the watch event
// of another client's spec write to an object (its Generation and
// LastWrite moved on), with the value before it decoded raw, as the Store
// remembers its own write, and as the Store's object, as a cache holds it.
type heldSpecWrite[S, T any] struct {
	key  string
	ev   kv.Event
	raw  *rawObject
	held *Object[S, T]
}

// newHeldSpecWrite stores nothing: it encodes obj, at revision 8, and
// then obj with update applied to its Spec, at 9.
func newHeldSpecWrite[S, T any](tb testing.TB, st *Store[S, T], obj *Object[S, T], update func(*S)) heldSpecWrite[S, T] {
	w := heldSpecWrite[S, T]{key: st.keyOf(obj.Meta.Name)}
	prev, err := json.Marshal(obj)
	require.NoError(tb, err)
	obj.Meta.LastWrite = LastWrite{Manager: "user", Op: "Update"}
	obj.Meta.Generation++
	update(&obj.Spec)
	next, err := json.Marshal(obj)
	require.NoError(tb, err)
	w.ev = kv.Event{Type: kv.EventPut, Revision: 9, KV: kv.KeyValue{Key: w.key, Value: next, ModRevision: 9},
		Prev: kv.KeyValue{Key: w.key, Value: prev, ModRevision: 8}}
	w.raw, err = decodeRaw(w.ev.Prev, &metaDecoder{})
	require.NoError(tb, err)
	w.held, err = st.decode(w.ev.Prev)
	require.NoError(tb, err)
	return w
}

// BenchmarkWatchControllerStatusWrite is a cache's watch decoding the
// event of the controller benchmark's status write (its Loop's ApplyStatus
// of readyReplicas) over the object held for the other client's spec write
// before it, which the watch read and the Store remembered decoded: with
// the status write remembered decoded (remembered), and no longer, as past
// maxDecoded later own writes (displaced): flat out at 10k objects the
// cache lags hundreds of writes behind the Loop, and nine status events in
// ten come so.
//
//	go test -run '^$' -bench WatchControllerStatusWrite -benchmem ./store/
func BenchmarkWatchControllerStatusWrite(b *testing.B) {
	st, err := New[ctlSpec, ctlStatus](newMapBackend(), "App")
	require.NoError(b, err)
	w := newStatusWrite(b, st)
	for _, bc := range []struct {
		name      string
		displaced bool
	}{{"remembered", false}, {"displaced", true}} {
		b.Run(bc.name, func(b *testing.B) {
			decode := st.decoder(false, nil, st.heldObjects(func(string, int64) *Object[ctlSpec, ctlStatus] { return w.held }))
			b.ReportAllocs()
			for b.Loop() {
				w.remember(st.last, bc.displaced)
				tev := decode(w.ev)
				if tev.Type != Modified || tev.Object.Status.ReadyReplicas != 6 || tev.Object.Spec.Replicas != 6 {
					b.Fatal(tev)
				}
			}
		})
	}
}

// statusWrite is the event of a Store's own status write (revision 9) over
// another client's spec write (8), with what the Store remembers of both
// and the object a cache holds for 8.
type statusWrite[S, T any] struct {
	key         string
	ev          kv.Event
	read, wrote *rawObject
	held        *Object[S, T]
}

// newStatusWrite stores nothing: it encodes controllerApp after a spec
// write (6 replicas, 5 ready) at 8, and after the controller's status
// write (6 ready) at 9.
func newStatusWrite(tb testing.TB, st *Store[ctlSpec, ctlStatus]) statusWrite[ctlSpec, ctlStatus] {
	obj := controllerApp()
	w := statusWrite[ctlSpec, ctlStatus]{key: st.keyOf(obj.Meta.Name)}
	obj.Meta.LastWrite, obj.Meta.Generation, obj.Spec.Replicas = LastWrite{Manager: "user", Op: "Update"}, 3, 6
	spec, err := json.Marshal(obj)
	require.NoError(tb, err)
	obj.Meta.LastWrite, obj.Meta.StatusGeneration, obj.Status.ReadyReplicas = LastWrite{Manager: "app-controller", Op: "ApplyStatus"}, 3, 6
	status, err := json.Marshal(obj)
	require.NoError(tb, err)
	w.ev = kv.Event{Type: kv.EventPut, Revision: 9, KV: kv.KeyValue{Key: w.key, Value: status, ModRevision: 9},
		Prev: kv.KeyValue{Key: w.key, Value: spec, ModRevision: 8}}
	w.read, err = decodeRaw(w.ev.Prev, &metaDecoder{})
	require.NoError(tb, err)
	w.wrote, err = decodeRaw(w.ev.KV, &metaDecoder{})
	require.NoError(tb, err)
	w.held, err = st.decode(w.ev.Prev)
	require.NoError(tb, err)
	return w
}

// remember makes l remember the spec write, read decoded (as the watch
// reads it), and then the status write over it, as the Store writes it;
// displaced, it keeps only the status write's value, as decodedLocked does
// once maxDecoded later own writes came.
func (w *statusWrite[S, T]) remember(l *lastValues, displaced bool) {
	l.forget(w.key, 10)
	l.decoded.keys, l.decoded.next = l.decoded.keys[:0], 0 // no older write displaced
	l.reads.keys, l.reads.next = l.reads.keys[:0], 0
	l.readDecoded(w.ev.Prev, w.read)
	l.wrote(w.key, 9, w.read, w.wrote, w.ev.KV.Value, decodedSides{})
	if displaced {
		l.mu.Lock()
		l.items[l.position(w.key)].raw = nil
		l.mu.Unlock()
	}
}
