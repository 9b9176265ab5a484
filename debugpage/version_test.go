package debugpage_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/debugpage"
)

// kindCache is a cache of a versioned kind.
type kindCache struct{}

func (kindCache) HasSynced() bool { return true }
func (kindCache) Revision() int64 { return 3 }
func (kindCache) Len() int        { return 1 }
func (kindCache) Kind() string    { return "Widget" }
func (kindCache) Version() string { return "v2" }

func TestCachesShowKindAndVersion(t *testing.T) {
	page := debugpage.New()
	require.NoError(t, page.AddCache("widgets", kindCache{}))
	caches := decode[[]debugpage.CacheView](t, get(t, page, "/api/caches"))
	require.Len(t, caches, 1)
	require.Equal(t, "Widget", caches[0].Kind)
	require.Equal(t, "v2", caches[0].Version)
}
