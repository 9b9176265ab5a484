package objpath_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/objpath"
	"github.com/steady-go/steady/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestPathsAreTheObjectsJSONKeys: every path names a key that store.Object
// encodes, so a rename of a json tag cannot leave the paths behind.
func TestPathsAreTheObjectsJSONKeys(t *testing.T) {
	obj := store.Object[map[string]int, map[string]int]{
		Meta: store.Meta{Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"a": "b"},
			Owners: []store.OwnerRef{{Kind: "K"}}, Finalizers: []string{"f"}, DeletionRequested: true},
		Spec: map[string]int{"x": 1}, Status: map[string]int{"x": 1},
		Conditions: []store.Condition{{Type: "Ready", Status: store.ConditionTrue}},
	}
	b, err := json.Marshal(obj)
	require.NoError(t, err)
	var tree map[string]any
	require.NoError(t, json.Unmarshal(b, &tree))
	for _, p := range []diff.Path{objpath.Metadata, objpath.Spec, objpath.Status, objpath.Conditions,
		objpath.Labels, objpath.Annotations, objpath.Owners, objpath.Finalizers, objpath.DeletionRequested} {
		var v any = tree
		for _, e := range p {
			m, ok := v.(map[string]any)
			require.True(t, ok, "%s", p)
			v, ok = m[e.Name]
			require.True(t, ok, "%s: no key %q in %s", p, e.Name, b)
		}
	}
}

func TestStatusSide(t *testing.T) {
	for _, s := range []string{".status", ".status.x", `.conditions[type="Ready"].status`, ".conditions"} {
		require.True(t, objpath.StatusSide(diff.MustParsePath(s)), s)
	}
	for _, s := range []string{".spec", ".metadata.labels", ".statusx", ""} {
		p := diff.Path{}
		if s != "" {
			p = diff.MustParsePath(s)
		}
		require.False(t, objpath.StatusSide(p), s)
	}
}
