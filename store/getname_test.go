package store

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Get validates the name it is given once, before its read, and decodes
// the value as that name's: the value must still claim the Store's kind
// and that very name (a value that claims another is undecodable, a
// *DecodeError wrapping ErrInvalid), and a name that breaks the rules gets
// ErrInvalid without a read.
func TestGetChecksTheValuesIdentityWithTheNameAsked(t *testing.T) {
	ctx := context.Background()
	b := newMapBackend()
	st, err := New[ctlSpec, ctlStatus](b, "App")
	require.NoError(t, err)
	app := controllerApp()
	app.Meta = Meta{Name: "app-1"}
	_, err = st.As("m").Create(ctx, app)
	require.NoError(t, err)
	key := st.Prefix() + "app-1"
	good := b.m[key]

	got, err := st.Get(ctx, "app-1")
	require.NoError(t, err)
	require.Equal(t, "app-1", got.Meta.Name)
	require.Equal(t, "App", got.Meta.Kind)
	require.Equal(t, good.ModRevision, got.Meta.Revision)

	for _, c := range []struct{ from, to string }{{`"name":"app-1"`, `"name":"app-2"`}, {`"kind":"App"`, `"kind":"Other"`}, {`"name":"app-1"`, `"name":"App-1"`}} {
		bad := good
		bad.Value = []byte(strings.Replace(string(good.Value), c.from, c.to, 1))
		require.NotEqual(t, good.Value, bad.Value)
		b.m[key] = bad
		got, err := st.Get(ctx, "app-1")
		require.Nil(t, got, c.to)
		var de *DecodeError
		require.ErrorAs(t, err, &de, c.to)
		require.ErrorIs(t, err, ErrInvalid, c.to)
		require.ErrorContains(t, err, "the value claims", c.to)
		require.Equal(t, "app-1", de.Name)
	}

	// A Backend that answers with another key's value: Get returns no
	// object of a name other than the one asked for.
	b.m[key] = good
	other := good
	other.Key = st.Prefix() + "app-2"
	other.Value = []byte(strings.Replace(string(good.Value), `"name":"app-1"`, `"name":"app-2"`, 1))
	b.m[key] = other
	got, err = st.Get(ctx, "app-1")
	require.Nil(t, got)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, `the value claims name "app-2"`)

	b.m[key] = good
	for _, name := range []string{"", "App-1", "a..b", "-a", "a/b", strings.Repeat("a", maxNameLength+1)} {
		got, err := st.Get(ctx, name)
		require.Nil(t, got, name)
		require.ErrorIs(t, err, ErrInvalid, name)
		var de *DecodeError
		require.False(t, errors.As(err, &de), "%q: refused before any read", name)
	}
}
