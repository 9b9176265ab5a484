package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
)

func TestParseSelectorMatches(t *testing.T) {
	web := map[string]string{"app": "web", "tier": "front"}
	db := map[string]string{"app": "db"}
	none := map[string]string(nil)
	tests := []struct {
		sel   string
		canon string
		match []map[string]string
		miss  []map[string]string
	}{
		{"", "", []map[string]string{web, db, none}, nil},
		{"app=web", "app=web", []map[string]string{web}, []map[string]string{db, none}},
		{"app==web", "app=web", []map[string]string{web}, []map[string]string{db, none}},
		{"app!=web", "app!=web", []map[string]string{db, none}, []map[string]string{web}},
		{"app in (web, db)", "app in (db,web)", []map[string]string{web, db}, []map[string]string{none}},
		{"app notin (web)", "app notin (web)", []map[string]string{db, none}, []map[string]string{web}},
		{"tier", "tier", []map[string]string{web}, []map[string]string{db, none}},
		{"!tier", "!tier", []map[string]string{db, none}, []map[string]string{web}},
		{" tier , app = web ", "app=web,tier", []map[string]string{web}, []map[string]string{db, none}},
		{"app=web,app=db", "app=db,app=web", nil, []map[string]string{web, db, none}},
		{"app in (x,x,y)", "app in (x,y)", nil, []map[string]string{web}},
		{"tier=", "tier=", []map[string]string{{"tier": ""}}, []map[string]string{web, none}},
		{"example.com/role=x_1", "example.com/role=x_1", []map[string]string{{"example.com/role": "x_1"}}, []map[string]string{none}},
	}
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			sel, err := store.ParseSelector(tt.sel)
			require.NoError(t, err)
			require.Equal(t, tt.canon, sel.String())
			for _, l := range tt.match {
				require.True(t, sel.Matches(l), "%q should match %v", tt.sel, l)
			}
			for _, l := range tt.miss {
				require.False(t, sel.Matches(l), "%q should not match %v", tt.sel, l)
			}
			again, err := store.ParseSelector(sel.String())
			require.NoError(t, err)
			require.Equal(t, sel.String(), again.String())
		})
	}
}

func TestParseSelectorErrors(t *testing.T) {
	tests := []struct{ sel, want string }{
		{",", "want a label key"},
		{"a,", "want a label key"},
		{"a b", "want an operator"},
		{"a=b c", "want ',' or the end"},
		{"a in x", "want '(' to open a value list"},
		{"a in ()", "want a non-empty value in the list"},
		{"a in (x", "want ',' or ')'"},
		{"a in (x,)", "want a non-empty value in the list"},
		{"!", "want a label key"},
		{"a=b=c", "want ',' or the end"},
		{"a@b", "want an operator"},
		{"a=b/c", "want ',' or the end"},
	}
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			_, err := store.ParseSelector(tt.sel)
			require.ErrorIs(t, err, store.ErrInvalid)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestMatchLabels(t *testing.T) {
	sel := store.MatchLabels(map[string]string{"tier": "front", "app": "web"})
	require.Equal(t, "app=web,tier=front", sel.String())
	require.True(t, sel.Matches(map[string]string{"app": "web", "tier": "front", "x": "y"}))
	require.False(t, sel.Matches(map[string]string{"app": "web"}))
	require.True(t, store.MatchLabels(nil).Matches(nil))
	require.Empty(t, store.MatchLabels(nil).String())
}

func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"", "a=b", "a!=b,c", "a in (x, y),!d", "a notin (z)", "x==", "a in (", "!"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := store.ParseSelector(s)
		if err != nil {
			require.ErrorIs(t, err, store.ErrInvalid)
			return
		}
		again, err := store.ParseSelector(sel.String())
		require.NoError(t, err, "canonical form %q of %q does not parse", sel.String(), s)
		require.Equal(t, sel.String(), again.String())
		for _, l := range []map[string]string{nil, {"a": "b"}, {"a": "x", "d": ""}} {
			require.Equal(t, sel.Matches(l), again.Matches(l))
		}
	})
}
