package diff

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The hash is part of the stored state of users' objects (labels,
// annotations): these values must not change between runs, processes or
// releases of the same major version.
func TestHashIsStable(t *testing.T) {
	tree := map[string]any{
		"spec":   map[string]any{"replicas": 3.0, "image": "web:1", "args": []any{"a", true, nil, 1.5}},
		"labels": map[string]any{"app.kubernetes.io/name": "web"},
	}
	typed := struct {
		Name  string            `json:"name"`
		N     int64             `json:"n"`
		When  time.Time         `json:"when"`
		Attrs map[string]string `json:"attrs"`
		List  []int             `json:"list"`
	}{"x", 42, time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), map[string]string{"k": "v"}, []int{1, 2}}
	require.Equal(t, uint64(0x9bffef9a6f30b55e), Hash(tree), "tree: %#x", Hash(tree))
	require.Equal(t, uint64(0xb7e2b4d68dc3486b), Hash(typed), "typed: %#x", Hash(typed))
	require.Equal(t, uint64(0x3dd7114b42eba756), Hash(nil), "nil: %#x", Hash(nil))
}

func TestHashIgnoresMapOrder(t *testing.T) {
	build := func(order []int) (map[string]any, map[string]string) {
		tree, typed := map[string]any{}, map[string]string{}
		for _, i := range order {
			k := "key-" + strconv.Itoa(i)
			tree[k] = map[string]any{"v": float64(i)}
			typed[k] = strconv.Itoa(i)
		}
		return tree, typed
	}
	fwd, back := make([]int, 500), make([]int, 500)
	for i := range fwd {
		fwd[i], back[i] = i, 499-i
	}
	t1, m1 := build(fwd)
	t2, m2 := build(back)
	require.Equal(t, Hash(t1), Hash(t2))
	require.Equal(t, Hash(m1), Hash(m2))
	delete(t2, "key-7")
	require.NotEqual(t, Hash(t1), Hash(t2))
}

func TestHashDistinguishesValues(t *testing.T) {
	values := []any{
		nil, false, true, 0, 1, -1, 1.5, "", "0", "1", "a", "ab",
		[]any{}, map[string]any{}, []any{nil}, []any{0.0}, []any{1.0, 2.0}, []any{2.0, 1.0},
		map[string]any{"a": nil}, map[string]any{"a": 1.0}, map[string]any{"b": 1.0}, map[string]any{"a": "1"},
		map[string]any{"a": map[string]any{}}, map[string]any{"a": []any{}},
		[]any{"ab"}, []any{"a", "b"}, []byte("a"), time.Unix(0, 1), time.Unix(1, 0),
		struct{ A int }{1}, struct{ B int }{1}, 1 + 2i,
	}
	seen := map[uint64]string{}
	for _, v := range values {
		h := Hash(v)
		desc := fmt.Sprintf("%T %#v", v, v)
		prev, dup := seen[h]
		require.False(t, dup, "%s and %s hash equal", desc, prev)
		seen[h] = desc
	}
}

func TestHashNumbersByValue(t *testing.T) {
	var fromJSON, fromNumber map[string]any
	require.NoError(t, json.Unmarshal([]byte(`{"a":1,"b":[2.5,3e2]}`), &fromJSON))
	dec := json.NewDecoder(stringsReader(`{"a":1.0,"b":[2.5,300]}`))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&fromNumber))
	require.True(t, Diff(fromJSON, fromNumber).Empty())
	require.Equal(t, Hash(fromJSON), Hash(fromNumber))
	require.Equal(t, Hash(map[string]any{"n": 1}), Hash(map[string]any{"n": uint8(1)}))
	require.NotEqual(t, Hash(1), Hash(1.5))
}

type (
	hashV1 struct {
		Name string `json:"name"`
		Port int    `json:"port"`
	}
	// hashV2 is hashV1 with its fields reordered and a field added.
	hashV2 struct {
		Port  int               `json:"port"`
		Name  string            `json:"name"`
		Extra map[string]string `json:"extra,omitempty"`
		Nest  struct {
			When time.Time `json:"when"`
			Ptr  *int      `json:"ptr"`
		} `json:"nest"`
	}
)

func TestHashTypeEvolution(t *testing.T) {
	v1 := hashV1{Name: "web", Port: 80}
	v2 := hashV2{Name: "web", Port: 80}
	require.Equal(t, Hash(v1), Hash(v2), "unset new fields and field order do not change the hash")
	v2.Extra = map[string]string{"a": "b"}
	require.NotEqual(t, Hash(v1), Hash(v2))
	v2.Extra = nil
	v2.Nest.Ptr = new(int)
	require.NotEqual(t, Hash(v1), Hash(v2), "a non-nil pointer is not empty")
}

func TestHashLeavesOutIgnoredPaths(t *testing.T) {
	// The essay's self-referential label: the controller writes the hash of
	// the object into a label, and that write must not change the hash.
	label := MustParsePath(`.metadata.labels["steady.dev/hash"]`)
	pod := newTestPod()
	opts := []Option{Ignore(label, MustParsePath(".status"))}
	before := Hash(pod, opts...)
	pod.Metadata.Labels["steady.dev/hash"] = strconv.FormatUint(before, 16)
	pod.Status.Phase = "Succeeded"
	require.Equal(t, before, Hash(pod, opts...), "writing the label does not change the hash")
	require.NotEqual(t, before, Hash(pod), "without Ignore it would")
	pod.Spec.Containers[0].Image = "web:2"
	require.NotEqual(t, before, Hash(pod, opts...), "a user change does")

	only := Only(MustParsePath(".spec.containers"))
	a, b := newTestPod(), newTestPod()
	b.Metadata.Name = "other"
	require.Equal(t, Hash(a, only), Hash(b, only))
	b.Spec.Containers[1].Pull = "Always"
	require.NotEqual(t, Hash(a, only), Hash(b, only))
}

func TestHashListsAsDiffSeesThem(t *testing.T) {
	a := service{Ports: []port{{Port: 80, Protocol: "TCP"}, {Port: 53, Protocol: "UDP"}}, Tags: []string{"a", "b"}}
	b := service{Ports: []port{{Port: 53, Protocol: "UDP"}, {Port: 80, Protocol: "TCP"}}, Tags: []string{"b", "a", "b"}}
	require.Equal(t, Hash(a), Hash(b), "keyed lists and sets: order and duplicates do not count")
	a.Plain, b.Plain = []port{{Port: 1}, {Port: 2}}, []port{{Port: 2}, {Port: 1}}
	require.NotEqual(t, Hash(a), Hash(b), "positional lists: order counts")
	require.Equal(t, Hash(a.Plain, ListKeys(Path{}, "port")), Hash(b.Plain, ListKeys(Path{}, "port")))
	require.Equal(t, Hash([]int(nil), EquateEmpty()), Hash([]int{}, EquateEmpty()))
	require.NotEqual(t, Hash([]int(nil)), Hash([]int{}))
}

func TestHashTimesByInstant(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	require.Equal(t, Hash(t0), Hash(t0.In(time.FixedZone("X", 7200))))
	require.NotEqual(t, Hash(t0), Hash(t0.Add(time.Nanosecond)))
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
