package diff

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type (
	fSpec struct {
		Replicas int      `json:"replicas"`
		Image    string   `json:"image"`
		Args     []string `json:"args"`
	}
	fObj struct {
		Spec   *fSpec            `json:"spec"`
		Labels map[string]string `json:"labels"`
		Items  []map[string]any  `json:"items"`
	}
)

func TestDiffFilters(t *testing.T) {
	mp := MustParsePath
	want := fObj{
		Spec:   &fSpec{Replicas: 1, Image: "a", Args: []string{"x", "y", "z"}},
		Labels: map[string]string{"app.kubernetes.io/name": "web", "tier": "fe"},
		Items:  []map[string]any{{"name": "a", "v": 1.0}, {"name": "b", "v": 1.0}},
	}
	got := fObj{
		Spec:   &fSpec{Replicas: 2, Image: "b", Args: []string{"x", "Y", "Z"}},
		Labels: map[string]string{"app.kubernetes.io/name": "api", "tier": "be"},
		Items:  []map[string]any{{"name": "a", "v": 2.0}, {"name": "b", "v": 2.0}},
	}
	all := []string{
		".spec.replicas: 1 → 2", `.spec.image: "a" → "b"`, `.spec.args[1]: "y" → "Y"`, `.spec.args[2]: "z" → "Z"`,
		`.labels["app.kubernetes.io/name"]: "web" → "api"`, `.labels.tier: "fe" → "be"`,
		".items[0].v: 1 → 2", ".items[1].v: 1 → 2",
	}
	tests := []struct {
		name    string
		opts    []Option
		changes []string
	}{
		{name: "no filter", changes: all},
		{name: "Only the root", opts: []Option{Only(Path{})}, changes: all},
		{name: "Ignore the root", opts: []Option{Ignore(Path{})}},
		{name: "Only a subtree", opts: []Option{Only(mp(".spec"))}, changes: all[:4]},
		{name: "Only several", opts: []Option{Only(mp(".spec.replicas")), Only(mp(".labels.tier"))}, changes: []string{all[0], all[5]}},
		{name: "Ignore a subtree", opts: []Option{Ignore(mp(".spec"), mp(".items"))}, changes: all[4:6]},
		{name: "Ignore a quoted map key", opts: []Option{Ignore(mp(`.labels["app.kubernetes.io/name"]`)), Only(mp(".labels"))}, changes: all[5:6]},
		{name: "Ignore wins over Only", opts: []Option{Only(mp(".spec")), Ignore(mp(".spec.args"))}, changes: all[:2]},
		{name: "Ignore a position", opts: []Option{Only(mp(".spec.args")), Ignore(mp(".spec.args[2]"))}, changes: all[2:3]},
		{name: "Ignore a value in a positional list", opts: []Option{Only(mp(".spec.args")), Ignore(mp(`.spec.args[="x"]`))}, changes: all[2:4]},
		// A pair compared by position is ignored only when both sides
		// match (y became Y), and kept when either side matches an Only
		// path, so that Diff and Hash leave out the same items.
		{name: "Ignore a value one side lacks", opts: []Option{Only(mp(".spec.args")), Ignore(mp(`.spec.args[="y"]`))}, changes: all[2:4]},
		{name: "Only a value one side has", opts: []Option{Only(mp(`.spec.args[="Z"]`))}, changes: all[3:4]},
		{name: "Only an item by key in a positional list", opts: []Option{Only(mp(`.items[name="b"]`))}, changes: all[7:]},
		{name: "Ignore an item's field by key", opts: []Option{Only(mp(".items")), Ignore(mp(`.items[name="a"].v`))}, changes: all[7:]},
		{name: "a key filter matching nothing", opts: []Option{Only(mp(`.items[name="zzz"]`))}},
		{name: "a filter below a scalar", opts: []Option{Only(mp(`.spec.replicas.deeper`))}, changes: all[:1]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := Diff(want, got, tt.opts...)
			require.Equal(t, tt.changes, lines(cs))
			if cs.Empty() {
				require.Equal(t, Hash(want, tt.opts...), Hash(got, tt.opts...))
			} else {
				require.NotEqual(t, Hash(want, tt.opts...), Hash(got, tt.opts...))
			}
		})
	}
}

func TestDiffOnlyAcrossShapes(t *testing.T) {
	only := Only(MustParsePath(".spec.replicas"))
	tests := []struct {
		name      string
		want, got any
		changes   []string
	}{
		{
			name:    "a map key present on one side: reported at the key",
			want:    map[string]any{"spec": map[string]any{"image": "a"}},
			got:     map[string]any{"spec": map[string]any{"replicas": 3.0, "image": "b"}},
			changes: []string{".spec.replicas: added 3"},
		},
		{
			name:    "nil against non-nil on the way: reported where both sides are",
			want:    fObj{},
			got:     fObj{Spec: &fSpec{Replicas: 3}},
			changes: []string{`.spec: null → {"replicas":3,"image":"","args":null}`},
		},
		{
			name: "different types on the way",
			want: map[string]any{"spec": "none"},
			got:  map[string]any{"spec": map[string]any{"replicas": 3.0}},
			changes: []string{
				`.spec: "none" → {"replicas":3}`,
			},
		},
		{
			name: "siblings of the kept path do not count",
			want: map[string]any{"spec": map[string]any{"replicas": 3.0, "image": "a"}, "x": 1.0},
			got:  map[string]any{"spec": map[string]any{"replicas": 3.0}, "y": 2.0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := Diff(tt.want, tt.got, only)
			require.Equal(t, tt.changes, lines(cs))
			if cs.Empty() {
				require.Equal(t, Hash(tt.want, only), Hash(tt.got, only))
			}
		})
	}
}
