package store

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/ownership"
)

// configTree gives the tree ownership.ToTree gives, which is the documented
// meaning of an applied configuration: integral numbers as int64, others
// as float64, omitempty fields and nil pointers left out, escapes decoded.
func TestConfigTreeIsToTree(t *testing.T) {
	type inner struct {
		N   int            `json:"n"`
		F   float64        `json:"f"`
		Opt *int           `json:"opt,omitempty"`
		M   map[string]any `json:"m,omitempty"`
	}
	zero := 0
	for name, doc := range map[string]any{
		"status":  struct{ Status any }{inner{N: 3, F: 1.5}},
		"numbers": struct{ Status any }{map[string]any{"big": int64(math.MaxInt64), "u": uint64(math.MaxUint64), "neg": -1, "f": 1e300, "whole": 2.0}},
		"escapes": struct{ Status any }{map[string]any{"k\"ey": "a\u00e9\n\\b", "é": []any{"x", 1, nil, true}}},
		"nested":  struct{ Status any }{inner{Opt: &zero, M: map[string]any{"a": map[string]any{"b": []any{map[string]any{"c": 1}}}}}},
		"empty":   struct{ Status any }{nil},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := ownership.ToTree(doc)
			require.NoError(t, err)
			got, err := configTree(doc)
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
}

// The status-side tree's conditions are built from the conditions as they
// are, and are the tree their JSON decodes to (what an ownership record is
// made against): the same strings, escapes and all, the same time text,
// omitempty fields left out, and integers as int64. Strings that are not
// valid UTF-8, which JSON replaces, and times that do not encode take the
// JSON way, so they too give what they gave before.
func TestStatusTreeConditionsAreTheirJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 1))
	strs := []string{"", "Ready", "a\"b\\c", "<&>", "line\nbreak\t\u2028", "ünï", "\xff\xfe", "3/5 running web:v1", "\x00"}
	times := []time.Time{{}, time.Date(2026, 1, 2, 3, 4, 5, 678900000, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 5*3600+1800)), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	gens := []int64{0, 1, -3, math.MaxInt64, 1 << 53}
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	for range 2000 {
		var conds []Condition
		for range rng.IntN(4) {
			conds = append(conds, Condition{Type: pick(strs), Status: ConditionStatus(pick(strs)), Reason: pick(strs), Message: pick(strs),
				LastTransitionTime: times[rng.IntN(len(times))], ObservedGeneration: gens[rng.IntN(len(gens))]})
		}
		raw := &rawObject{Status: []byte(`{"running":1}`), Conditions: conds}
		got, gotErr := statusTreeOf(raw, false)
		want, wantErr := statusTreeByJSON(raw)
		require.Equal(t, wantErr != nil, gotErr != nil, "%+v: errors %v and %v", conds, wantErr, gotErr)
		require.Equal(t, want, got, "%+v", conds)
	}

	raw := &rawObject{Status: []byte(`{"running":3}`), Conditions: []Condition{
		{Type: "Ready", Status: ConditionTrue, Reason: "AllRunning", Message: "3/3 running web:v1", LastTransitionTime: times[1], ObservedGeneration: 1},
		{Type: "Reconciling", Status: ConditionFalse, Reason: "Reconciled", Message: "fleet-controller: generation 1 reconciled", LastTransitionTime: times[1]}}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 1000 {
		_, _ = statusTreeOf(raw, false)
	}
	runtime.ReadMemStats(&after)
	perTree := (after.TotalAlloc - before.TotalAlloc) / 1000
	t.Logf("a fleet object's status tree: %d bytes allocated", perTree)
	require.Less(t, perTree, uint64(2000), "bytes allocated for a fleet object's status tree (3,380 the JSON way)")
}

// statusTreeByJSON is statusTreeOf as it was: the conditions encoded as
// JSON and decoded into a tree.
func statusTreeByJSON(raw *rawObject) (map[string]any, error) {
	status, err := decodeTree(orNull(raw.Status))
	if err != nil {
		return nil, err
	}
	tree := map[string]any{"status": status}
	if len(raw.Conditions) > 0 {
		conds, err := json.Marshal(raw.Conditions)
		if err != nil {
			return nil, err
		}
		if tree["conditions"], err = decodeTree(conds); err != nil {
			return nil, err
		}
	}
	return tree, nil
}
