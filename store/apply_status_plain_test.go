package store_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

type plainStatus struct {
	Ready    int64     `json:"ready"`
	Message  string    `json:"message,omitempty"`
	Since    time.Time `json:"since"`
	Counts   [2]uint8  `json:"counts"`
	Progress struct {
		Done  float64 `json:"done"`
		Phase string  `json:"phase"`
	} `json:"progress"`
}

// An ApplyStatus of a value of the Status type, which the Store encodes
// once and stores as it encodes when the merge keeps it as applied, stores
// what applying the same status as a map (encoded, merged, decoded as the
// Status type and encoded again) stores: the same status, conditions and
// ownership record, alone, beside another manager's status field or
// condition, and when it removes a field it applied before.
func TestApplyStatusOfTheTypeStoresWhatItsTreeStores(t *testing.T) {
	ctx := t.Context()
	st, err := store.New[judgeSpec, plainStatus](memstore.New(), "App")
	require.NoError(t, err)
	typed, tree := st.As("ctrl"), st.As("ctrl")
	other := st.As("other")
	for _, name := range []string{"typed", "tree"} {
		_, err := st.As("user").Create(ctx, &store.Object[judgeSpec, plainStatus]{Meta: store.Meta{Name: name}})
		require.NoError(t, err)
	}
	asTree := func(v any) map[string]any {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		return m
	}
	stored := func(name string) map[string]any {
		kv, err := st.Backend().Get(ctx, "App/"+name)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(kv.Value, &m))
		meta := m["metadata"].(map[string]any)
		for _, k := range []string{"name", "uid", "creationTimestamp", "revision"} {
			delete(meta, k)
		}
		return m
	}
	since := time.Date(2026, 12, 1, 23, 0, 0, 123, time.FixedZone("", 3600))
	s := plainStatus{Ready: 3, Message: "<ok> & more", Since: since, Counts: [2]uint8{1, 2}}
	s.Progress.Done, s.Progress.Phase = 0.1, "rolling"
	steps := []struct {
		what   string
		before func(name string)
		status plainStatus
		conds  []store.Condition
	}{
		{what: "alone", status: s},
		{what: "with conditions", status: s, conds: []store.Condition{{Type: "Ready", Status: store.ConditionTrue, Reason: "Fine", LastTransitionTime: since}}},
		{what: "beside another manager's condition", before: func(name string) {
			_, err := other.ApplyStatus(ctx, name, nil, []store.Condition{{Type: "Other", Status: store.ConditionFalse, Reason: "Waiting", LastTransitionTime: since}})
			require.NoError(t, err)
		}, status: plainStatus{Ready: 4, Since: since}},
		{what: "beside another manager's field", before: func(name string) {
			_, err := other.ApplyStatus(ctx, name, map[string]any{"message": "theirs"}, nil)
			require.NoError(t, err)
		}, status: plainStatus{Ready: 5}},
	}
	for _, step := range steps {
		for _, name := range []string{"typed", "tree"} {
			if step.before != nil {
				step.before(name)
			}
		}
		_, err := typed.ApplyStatus(ctx, "typed", step.status, step.conds)
		require.NoError(t, err, step.what)
		_, err = tree.ApplyStatus(ctx, "tree", asTree(step.status), step.conds)
		require.NoError(t, err, step.what)
		require.Equal(t, stored("tree"), stored("typed"), step.what)
	}
}

// An apply of conditions alone (the Loop's Reconciling, Stalled, Paused)
// stores the status it leaves alone as it was stored, byte for byte,
// rather than decoding and encoding it again; its conditions and ownership
// change as they would otherwise.
func TestApplyOfConditionsOnlyKeepsTheStoredStatus(t *testing.T) {
	ctx := t.Context()
	b := memstore.New()
	st := newTypedStore(t, b)
	_, err := st.As("user").Create(ctx, &typedObj{Meta: store.Meta{Name: "a"}, Spec: typedSpec{Replicas: 1}})
	require.NoError(t, err)
	_, err = st.As("ctrl").ApplyStatus(ctx, "a", typedStatus{Ready: 1}, nil)
	require.NoError(t, err)
	// The status as another client may have stored it: valid, not as the
	// Store encodes it.
	stored, err := b.Get(ctx, st.Prefix()+"a")
	require.NoError(t, err)
	require.Contains(t, string(stored.Value), `"status":{"Ready":1}`)
	odd := strings.Replace(string(stored.Value), `"status":{"Ready":1}`, `"status":{ "Ready" : 1 }`, 1)
	_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: st.Prefix() + "a", Value: []byte(odd)})
	require.NoError(t, err)

	c := store.Condition{Type: "Reconciling", Status: store.ConditionTrue, Reason: "Progressing"}
	res, err := st.As("loop").ApplyStatus(ctx, "a", nil, []store.Condition{c}, store.WithForce())
	require.NoError(t, err)
	require.True(t, res.Changed)
	stored, err = b.Get(ctx, st.Prefix()+"a")
	require.NoError(t, err)
	require.Contains(t, string(stored.Value), `"status":{ "Ready" : 1 }`)
	got, err := st.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, typedStatus{Ready: 1}, got.Status)
	require.Len(t, got.Conditions, 1)
	require.Equal(t, "Reconciling", got.Conditions[0].Type)
	changed := *got
	changed.Status.Ready = 2
	owned, foreign := st.FieldChanges(got, &changed, "ctrl")
	require.Len(t, owned, 1, "ctrl still owns its status field")
	require.Empty(t, foreign)
}
