package reconciletest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

func TestKindNameShowsTheVersion(t *testing.T) {
	type spec struct{ N int }
	vs, err := store.NewVersions("v1", store.VersionOf("v1", store.Conversion[spec, spec, spec, spec]{}))
	require.NoError(t, err)
	st, err := store.New[spec, spec](memstore.New(), "Widget", store.WithVersion("v1", vs))
	require.NoError(t, err)
	require.Equal(t, "Widget@v1", kindName(st))
	plain, err := store.New[spec, spec](memstore.New(), "Widget")
	require.NoError(t, err)
	require.Equal(t, "Widget", kindName(plain))
}
