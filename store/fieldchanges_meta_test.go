package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
)

// Each of the metadata's collections, the first of its kind on an object
// that has none of the four, is a change FieldChanges reports: the quick
// test of their lengths takes an object for unchanged only when every
// one is empty on both sides.
func TestFieldChangesSeesAFirstMetadataCollection(t *testing.T) {
	ctx := t.Context()
	st := newApplyStore(t)
	user := st.As("user")
	for _, c := range []struct {
		name string
		set  func(m *store.Meta)
		want string
	}{
		{"labels", func(m *store.Meta) { m.Labels = map[string]string{"a": "1"} }, ".metadata.labels.a"},
		{"annotations", func(m *store.Meta) { m.Annotations = map[string]string{"a": "1"} }, ".metadata.annotations.a"},
		{"owners", func(m *store.Meta) { m.Owners = []store.OwnerRef{{Kind: "K", Name: "n", UID: "u"}} }, ".metadata.owners"},
		{"finalizers", func(m *store.Meta) { m.Finalizers = []string{"f"} }, ".metadata.finalizers"},
	} {
		_, err := user.Create(ctx, &store.Object[applySpec, applyStatus]{Meta: store.Meta{Name: c.name}})
		require.NoError(t, err)
		old, err := st.Get(ctx, c.name)
		require.NoError(t, err)
		obj, err := st.Get(ctx, c.name)
		require.NoError(t, err)
		c.set(&obj.Meta)
		_, err = user.Update(ctx, obj)
		require.NoError(t, err)
		new, err := st.Get(ctx, c.name)
		require.NoError(t, err)
		for _, from := range [][2]*store.Object[applySpec, applyStatus]{{old, new}, {new, old}} {
			owned, foreign := st.FieldChanges(from[0], from[1], "user")
			paths := append(pathStrings(owned), pathStrings(foreign)...)
			require.NotEmpty(t, paths, "%s", c.name)
			require.Contains(t, paths[0], c.want, "%s", c.name)
		}
	}
}
