package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// benchSpecV1 is benchSpec before its image was renamed.
type benchSpecV1 struct {
	ContainerImage string            `json:"containerImage"`
	Replicas       int               `json:"replicas"`
	Command        []string          `json:"command"`
	Env            map[string]string `json:"env"`
	Ports          []benchPort       `json:"ports"`
}

// BenchmarkVersionedGet1KB is BenchmarkTyped1KB's get for a versioned kind
// (v2, the hub and the storage version, is benchSpec; v1 renames its
// image), each read converting at most once: at-storage reads the ~1 KB
// object at v2, converted reads it at v1 (one decode, the user's func, and
// the ownership records' paths, converted once and remembered).
// at-storage-new-revision and converted-new-revision read, at v2 and at
// v1, a revision not read before each time, as a controller's watch
// delivers them (values change, the shape does not): what a converted read
// may cost beyond the first is the user's func, which user-func measures
// alone. converted-new-records reads the object as if its records had not
// been converted before (with the codec of their shape remembered), and
// converted-new-shape as if its shape had not been read before either (a
// new codec); converted-no-ownership reads the value without ownership
// records.
//
//	go test -run '^$' -bench VersionedGet1KB -benchmem ./store/
func BenchmarkVersionedGet1KB(b *testing.B) {
	ctx := b.Context()
	s1, s2 := versionedBenchStores(b)
	b.Run("at-storage", func(b *testing.B) {
		b.ReportAllocs()
		defer reportTypedCPU(b, typedBenchCPU())
		for b.Loop() {
			if _, err := s2.Get(ctx, "bench-object"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("converted", func(b *testing.B) {
		b.ReportAllocs()
		defer reportTypedCPU(b, typedBenchCPU())
		for b.Loop() {
			if _, err := s1.Get(ctx, "bench-object"); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A revision not read before, of a shape read before (converted again,
	// with a remembered codec), and of a new shape (a new codec too).
	for _, codecs := range []bool{false, true} {
		name := "converted-new-records"
		if codecs {
			name = "converted-new-shape"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportTypedCPU(b, typedBenchCPU())
			for b.Loop() {
				s1.ForgetConversions(codecs)
				if _, err := s1.Get(ctx, "bench-object"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// Revisions not read before, as a watch delivers them (see
	// revisionBenchStores): at-storage-new-revision reads them at the
	// storage version (one decode), converted-new-revision at v1.
	b.Run("at-storage-new-revision", func(b *testing.B) {
		_, r2 := revisionBenchStores(b)
		b.ReportAllocs()
		defer reportTypedCPU(b, typedBenchCPU())
		for b.Loop() {
			if _, err := r2.Get(ctx, "bench-revisions"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("converted-new-revision", func(b *testing.B) {
		r1, _ := revisionBenchStores(b)
		b.ReportAllocs()
		defer reportTypedCPU(b, typedBenchCPU())
		for b.Loop() {
			if _, err := r1.Get(ctx, "bench-revisions"); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The user's func alone, on the object's decoded Spec and Status: what
	// a converted read may cost beyond a read at the storage version.
	b.Run("user-func", func(b *testing.B) {
		obj, err := s2.Get(ctx, "bench-object")
		require.NoError(b, err)
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := benchFromHub(obj.Spec, obj.Status); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("converted-no-ownership", func(b *testing.B) {
		b.ReportAllocs()
		defer reportTypedCPU(b, typedBenchCPU())
		for b.Loop() {
			if _, err := s1.Get(ctx, "bare"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// versionedBenchStores returns the Stores serving v1 and v2 of
// BenchmarkVersionedGet1KB's kind, on a memstore holding, at v2,
// benchObject ("bench-object") and the same value without ownership
// records (Spec and Status only), "bare".
func versionedBenchStores(tb testing.TB) (s1 *store.Store[benchSpecV1, benchStatus], s2 *store.Store[benchSpec, benchStatus]) {
	ctx := tb.Context()
	vs := benchVersions(tb)
	mem := memstore.New(memstore.WithHistorySize(16))
	var err error
	s2, err = store.New[benchSpec, benchStatus](mem, "Bench", store.WithVersion("v2", vs))
	require.NoError(tb, err)
	s1, err = store.New[benchSpecV1, benchStatus](mem, "Bench", store.WithVersion("v1", vs))
	require.NoError(tb, err)
	_, err = s2.As("bench").Create(ctx, benchObject())
	require.NoError(tb, err)
	kvp, err := mem.Get(ctx, "Bench/bench-object")
	require.NoError(tb, err)
	var v struct { // the envelope's keys in the order the store writes them
		Version  string          `json:"version"`
		Metadata map[string]any  `json:"metadata"`
		Spec     json.RawMessage `json:"spec"`
		Status   json.RawMessage `json:"status"`
	}
	require.NoError(tb, json.Unmarshal(kvp.Value, &v))
	require.Contains(tb, v.Metadata, "managed")
	delete(v.Metadata, "managed")
	bare, err := json.Marshal(v)
	require.NoError(tb, err)
	_, err = mem.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "Bench/bare", Value: bytes.Replace(bare, []byte(`"bench-object"`), []byte(`"bare"`), 1)})
	require.NoError(tb, err)
	return s1, s2
}

// benchFromHub is v1's FromHub, the user's func a read at v1 of a value
// stored at v2 calls (v2, the hub, converts by identity).
func benchFromHub(s benchSpec, st benchStatus) (benchSpecV1, benchStatus, error) {
	return benchSpecV1{ContainerImage: s.Image, Replicas: s.Replicas, Command: s.Command, Env: s.Env, Ports: s.Ports}, st, nil
}

// benchVersions is BenchmarkVersionedGet1KB's kind: v2, the hub and the
// storage version, is benchSpec, and v1 renames its image.
func benchVersions(tb testing.TB) *store.Versions {
	vs, err := store.NewVersions("v2",
		store.VersionOf("v1", store.Conversion[benchSpecV1, benchStatus, benchSpec, benchStatus]{
			ToHub: func(s benchSpecV1, st benchStatus) (benchSpec, benchStatus, error) {
				return benchSpec{Image: s.ContainerImage, Replicas: s.Replicas, Command: s.Command, Env: s.Env, Ports: s.Ports}, st, nil
			},
			FromHub: benchFromHub,
			Renames: []store.Rename{{From: ".spec.containerImage", To: ".spec.image"}},
		}),
		store.VersionOf("v2", store.Conversion[benchSpec, benchStatus, benchSpec, benchStatus]{}))
	require.NoError(tb, err)
	return vs
}

// revisionBenchStores returns Stores serving v1 and v2 of
// BenchmarkVersionedGet1KB's kind whose Get of "bench-revisions" returns,
// call after call, a revision not returned before (up to benchRevisions of
// them, then the first again), as a controller's watch delivers them: the
// ~1 KB benchObject at v2 with the spec record of its writer, and the status
// record and Ready condition of a controller's ApplyStatus, whose replicas,
// status, condition message and observed generation change from one
// revision to the next.
func revisionBenchStores(tb testing.TB) (s1 *store.Store[benchSpecV1, benchStatus], s2 *store.Store[benchSpec, benchStatus]) {
	ctx := tb.Context()
	vs := benchVersions(tb)
	mem := memstore.New()
	w, err := store.New[benchSpec, benchStatus](mem, "Bench", store.WithVersion("v2", vs))
	require.NoError(tb, err)
	obj := benchObject()
	obj.Meta.Name = "bench-revisions"
	obj.Spec.Replicas = 111111
	_, err = w.As("bench").Create(ctx, obj)
	require.NoError(tb, err)
	_, err = w.As("ctrl").ApplyStatus(ctx, "bench-revisions", benchStatus{Ready: 3, Observed: 222222, Message: "all 333333 replicas are ready"},
		[]store.Condition{{Type: "Ready", Status: store.ConditionTrue, Reason: "Serving", Message: "444444 replicas serve",
			ObservedGeneration: 555555, LastTransitionTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}})
	require.NoError(tb, err)
	kvp, err := mem.Get(ctx, "Bench/bench-revisions")
	require.NoError(tb, err)
	var at []int
	for _, n := range []string{"111111", "222222", "333333", "444444", "555555"} {
		require.Equal(tb, 1, bytes.Count(kvp.Value, []byte(n)), n)
		at = append(at, bytes.Index(kvp.Value, []byte(n)))
	}
	kvs := make([]kv.KeyValue, benchRevisions)
	for i := range kvs {
		v := bytes.Clone(kvp.Value)
		for _, j := range at {
			copy(v[j:], strconv.Itoa(100000+i))
		}
		kvs[i] = kv.KeyValue{Key: kvp.Key, Value: v, CreateRevision: kvp.CreateRevision, ModRevision: kvp.ModRevision + int64(i) + 1}
	}
	s1, err = store.New[benchSpecV1, benchStatus](&revisionRing{Backend: mem, kvs: kvs}, "Bench", store.WithVersion("v1", vs))
	require.NoError(tb, err)
	s2, err = store.New[benchSpec, benchStatus](&revisionRing{Backend: mem, kvs: kvs}, "Bench", store.WithVersion("v2", vs))
	require.NoError(tb, err)
	return s1, s2
}

// benchRevisions is how many revisions revisionBenchStores makes.
const benchRevisions = 1 << 13

// revisionRing is a Backend whose Get of the key of kvs returns them in
// turn. It is for one goroutine.
type revisionRing struct {
	kv.Backend
	kvs  []kv.KeyValue
	next int
}

func (r *revisionRing) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	if key != r.kvs[0].Key {
		return r.Backend.Get(ctx, key)
	}
	kvp := r.kvs[r.next%len(r.kvs)]
	r.next++
	return kvp, nil
}
