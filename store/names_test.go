package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

func TestNewValidatesTheKind(t *testing.T) {
	tests := []struct {
		kind string
		rule string // "" when valid
	}{
		{"Deployment", ""},
		{"widget", ""},
		{"Widget.example.com", ""},
		{"my_kind-2", ""},
		{strings.Repeat("K", 63), ""},
		{"", "must not be empty"},
		{strings.Repeat("K", 64), "must be at most 63 characters"},
		{"9lives", "must start with an ASCII letter"},
		{"_x", "must start with an ASCII letter"},
		{"a/b", "may contain only ASCII letters, digits, '.', '-' and '_'"},
		{"a b", "may contain only ASCII letters, digits, '.', '-' and '_'"},
		{"Kätzchen", "may contain only ASCII letters, digits, '.', '-' and '_'"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			_, err := store.New[typedSpec, typedStatus](memstore.New(), tt.kind)
			if tt.rule == "" {
				require.NoError(t, err)
				return
			}
			requireRule(t, err, "kind", tt.kind, tt.rule)
		})
	}
}

func TestValidateName(t *testing.T) {
	seg63 := strings.Repeat("a", 63)
	tests := []struct {
		name string
		rule string // "" when valid
	}{
		{"web", ""},
		{"web-1", ""},
		{"0", ""},
		{"web.example.com", ""},
		{"a--b", ""},
		{seg63 + "." + seg63 + "." + seg63 + "." + strings.Repeat("a", 61), ""}, // 253
		{"", "must not be empty"},
		{seg63 + "." + seg63 + "." + seg63 + "." + strings.Repeat("a", 62), "must be at most 253 characters"},
		{"Web", "may contain only lowercase ASCII letters, digits, '-' and '.'"},
		{"web_1", "may contain only lowercase ASCII letters, digits, '-' and '.'"},
		{"a/b", "may contain only lowercase ASCII letters, digits, '-' and '.'"},
		{"a b", "may contain only lowercase ASCII letters, digits, '-' and '.'"},
		{".web", "must not have an empty segment between dots"},
		{"web.", "must not have an empty segment between dots"},
		{"web..a", "must not have an empty segment between dots"},
		{strings.Repeat("a", 64), "must have segments of at most 63 characters between dots"},
		{"-web", "must start and end every dot-separated segment with a lowercase letter or digit"},
		{"web-", "must start and end every dot-separated segment with a lowercase letter or digit"},
		{"a.-b", "must start and end every dot-separated segment with a lowercase letter or digit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := store.ValidateName(tt.name)
			if tt.rule == "" {
				require.NoError(t, err)
				return
			}
			requireRule(t, err, "name", tt.name, tt.rule)
		})
	}
}

func requireRule(t *testing.T, err error, what, value, rule string) {
	t.Helper()
	require.ErrorIs(t, err, store.ErrInvalid)
	var ne *store.InvalidNameError
	require.True(t, errors.As(err, &ne), "error %v is not an *InvalidNameError", err)
	require.Equal(t, what, ne.What)
	require.Equal(t, value, ne.Value)
	require.Equal(t, rule, ne.Rule)
	require.Contains(t, err.Error(), rule)
}

// A 1 MiB bad name used to make a 1 MiB error message.
func TestInvalidNameErrorIsBounded(t *testing.T) {
	huge := strings.Repeat("X", 1<<20)
	err := store.ValidateName(huge)
	require.ErrorIs(t, err, store.ErrInvalid)
	require.Less(t, len(err.Error()), 512)
	require.Contains(t, err.Error(), "(1048576 bytes)")
}
