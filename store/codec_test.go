package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store"
)

func TestDecodeMetaWithoutSpecAndStatusTypes(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	obj := store.Object[map[string]any, []int]{
		Meta: store.Meta{
			Kind: "Widget", Name: "w", UID: "u-1", Generation: 3, Revision: 42,
			Labels:    map[string]string{"app": "web"},
			LastWrite: store.LastWrite{Manager: "m", Op: ownership.OpUpdate},
		},
		Spec:       map[string]any{"x": 1},
		Status:     []int{1, 2},
		Conditions: []store.Condition{{Type: "Ready", Status: store.ConditionTrue, LastTransitionTime: at}},
	}
	value, err := json.Marshal(obj)
	require.NoError(t, err)
	require.NotContains(t, string(value), "42", "Revision must not be encoded")

	meta, conds, err := store.DecodeMeta(value)
	require.NoError(t, err)
	want := obj.Meta
	want.Revision = 0
	require.Equal(t, want, meta)
	require.Equal(t, obj.Conditions, conds)

	_, _, err = store.DecodeMeta([]byte("not json"))
	require.ErrorIs(t, err, store.ErrInvalid)
}

func FuzzDecodeMeta(f *testing.F) {
	f.Add([]byte(`{"metadata":{"kind":"Widget","name":"w","uid":"u","generation":2,"labels":{"a":"b"}},"spec":{"x":1},"status":null}`))
	f.Add([]byte(`{"metadata":{"managed":[{"manager":"m","operation":"Apply","fields":"~x"}]},"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"metadata":null}`))
	f.Add([]byte(`{"meta":{"kind":"Widget","name":"w"}}`)) // the legacy key
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"metadata":{"generation":"x"}}`))
	f.Fuzz(func(t *testing.T, value []byte) {
		meta, conds, err := store.DecodeMeta(value)
		if err != nil {
			require.ErrorIs(t, err, store.ErrInvalid)
			return
		}
		// What decodes re-encodes to a value that decodes and re-encodes to
		// the same bytes (empty and absent collections may differ once).
		encode := func(m store.Meta, c []store.Condition) []byte {
			b, err := json.Marshal(struct {
				Meta       store.Meta        `json:"metadata"`
				Conditions []store.Condition `json:"conditions,omitempty"`
			}{m, c})
			require.NoError(t, err)
			return b
		}
		again := encode(meta, conds)
		meta2, conds2, err := store.DecodeMeta(again)
		require.NoError(t, err)
		require.Equal(t, string(again), string(encode(meta2, conds2)))
	})
}
