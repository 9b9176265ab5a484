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
