package store

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/race"
)

// The depth check a write of a Spec holding a tree makes first walks the
// tree without allocating: a reflect.MapIter per map was an allocation per
// map of every such write.
func TestJSONDepthCheckOfATreeAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("counts allocations")
	}
	v := struct{ Data any }{Data: map[string]any{"a": map[string]any{"b": []any{1.0, "x", map[string]any{"c": true}}}, "d": "e"}}
	rv := reflect.ValueOf(v)
	require.NoError(t, checkJSONDepth("spec", rv, 1))
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = checkJSONDepth("spec", rv, 1) }))
	// Not walked at all: a type that cannot nest without bound.
	require.False(t, mayNestDeep(reflect.TypeFor[struct{ A []map[string]string }]()))
	require.True(t, mayNestDeep(reflect.TypeFor[struct{ A []any }]()))
}
