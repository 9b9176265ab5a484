package store

import (
	"math"
	"testing"

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
