package store_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// conflictPaths returns the (manager, path) pairs of an apply's conflict.
func conflictPaths(t *testing.T, err error) []string {
	t.Helper()
	var ce *ownership.ConflictError
	require.ErrorAs(t, err, &ce)
	var out []string
	for _, c := range ce.Conflicts {
		out = append(out, c.Manager+" "+c.Path.String())
	}
	return out
}

// Ownership follows a field through a rename: what a v1 manager applied
// conflicts with a v2 manager's apply of the renamed field, and each sees
// the conflict in its own version's paths, whichever version is stored.
func TestVersionsFieldOwnershipAcrossVersions(t *testing.T) {
	ctx := t.Context()
	for _, storage := range []string{"v1", "v2"} {
		t.Run("storage "+storage, func(t *testing.T) {
			b := memstore.New()
			s1, s2 := versionedStores(t, b, storage)
			_, err := s1.As("old").Apply(ctx, "a", map[string]any{"image": "img:1"})
			require.NoError(t, err)

			_, err = s2.As("new").Apply(ctx, "a", map[string]any{"containerImage": "img:2", "replicas": 2})
			require.Equal(t, []string{"old .spec.containerImage"}, conflictPaths(t, err), "reported in v2's paths")

			_, err = s2.As("new").Apply(ctx, "a", map[string]any{"containerImage": "img:2", "replicas": 2}, store.WithForce())
			require.NoError(t, err)
			_, err = s1.As("old").Apply(ctx, "a", map[string]any{"image": "img:3"})
			require.Equal(t, []string{"new .spec.image"}, conflictPaths(t, err), "reported in v1's paths")

			// The v2 manager's replicas, which v1 cannot hold when stored,
			// stays its own.
			_, err = s2.As("third").Apply(ctx, "a", map[string]any{"replicas": 5})
			require.Equal(t, []string{"new .spec.replicas"}, conflictPaths(t, err))
			got, err := s2.Get(ctx, "a")
			require.NoError(t, err)
			require.Equal(t, specV2{ContainerImage: "img:2", Replicas: 2}, got.Spec)
		})
	}
}

// A path whose rename leads nowhere is dropped from its record with a log
// line; the read does not fail.
func TestVersionsUnmappableOwnershipIsDroppedAndLogged(t *testing.T) {
	ctx := t.Context()
	type specOld struct {
		Image  string `json:"image"`
		Legacy string `json:"legacy,omitempty"`
	}
	v1 := store.VersionOf("v1", store.Conversion[specOld, statusV1, specV2, statusV2]{
		ToHub: func(s specOld, st statusV1) (specV2, statusV2, error) {
			return specV2{ContainerImage: s.Image}, statusV2{Ready: st.Ready}, nil
		},
		FromHub: func(s specV2, st statusV2) (specOld, statusV1, error) {
			return specOld{Image: s.ContainerImage}, statusV1{Ready: st.Ready}, nil
		},
		Renames: []store.Rename{{From: ".spec.image", To: ".spec.containerImage"}, {From: ".spec.legacy", To: ""}},
	})
	vs, err := store.NewVersions("v2", v1, store.VersionOf("v2", store.Conversion[specV2, statusV2, specV2, statusV2]{}))
	require.NoError(t, err)
	var log bytes.Buffer
	b := memstore.New()
	s1, err := store.New[specOld, statusV1](b, "Widget", store.WithVersion("v1", vs), store.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	require.NoError(t, err)
	s2, err := store.New[specV2, statusV2](b, "Widget", store.WithVersion("v2", vs))
	require.NoError(t, err)

	_, err = s1.As("old").Apply(ctx, "a", map[string]any{"image": "img:1", "legacy": "x"})
	require.NoError(t, err)
	require.Contains(t, log.String(), `path .spec.legacy of version v1 has no counterpart at version v2`)
	got, err := s2.Get(ctx, "a")
	require.NoError(t, err)
	require.Len(t, got.Meta.Managed, 1, "the record keeps its other paths")
	_, err = s2.As("new").Apply(ctx, "a", map[string]any{"containerImage": "img:2"})
	require.Equal(t, []string{"old .spec.containerImage"}, conflictPaths(t, err))
}

// Stored ownership records are encoded relative to the stored value
// (ownership.Codec.Encode, "~..."), whichever version wrote them: also the
// records a read converted and a later write at the storage version kept
// as they were (here the status side's, when only the spec is applied).
func TestVersionsStoredOwnershipRecordsAreCompact(t *testing.T) {
	ctx := t.Context()
	b := memstore.New()
	old1, _ := versionedStores(t, b, "v1")
	_, err := old1.As("old").Apply(ctx, "a", map[string]any{"image": "img:1"})
	require.NoError(t, err)
	_, err = old1.As("old").ApplyStatus(ctx, "a", map[string]any{"ready": true}, nil)
	require.NoError(t, err)

	_, s2 := versionedStores(t, b, "v2") // the value is stored at v1, s2 serves and stores v2
	got, err := s2.Get(ctx, "a")
	require.NoError(t, err)
	require.Len(t, got.Meta.Managed, 2)
	_, err = s2.As("new").Apply(ctx, "a", map[string]any{"replicas": 3})
	require.NoError(t, err)

	env := storedEnvelope(t, b, "a")
	require.Equal(t, "v2", env["version"])
	records := env["metadata"].(map[string]any)["managed"].([]any)
	require.Len(t, records, 3)
	for _, r := range records {
		fields := r.(map[string]any)["fields"].(string)
		require.Truef(t, strings.HasPrefix(fields, "~"), "record %v is stored relative to the value", r)
	}
	_, err = s2.As("third").ApplyStatus(ctx, "a", map[string]any{"ready": false}, nil)
	require.Equal(t, []string{"old .status.ready"}, conflictPaths(t, err), "the kept status record still decodes")
}

// A read that converts a value costs one decode and the conversion funcs:
// converting its ownership records as well costs a few allocations more
// (the records' slice, the memo's lookups), not a second decode of the
// value's shape. Allocations are counted, not time, so the machine's load
// does not matter.
func TestVersionsConvertedOwnershipCostsNoSecondDecode(t *testing.T) {
	if testing.Short() || raceScale > 1 {
		t.Skip("counts allocations (the race detector's sync.Pool drops scratch space at random)")
	}
	ctx := t.Context()
	s1, _ := versionedBenchStores(t)
	get := func(name string) float64 {
		got, err := s1.Get(ctx, name)
		require.NoError(t, err)
		if name == "bare" {
			require.Empty(t, got.Meta.Managed)
		} else {
			require.Len(t, got.Meta.Managed, 1, "the creator's record")
		}
		return testing.AllocsPerRun(50, func() {
			if _, err := s1.Get(ctx, name); err != nil {
				t.Fatal(err)
			}
		})
	}
	bare, withRecords := get("bare"), get("bench-object")
	require.LessOrEqualf(t, withRecords, bare+4, "a converted read allocates %v times with ownership records, %v without", withRecords, bare)
}

// Every watch event of a controller is a revision not read before, whose
// values differ from the last one's and whose shape mostly does not (a
// status message, a condition's time, the replicas). Converting it costs
// a read at the storage version (one decode) plus the conversion funcs:
// one allocation more, for the stored version's values and the hub, and
// one of slack. Its ownership records' conversion, remembered by shape and
// text, is not made again because a value changed, and the spec is not
// read again for its shape. Allocations are counted, not time.
func TestVersionsConvertedWatchEventCostsARead(t *testing.T) {
	if testing.Short() || raceScale > 1 {
		t.Skip("counts allocations (the race detector's sync.Pool drops scratch space at random)")
	}
	ctx := t.Context()
	s1, s2 := revisionBenchStores(t)
	got, err := s1.Get(ctx, "bench-revisions")
	require.NoError(t, err)
	require.Len(t, got.Meta.Managed, 2, "the creator's spec record and the controller's status record")
	require.Len(t, got.Conditions, 1)
	const reads = 200 // fewer than benchRevisions: each read is of a new revision
	plain := testing.AllocsPerRun(reads, func() {
		if _, err := s2.Get(ctx, "bench-revisions"); err != nil {
			t.Fatal(err)
		}
	})
	converted := testing.AllocsPerRun(reads, func() {
		if _, err := s1.Get(ctx, "bench-revisions"); err != nil {
			t.Fatal(err)
		}
	})
	require.LessOrEqualf(t, converted, plain+2, "a converted read of a new revision allocates %v times, a read at the storage version %v", converted, plain)
}

// A converted read whose ownership records the Store has not converted
// before (a record changed, or another object's) costs about one decode
// more than a converted read without records: the records' bitmaps are
// decoded against a remembered codec, their paths renamed in one pass and
// encoded again, at most 15 allocations more than the read without. A
// value of a shape not read before also needs its codec, read from the
// JSON text, not from a tree of it: at most 26 more. (These were 1.3× and
// 1.5× of a read of 53 allocations, before Specs and Statuses were decoded
// without encoding/json: a read is now 12.) Allocations are counted, not
// time.
func TestVersionsConvertingNewOwnershipRecordsCostsAboutADecode(t *testing.T) {
	if testing.Short() || raceScale > 1 {
		t.Skip("counts allocations (the race detector's sync.Pool drops scratch space at random)")
	}
	ctx := t.Context()
	s1, _ := versionedBenchStores(t)
	read := func(name string, forget, codecs bool) float64 {
		got, err := s1.Get(ctx, name)
		require.NoError(t, err)
		if name != "bare" {
			require.Len(t, got.Meta.Managed, 1, "the creator's record")
		}
		return testing.AllocsPerRun(50, func() {
			if forget {
				s1.ForgetConversions(codecs)
			}
			if _, err := s1.Get(ctx, name); err != nil {
				t.Fatal(err)
			}
		})
	}
	bare := read("bare", false, false)
	newRecords, newShape := read("bench-object", true, false), read("bench-object", true, true)
	require.LessOrEqualf(t, newRecords, bare+15, "a converted read of records not converted before allocates %v times, one without records %v", newRecords, bare)
	require.LessOrEqualf(t, newShape, bare+26, "a converted read of a shape not read before allocates %v times, one without records %v", newShape, bare)
}
