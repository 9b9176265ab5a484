package ownership

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSchemaForReadsTags(t *testing.T) {
	type item struct {
		Name string `json:"name"`
		Sub  struct {
			List []string `json:"list" steady:"set"`
		} `json:"sub"`
	}
	type embedded struct {
		Inner []item `json:"inner" steady:"keys=name"`
	}
	type root struct {
		embedded
		Items   []item            `json:"items" steady:"keys=name"`
		ByName  map[string][]item `json:"byName"`
		Frozen  struct{ A int }   `json:"frozen" steady:"atomic"`
		Skipped []item            `json:"-" steady:"keys=name"`
		Plain   []item
	}
	s, err := SchemaFor((*root)(nil))
	require.NoError(t, err)
	top := s.top()
	require.Equal(t, "keys=name", top.field("items").strat.String())
	require.Equal(t, "keys=name", top.field("inner").strat.String(), "embedded fields are flattened")
	require.Equal(t, "set", top.field("items").item().field("sub").field("list").strat.String())
	require.Equal(t, "default", top.field("byName").item().strategy().String())
	require.Equal(t, "set", top.field("byName").item().item().field("sub").field("list").strat.String(), "maps and slices of structs")
	require.Equal(t, "atomic", top.field("frozen").strat.String())
	require.Nil(t, top.field("Skipped").field("x"))
	require.Equal(t, "default", top.field("Plain").strat.String(), "untagged slices are atomic")
}

func (k strategyKind) String() string { return Strategy{kind: k}.String() }

func TestSchemaForRejectsBadTags(t *testing.T) {
	type item struct {
		Name string `json:"name"`
	}
	cases := map[string]any{
		"unknown tag": struct {
			A []int `steady:"sorted"`
		}{},
		"set of structs": struct {
			A []item `steady:"set"`
		}{},
		"keys on scalars": struct {
			A []string `steady:"keys=name"`
		}{},
		"missing key field": struct {
			A []item `steady:"keys=id"`
		}{},
		// Accepted before, and failed only at the first Apply.
		"struct-valued key field": struct {
			A []struct {
				ID struct{ X int } `json:"id"`
			} `steady:"keys=id"`
		}{},
		"atomic on a scalar": struct {
			A int `steady:"atomic"`
		}{},
	}
	for name, v := range cases {
		_, err := SchemaFor(v)
		require.Error(t, err, name)
	}
	_, err := SchemaFor(nil)
	require.Error(t, err)
}

func TestNewSchemaPatterns(t *testing.T) {
	s, err := NewSchema(map[string]Strategy{
		".spec.containers":               Keyed("name"),
		".spec.containers[*].ports":      Keyed("containerPort", "protocol"),
		`.metadata.annotations["a.b/c"]`: Atomic(),
		".spec.templates[*]":             Atomic(),
		".spec.finalizers":               AsSet(),
	})
	require.NoError(t, err)
	top := s.top()
	require.Equal(t, "keys=containerPort,protocol", top.field("spec").field("containers").item().field("ports").strat.String())
	require.Equal(t, "atomic", top.field("metadata").field("annotations").field("a.b/c").strat.String())
	require.Equal(t, "atomic", top.field("spec").field("templates").field("anything").strat.String())

	for _, bad := range []string{"spec", ".a..b", ".a[", `.a["x"`, ".a[0]"} {
		_, err := NewSchema(map[string]Strategy{bad: Atomic()})
		require.Error(t, err, bad)
	}
	_, err = NewSchema(map[string]Strategy{".a": Keyed()})
	require.ErrorContains(t, err, "at least one key")
	_, err = NewSchema(map[string]Strategy{".a": Atomic(), ".a[*]": Atomic(), `["a"]`: AsSet()})
	require.ErrorContains(t, err, "twice")
}

func TestSchemaWithMountsASubSchema(t *testing.T) {
	type spec struct {
		Ports []port `json:"ports" steady:"keys=port,protocol"`
	}
	sub, err := SchemaFor(spec{})
	require.NoError(t, err)
	base, err := NewSchema(map[string]Strategy{".conditions": Keyed("type")})
	require.NoError(t, err)
	s, err := base.With(".spec", sub)
	require.NoError(t, err)
	require.Equal(t, "keys=port,protocol", s.top().field("spec").field("ports").strat.String())
	require.Equal(t, "keys=type", s.top().field("conditions").strat.String())
	require.Nil(t, base.top().field("spec"), "base is unchanged")

	var none *Schema
	s, err = none.With(".status", sub)
	require.NoError(t, err)
	require.NotNil(t, s.top().field("status").field("ports"))
	_, err = base.With(".", sub)
	require.Error(t, err)
}
