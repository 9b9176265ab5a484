package store_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
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
// (v2, the hub, is benchSpec; v1 renames its image): at-storage reads the
// ~1 KB object at the storage version it is stored at, converted reads it
// at v1 (one decode, the user's funcs, and the ownership records' paths),
// converted-no-ownership the same value without ownership records.
//
//	go test -run '^$' -bench VersionedGet1KB -benchmem ./store/
func BenchmarkVersionedGet1KB(b *testing.B) {
	ctx := b.Context()
	vs, err := store.NewVersions("v2",
		store.VersionOf("v1", store.Conversion[benchSpecV1, benchStatus, benchSpec, benchStatus]{
			ToHub: func(s benchSpecV1, st benchStatus) (benchSpec, benchStatus, error) {
				return benchSpec{Image: s.ContainerImage, Replicas: s.Replicas, Command: s.Command, Env: s.Env, Ports: s.Ports}, st, nil
			},
			FromHub: func(s benchSpec, st benchStatus) (benchSpecV1, benchStatus, error) {
				return benchSpecV1{ContainerImage: s.Image, Replicas: s.Replicas, Command: s.Command, Env: s.Env, Ports: s.Ports}, st, nil
			},
			Renames: []store.Rename{{From: ".spec.containerImage", To: ".spec.image"}},
		}),
		store.VersionOf("v2", store.Conversion[benchSpec, benchStatus, benchSpec, benchStatus]{}))
	require.NoError(b, err)
	mem := memstore.New(memstore.WithHistorySize(16))
	s2, err := store.New[benchSpec, benchStatus](mem, "Bench", store.WithVersion("v2", vs))
	require.NoError(b, err)
	s1, err := store.New[benchSpecV1, benchStatus](mem, "Bench", store.WithVersion("v1", vs))
	require.NoError(b, err)
	_, err = s2.As("bench").Create(ctx, benchObject())
	require.NoError(b, err)
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
	// The same value without ownership records: Spec and Status only.
	kv, err := mem.Get(ctx, "Bench/bench-object")
	require.NoError(b, err)
	var v map[string]any
	require.NoError(b, json.Unmarshal(kv.Value, &v))
	delete(v["metadata"].(map[string]any), "managed")
	bare, err := json.Marshal(v)
	require.NoError(b, err)
	_, err = mem.Txn(ctx, nil, store.Write{Kind: store.WritePut, Key: "Bench/bare", Value: bytes.Replace(bare, []byte(`"bench-object"`), []byte(`"bare"`), 1)})
	require.NoError(b, err)
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
