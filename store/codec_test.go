package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
)

func TestDecodeMetaWithoutSpecAndStatusTypes(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	obj := store.Object[map[string]any, []int]{
		Meta: store.Meta{
			Kind: "Widget", Name: "w", UID: "u-1", Generation: 3, Revision: 42,
			Labels:    map[string]string{"app": "web"},
			LastWrite: store.LastWrite{Manager: "m", Op: store.OpUpdate},
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
