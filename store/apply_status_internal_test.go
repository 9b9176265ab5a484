package store

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/race"
)

// The status-side tree of an applied status and conditions is what
// configTree gives for them, whatever form the status takes (none, its
// JSON as an applied T gives it, JSON with spaces, JSON that is not valid,
// a map, a struct) and whatever the conditions hold, and so are the errors.
func TestStatusConfigTreeAgreesWithConfigTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 2))
	for i := range race.Sweep(1000, 8) {
		obj := randomObject(rng)
		conds := obj.Conditions
		if i%7 == 0 {
			conds = append(conds, Condition{Type: "bad\xff", Status: ConditionTrue})
		}
		if i%11 == 0 {
			conds = append(conds, Condition{Type: "Far", Status: ConditionTrue, LastTransitionTime: time.Date(10001, 1, 1, 0, 0, 0, 0, time.UTC)})
		}
		typed, err := json.Marshal(obj.Status)
		require.NoError(t, err)
		for j, status := range []any{nil, json.RawMessage(typed), json.RawMessage(` { "ready" : 2 , "x":[1, 2.5e3,null] } `),
			json.RawMessage(`{"ready":`), json.RawMessage(nil), map[string]any{"ready": 3}, obj.Status} {
			want, wantErr := configTree(struct {
				Status     any         `json:"status,omitempty"`
				Conditions []Condition `json:"conditions,omitempty"`
			}{status, conds})
			got, err := statusConfigTree(status, conds)
			if wantErr != nil {
				require.EqualError(t, err, wantErr.Error(), "object %d, status %d", i, j)
				continue
			}
			require.NoError(t, err, "object %d, status %d", i, j)
			require.Equal(t, want, got, "object %d, status %d", i, j)
		}
	}
}

// deepStatus nests through pointers: a chain deeper than maxEncodeDepth is
// one its sideEncoder leaves to encoding/json.
type deepStatus struct {
	N    int64       `json:"n"`
	Next *deepStatus `json:"next,omitempty"`
}

// A status apply's encoding of a T, by the Store's sideEncoder of T looked
// up once, is encodeJSON's: for a T the sideEncoder takes, one it declines
// (a chain deeper than it goes), and a T that has none (a time), on the
// lookup and after it.
func TestEncodeAppliedIsEncodeJSON(t *testing.T) {
	deep := &deepStatus{N: 1}
	for i := range maxEncodeDepth + 10 {
		deep = &deepStatus{N: int64(i), Next: deep}
	}
	check := func(enc func(any) ([]byte, error), vs ...any) {
		t.Helper()
		for range 2 { // the lookup, then the Store's own
			for i, v := range vs {
				want, err := encodeJSON("applied status", v)
				require.NoError(t, err)
				got, err := enc(v)
				require.NoError(t, err, "value %d", i)
				require.Equal(t, string(want), string(got), "value %d", i)
			}
		}
	}
	ds, err := New[firstSpec, deepStatus](newMapBackend(), "Deep")
	require.NoError(t, err)
	check(ds.encodeApplied, deepStatus{N: 7}, deepStatus{N: 8, Next: &deepStatus{N: 9}}, *deep)
	require.NotNil(t, *ds.statusEnc.Load(), "a deepStatus has a sideEncoder")

	ts, err := New[firstSpec, struct {
		At time.Time `json:"at"`
	}](newMapBackend(), "Timed")
	require.NoError(t, err)
	check(ts.encodeApplied, struct {
		At time.Time `json:"at"`
	}{time.Date(2026, 12, 4, 23, 0, 0, 5, time.UTC)})
	require.Nil(t, *ts.statusEnc.Load(), "a time has no sideEncoder")
}
