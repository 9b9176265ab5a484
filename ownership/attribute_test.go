package ownership_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/ownership"
)

func paths(ps ...string) []diff.Path {
	var out []diff.Path
	for _, p := range ps {
		out = append(out, diff.MustParsePath(p))
	}
	return out
}

func entry(manager string, ps ...string) ownership.Entry {
	return ownership.Entry{Manager: manager, Operation: ownership.OpUpdate, Set: ownership.MustNewSet(paths(ps...)...)}
}

func TestAttribute(t *testing.T) {
	tests := []struct {
		name           string
		changed        []string
		before, after  ownership.Managed
		owned, foreign []string
	}{
		{
			name:    "a field each manager owns after the change",
			changed: []string{".spec.replicas", ".spec.image"},
			after:   ownership.Managed{entry("me", ".spec.replicas"), entry("other", ".spec.image")},
			owned:   []string{".spec.replicas"}, foreign: []string{".spec.image"},
		},
		{
			name:    "a field below one manager owns",
			changed: []string{".spec.env.LOG"},
			after:   ownership.Managed{entry("me", ".spec.env")},
			owned:   []string{".spec.env.LOG"},
		},
		{
			name:    "a subtree manager alone owns fields of",
			changed: []string{".spec.env"},
			after:   ownership.Managed{entry("me", ".spec.env.LOG", ".spec.env.MODE")},
			owned:   []string{".spec.env"},
		},
		{
			name:    "a subtree two managers own fields of",
			changed: []string{".spec.env"},
			after:   ownership.Managed{entry("me", ".spec.env.LOG"), entry("other", ".spec.env.MODE")},
			foreign: []string{".spec.env"},
		},
		{
			name:    "fields below manager's, under another manager's field",
			changed: []string{".spec.env"},
			after:   ownership.Managed{entry("me", ".spec.env.LOG"), entry("other", ".spec")},
			foreign: []string{".spec.env"},
		},
		{
			name:    "a removed field manager owned before",
			changed: []string{".metadata.labels.app"},
			before:  ownership.Managed{entry("me", ".metadata.labels.app")},
			owned:   []string{".metadata.labels.app"},
		},
		{
			name:    "a removed field another manager owned before",
			changed: []string{".metadata.labels.app"},
			before:  ownership.Managed{entry("other", ".metadata.labels.app")},
			foreign: []string{".metadata.labels.app"},
		},
		{
			name:    "ownership after the change decides over ownership before",
			changed: []string{".spec.replicas"},
			before:  ownership.Managed{entry("me", ".spec.replicas")},
			after:   ownership.Managed{entry("other", ".spec.replicas")},
			foreign: []string{".spec.replicas"},
		},
		{
			name:    "a field nobody owns",
			changed: []string{".metadata.deletionRequested"},
			foreign: []string{".metadata.deletionRequested"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owned, foreign := ownership.Attribute("me", paths(tt.changed...), tt.before, tt.after)
			require.Equal(t, paths(tt.owned...), owned)
			require.Equal(t, paths(tt.foreign...), foreign)
			// AttributeAppend: the same, after what the lists held.
			held := paths(".held")
			owned, foreign = ownership.AttributeAppend(slices.Clone(held), slices.Clone(held), "me", paths(tt.changed...), tt.before, tt.after)
			require.Equal(t, append(slices.Clone(held), paths(tt.owned...)...), owned, "appended")
			require.Equal(t, append(slices.Clone(held), paths(tt.foreign...)...), foreign, "appended")
		})
	}
}

func TestCodecDecodeNodes(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{"replicas": int64(3), "image": "web"}}
	codec := ownership.NewCodec(obj, nil)

	nodes := ownership.MustNewSet(paths(".spec.replicas")...)
	s, ok := codec.DecodeNodes(codec.Encode(nodes))
	require.True(t, ok, "a set of the object's own fields")
	require.True(t, s.Equal(nodes))

	dangling := ownership.MustNewSet(paths(".spec.replicas", ".spec.gone")...)
	text := codec.Encode(dangling)
	_, ok = codec.DecodeNodes(text)
	require.False(t, ok, "a set naming a field the object lacks")
	s, err := codec.Decode(text)
	require.NoError(t, err, "Decode reads it")
	require.True(t, s.Equal(dangling))

	_, ok = codec.DecodeNodes(nodes.Encode())
	require.False(t, ok, "the self-contained form")
	_, ok = codec.DecodeNodes("")
	require.False(t, ok, "the empty set")
	_, ok = ownership.NewCodec(map[string]any{"spec": map[string]any{}}, nil).DecodeNodes(codec.Encode(nodes))
	require.False(t, ok, "an encoding made for another object")
}

func TestChangedBy(t *testing.T) {
	tests := []struct {
		name         string
		writer       string
		changed      []string
		after        ownership.Managed
		mine, others []string
	}{
		{
			name:    "one write by manager",
			writer:  "me",
			changed: []string{".status.replicas"},
			after:   ownership.Managed{entry("me", ".status.replicas")},
			mine:    []string{".status.replicas"},
		},
		{
			name:    "one write by another manager",
			writer:  "other",
			changed: []string{".spec.replicas"},
			after:   ownership.Managed{entry("other", ".spec.replicas")},
			others:  []string{".spec.replicas"},
		},
		{
			name:    "merged writes, manager's last",
			writer:  "me",
			changed: []string{".spec.replicas", ".status.replicas"},
			after:   ownership.Managed{entry("other", ".spec.replicas"), entry("me", ".status.replicas")},
			mine:    []string{".status.replicas"}, others: []string{".spec.replicas"},
		},
		{
			name:    "merged writes, another manager's last",
			writer:  "other",
			changed: []string{".spec.replicas", ".status.replicas"},
			after:   ownership.Managed{entry("other", ".spec.replicas"), entry("me", ".status.replicas")},
			mine:    []string{".status.replicas"}, others: []string{".spec.replicas"},
		},
		{
			name:    "merged writes of a third manager",
			writer:  "other",
			changed: []string{".spec.image", ".spec.replicas"},
			after:   ownership.Managed{entry("other", ".spec.replicas"), entry("third", ".spec.image")},
			others:  []string{".spec.image", ".spec.replicas"},
		},
		{
			name:    "a field manager owned, removed by the last writer",
			writer:  "other",
			changed: []string{".metadata.labels.app"},
			others:  []string{".metadata.labels.app"},
		},
		{
			name:    "a field removed by manager, the last writer",
			writer:  "me",
			changed: []string{".metadata.labels.app"},
			mine:    []string{".metadata.labels.app"},
		},
		{
			name:    "a field the last writer shares with manager",
			writer:  "other",
			changed: []string{".spec.replicas"},
			after:   ownership.Managed{entry("me", ".spec.replicas"), entry("other", ".spec.replicas")},
			others:  []string{".spec.replicas"},
		},
		{
			name:    "a field below one manager owns",
			writer:  "other",
			changed: []string{".spec.env.LOG"},
			after:   ownership.Managed{entry("me", ".spec.env")},
			mine:    []string{".spec.env.LOG"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mine, others []diff.Path
			for _, p := range paths(tt.changed...) {
				if ownership.ChangedBy("me", tt.writer, p, tt.after) {
					mine = append(mine, p)
				} else {
					others = append(others, p)
				}
			}
			require.Equal(t, paths(tt.mine...), mine)
			require.Equal(t, paths(tt.others...), others)
		})
	}
}
