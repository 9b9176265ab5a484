package store

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/race"
	"github.com/steady-go/steady/ownership"
)

// encodeJSONObject is encode's specification: encoding/json of the
// equivalent Object.
func encodeJSONObject(t *testing.T, raw *rawObject) []byte {
	t.Helper()
	obj := struct {
		Version    string          `json:"version,omitempty"`
		Meta       Meta            `json:"metadata"`
		Spec       json.RawMessage `json:"spec"`
		Status     json.RawMessage `json:"status"`
		Conditions []Condition     `json:"conditions,omitempty"`
		Preserved  json.RawMessage `json:"preserved,omitempty"`
	}{raw.Version, raw.Meta, orNull(raw.Spec), orNull(raw.Status), raw.Conditions, raw.Preserved}
	want, err := json.Marshal(obj)
	require.NoError(t, err)
	return want
}

// A stored value is byte for byte what encoding/json gives, whatever its
// metadata and conditions hold: strings encoding/json escapes (quotes,
// control characters, <, > and &, UTF-8, U+2028), empty and nil maps,
// owners, finalizers, times in other zones. An eighth of the objects under
// -race (see race.Sweep).
func TestEncodeAgreesWithEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 1))
	for i := range race.Sweep(4000, 8) {
		obj := randomObject(rng)
		spec, err := json.Marshal(obj.Spec)
		require.NoError(t, err)
		raw := &rawObject{Meta: obj.Meta, Spec: spec, Status: json.RawMessage(`{"ready":1}`), Conditions: obj.Conditions}
		switch i % 4 {
		case 1:
			raw.Version, raw.Status = "v2", nil
		case 2:
			raw.Preserved = json.RawMessage(`{"old":true}`)
		}
		got, err := raw.encode()
		require.NoError(t, err)
		require.Equal(t, string(encodeJSONObject(t, raw)), string(got), "object %d", i)
	}
}

// Each string of the metadata and conditions, holding any one character
// encoding/json escapes or a plain one, is encoded as encoding/json does.
func TestEncodeEscapesEachStringAsEncodingJSON(t *testing.T) {
	for _, s := range []string{"a", "", "<", ">", "&", `"`, `\`, "\n", "\x00", "\x1f", "\x7f", "é", "\u2028", "\u2029", "\xff", "~", " "} {
		sets := []func(raw *rawObject){
			func(raw *rawObject) { raw.Meta.Kind = s },
			func(raw *rawObject) { raw.Meta.Name = s },
			func(raw *rawObject) { raw.Meta.UID = s },
			func(raw *rawObject) { raw.Meta.Labels = map[string]string{s: "v", "k": s} },
			func(raw *rawObject) { raw.Meta.Annotations = map[string]string{s: "v", "k": s} },
			func(raw *rawObject) { raw.Meta.Owners = []OwnerRef{{Kind: s}, {Name: s, Controller: true}, {UID: s}} },
			func(raw *rawObject) { raw.Meta.Finalizers = []string{"f", s} },
			func(raw *rawObject) {
				raw.Meta.Managed = []ManagedFields{{Manager: s}, {Operation: s}, {Subresource: s}, {Fields: s}}
			},
			func(raw *rawObject) { raw.Meta.LastWrite = LastWrite{Manager: s, Op: ownership.Operation(s), Trace: s} },
			func(raw *rawObject) {
				raw.Conditions = []Condition{{Type: s}, {Status: ConditionStatus(s)}, {Reason: s}, {Message: s, ObservedGeneration: -1}}
			},
		}
		for i, set := range sets {
			raw := &rawObject{Meta: Meta{Kind: "K", Name: "a", Generation: 1}}
			set(raw)
			got, err := raw.encode()
			require.NoError(t, err)
			require.Equal(t, string(encodeJSONObject(t, raw)), string(got), "%q in string %d", s, i)
		}
	}
}

// A time encoding/json cannot encode is an error, as it was.
func TestEncodeRefusesATimeOutOfRange(t *testing.T) {
	raw := &rawObject{Meta: Meta{Kind: "K", Name: "a"}, Conditions: []Condition{{Type: "Ready", Status: ConditionTrue,
		LastTransitionTime: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}}
	_, err := raw.encode()
	require.ErrorIs(t, err, ErrInvalid)
}

// Encoding a stored value of plain strings allocates only the value: its
// metadata and conditions are not encoded through encoding/json's
// reflection first (10 allocations before, and most of a write's encoding
// time).
func TestEncodeAllocatesOnlyTheValue(t *testing.T) {
	if race.Enabled {
		t.Skip("counts allocations")
	}
	raw := &rawObject{
		Meta: Meta{Kind: "App", Name: "app-00001", UID: "a1481bf9-a495-4df5-9dc0-2cf3ac01185c",
			Labels: map[string]string{"app": "web", "tier": "backend"},
			Managed: []ManagedFields{{Manager: "user", Operation: "Update", Fields: "~U8kYlQ_g"},
				{Manager: "ctrl", Operation: "Apply", Subresource: "status", Fields: "~Dha_owBA"}},
			LastWrite: LastWrite{Manager: "ctrl", Op: "ApplyStatus"}, Generation: 3, StatusGeneration: 2},
		Spec:       json.RawMessage(`{"replicas":1,"image":"registry.example.com/team/app:v1.2.3"}`),
		Status:     json.RawMessage(`{"readyReplicas":1}`),
		Conditions: []Condition{{Type: "Reconciling", Status: ConditionFalse, Reason: "Reconciled", LastTransitionTime: time.Unix(1e9, 0).UTC()}},
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := raw.encode(); err != nil {
			t.Fatal(err)
		}
	})
	require.Equal(t, string(encodeJSONObject(t, raw)), string(must(raw.encode())))
	require.LessOrEqualf(t, allocs, 2.0, "encoding a stored value allocates %v times", allocs)
}

// An encoded value holds no room beyond its length (its capacity is its
// length; the allocator's rounding is an eighth at most): a Backend keeps
// it as the stored value (memstore without a copy, kv.Write.Owned), and
// room sized by encode's hint was ~20% of a controller's memory of
// values. So does a Spec's or Status's encoding (encodeWith).
func TestEncodedValueHoldsNoSlack(t *testing.T) {
	raw := &rawObject{
		Meta: Meta{Kind: "App", Name: "app-1", UID: "7340cbd1-cf1e-4851-ba73-ef346d637196",
			Managed: []ManagedFields{{Manager: "user", Operation: "Update", Fields: "~OVitRw_g"},
				{Manager: "app-controller", Operation: "Apply", Subresource: "status", Fields: "~Dha_owBA"}},
			LastWrite: LastWrite{Manager: "app-controller", Op: "ApplyStatus"}, Generation: 2, StatusGeneration: 1},
		Spec:   json.RawMessage(`{"replicas":5,"image":"registry.example.com/platform/web-frontend:v1.27.3","args":["--listen=:8080","--log-level=info","--config=/etc/web/config.yaml"],"selector":{"app":"web","shard":"1"}}`),
		Status: json.RawMessage(`{"readyReplicas":5}`),
	}
	for range 3 { // the pooled buffer's reuse too
		v := must(raw.encode())
		require.Equal(t, len(v), cap(v), "%d bytes in a buffer of %d", len(v), cap(v))
		s, ok := encodeSide(raw.Meta) // a struct with a sideEncoder: 336 bytes
		require.True(t, ok)
		require.Equal(t, len(s), cap(s), "%d bytes in a buffer of %d", len(s), cap(s))
	}
}

// BenchmarkEncodeStored encodes the stored value of an object of the
// controller-shaped benchmark's shape (bench/cmd/ctl-steady), as every
// write does.
//
//	go test -run '^$' -bench EncodeStored -benchmem ./store/
func BenchmarkEncodeStored(b *testing.B) {
	raw := &rawObject{
		Meta: Meta{Kind: "App", Name: "app-00001", UID: "a1481bf9-a495-4df5-9dc0-2cf3ac01185c",
			Managed: []ManagedFields{{Manager: "user", Operation: "Update", Fields: "~U8kYlQ_g"},
				{Manager: "app-controller", Operation: "Apply", Subresource: "status", Fields: "~Dha_owBA"}},
			LastWrite: LastWrite{Manager: "app-controller", Op: "ApplyStatus"}, Generation: 3, StatusGeneration: 2},
		Spec: json.RawMessage(`{"replicas":1,"image":"registry.example.com/team/app:v1.2.3","args":["--listen=:8080","--verbose",` +
			`"--config=/etc/app/config.yaml"],"selector":{"app":"app-00001","tier":"backend"}}`),
		Status: json.RawMessage(`{"readyReplicas":1}`),
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := raw.encode(); err != nil {
			b.Fatal(err)
		}
	}
}

func must[V any](v V, err error) V {
	if err != nil {
		panic(err)
	}
	return v
}
