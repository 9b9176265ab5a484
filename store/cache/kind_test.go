package cache_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

type (
	kindSpec   struct{ N int }
	kindStatus struct{}
)

func TestCacheShowsItsStoresKindAndVersion(t *testing.T) {
	vs, err := store.NewVersions("v1", store.VersionOf("v1", store.Conversion[kindSpec, kindStatus, kindSpec, kindStatus]{}))
	require.NoError(t, err)
	st, err := store.New[kindSpec, kindStatus](memstore.New(), "Widget", store.WithVersion("v1", vs))
	require.NoError(t, err)
	c := cache.New[kindSpec, kindStatus](st)
	require.Equal(t, "Widget", c.Kind())
	require.Equal(t, "v1", c.Version())

	plain, err := store.New[kindSpec, kindStatus](memstore.New(), "Widget")
	require.NoError(t, err)
	require.Equal(t, "", cache.New[kindSpec, kindStatus](plain).Version(), "a kind without versions")
}
