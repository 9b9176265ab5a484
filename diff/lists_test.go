package diff

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type (
	port struct {
		Name     string `json:"name"`
		Port     int    `json:"port"`
		Protocol string `json:"protocol"`
	}
	service struct {
		Ports []port   `json:"ports" steady:"keys=port,protocol"`
		Tags  []string `json:"tags" steady:"set"`
		Plain []port   `json:"plain"`
	}
)

func TestDiffKeyedLists(t *testing.T) {
	web := port{Name: "web", Port: 80, Protocol: "TCP"}
	dns := port{Name: "dns", Port: 53, Protocol: "UDP"}
	tls := port{Name: "tls", Port: 443, Protocol: "TCP"}
	tests := []struct {
		name      string
		want, got any
		opts      []Option
		changes   []string
	}{
		{
			name: "reordering a keyed list is no change",
			want: service{Ports: []port{web, dns}},
			got:  service{Ports: []port{dns, web}},
		},
		{
			name:    "items are named by their keys",
			want:    service{Ports: []port{web, dns}},
			got:     service{Ports: []port{tls, {Name: "www", Port: 80, Protocol: "TCP"}}},
			changes: []string{`.ports[port=80,protocol="TCP"].name: "web" → "www"`, `.ports[port=53,protocol="UDP"]: removed {"name":"dns","port":53,"protocol":"UDP"}`, `.ports[port=443,protocol="TCP"]: added {"name":"tls","port":443,"protocol":"TCP"}`},
		},
		{
			name:    "duplicate keys fall back to positions",
			want:    service{Ports: []port{web, web}},
			got:     service{Ports: []port{web, dns}},
			changes: []string{`.ports[1].name: "web" → "dns"`, `.ports[1].port: 80 → 53`, `.ports[1].protocol: "TCP" → "UDP"`},
		},
		{
			name:    "untagged lists are positional",
			want:    service{Plain: []port{web, dns}},
			got:     service{Plain: []port{dns, web}},
			changes: []string{`.plain[0].name: "web" → "dns"`, ".plain[0].port: 80 → 53", `.plain[0].protocol: "TCP" → "UDP"`, `.plain[1].name: "dns" → "web"`, ".plain[1].port: 53 → 80", `.plain[1].protocol: "UDP" → "TCP"`},
		},
		{
			name:    "ListKeys keys an untagged list",
			want:    service{Plain: []port{web, dns}},
			got:     service{Plain: []port{dns}},
			opts:    []Option{ListKeys(MustParsePath(".plain"), "name")},
			changes: []string{`.plain[name="web"]: removed {"name":"web","port":80,"protocol":"TCP"}`},
		},
		{
			name:    "an option wins over the tag",
			want:    service{Ports: []port{web, dns}},
			got:     service{Ports: []port{dns, web}},
			opts:    []Option{ListKeys(MustParsePath(".ports"), "name"), ListKeys(MustParsePath(".other"), "x")},
			changes: nil,
		},
		{
			name: "keyed tree lists, nested through a schema path",
			want: map[string]any{"containers": []any{
				map[string]any{"name": "a", "ports": []any{map[string]any{"p": 1.0, "x": "old"}}},
				map[string]any{"name": "b"},
			}},
			got: map[string]any{"containers": []any{
				map[string]any{"name": "b"},
				map[string]any{"name": "a", "ports": []any{map[string]any{"p": 2.0}, map[string]any{"p": 1, "x": "new"}}},
			}},
			opts: []Option{ListKeys(MustParsePath(".containers"), "name"), ListKeys(MustParsePath(".containers.ports"), "p")},
			changes: []string{
				`.containers[name="a"].ports[p=1].x: "old" → "new"`,
				`.containers[name="a"].ports[p=2]: added {"p":2}`,
			},
		},
		{
			name:    "an item without the key falls back to positions",
			want:    []any{map[string]any{"name": "a"}, "scalar"},
			got:     []any{"scalar", map[string]any{"name": "a"}},
			opts:    []Option{ListKeys(Path{}, "name")},
			changes: []string{`.[0]: {"name":"a"} → "scalar"`, `.[1]: "scalar" → {"name":"a"}`},
		},
		{
			name:    "sets ignore order and duplicates",
			want:    service{Tags: []string{"a", "b", "b", "c"}},
			got:     service{Tags: []string{"d", "c", "a", "d"}},
			changes: []string{`.tags[="b"]: removed "b"`, `.tags[="d"]: added "d"`},
		},
		{
			name:    "tree sets compare numbers by value",
			want:    map[string]any{"s": []any{1.0, "1", true, nil}},
			got:     map[string]any{"s": []any{nil, true, "1", 1, 2}},
			opts:    []Option{ListSets(MustParsePath(".s"))},
			changes: []string{".s[=2]: added 2"},
		},
		{
			name:    "a set with a non-scalar falls back to positions",
			want:    []any{"a", []any{}},
			got:     []any{[]any{}, "a"},
			opts:    []Option{ListSets(Path{})},
			changes: []string{`.[0]: "a" → []`, `.[1]: [] → "a"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := Diff(tt.want, tt.got, tt.opts...)
			require.Equal(t, tt.changes, lines(cs))
			if cs.Empty() {
				require.Equal(t, Hash(tt.want, tt.opts...), Hash(tt.got, tt.opts...), "equal values hash equal")
			}
			for _, c := range cs {
				p, err := ParsePath(c.Path.String())
				require.NoError(t, err)
				require.True(t, p.Equal(c.Path), "reported paths round-trip: %s", c.Path)
			}
		})
	}
}

func TestDiffKeyedPodByTag(t *testing.T) {
	want, got := newTestPod(), newTestPod()
	got.Spec.Containers[0], got.Spec.Containers[1] = got.Spec.Containers[1], got.Spec.Containers[0]
	got.Status.Conditions[0], got.Status.Conditions[2] = got.Status.Conditions[2], got.Status.Conditions[0]
	require.True(t, Diff(want, got).Empty(), "keyed lists may be reordered")
	require.Equal(t, Hash(want), Hash(got))

	got = newTestPod()
	mutatePod(got)
	require.Equal(t, []string{
		".metadata.generation: 3 → 4",
		`.metadata.labels.tier: "frontend" → "backend"`,
		`.spec.containers[name="web"].image: "registry.example.com/web:1.4.2" → "registry.example.com/web:1.5.0"`,
	}, lines(Diff(want, got, Ignore(MustParsePath(".status")))))
}
