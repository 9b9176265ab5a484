package diff_test

import (
	"fmt"
	"strconv"

	"github.com/steady-go/steady/diff"
)

type Port struct {
	Name     string `json:"name,omitempty"`
	Port     int    `json:"port"`
	Protocol string `json:"protocol"`
}

type Spec struct {
	Replicas int               `json:"replicas"`
	Image    string            `json:"image"`
	Labels   map[string]string `json:"labels,omitempty"`
	Ports    []Port            `json:"ports" steady:"keys=port,protocol"`
}

func ExampleDiff() {
	want := Spec{Replicas: 3, Image: "web:1", Ports: []Port{{Port: 80, Protocol: "TCP"}}}
	got := Spec{
		Replicas: 2,
		Image:    "web:1",
		Labels:   map[string]string{"app.kubernetes.io/name": "web"},
		Ports:    []Port{{Name: "dns", Port: 53, Protocol: "UDP"}, {Port: 80, Protocol: "TCP"}},
	}
	changes := diff.Diff(want, got)
	fmt.Println(changes)
	fmt.Println(changes[0].Kind, changes[0].Path, changes[0].Old, changes[0].New)
	// Output:
	// .replicas: 3 → 2
	// .labels: null → {"app.kubernetes.io/name":"web"}
	// .ports[port=53,protocol="UDP"]: added {"name":"dns","port":53,"protocol":"UDP"}
	// changed .replicas 3 2
}

func ExampleDiff_trees() {
	// Decoded JSON: numbers compare by value, whatever their Go type.
	want := map[string]any{"spec": map[string]any{"replicas": 3, "paused": false}}
	got := map[string]any{"spec": map[string]any{"replicas": 3.0, "image": "web:2"}}
	fmt.Println(diff.Diff(want, got))
	// Output:
	// .spec.image: added "web:2"
	// .spec.paused: removed false
}

func ExampleIgnore() {
	want := map[string]any{"spec": map[string]any{"replicas": 3.0}, "status": map[string]any{"ready": 3.0}}
	got := map[string]any{"spec": map[string]any{"replicas": 3.0}, "status": map[string]any{"ready": 1.0}}
	fmt.Println(diff.Diff(want, got, diff.Ignore(diff.MustParsePath(".status"))).Empty())
	fmt.Println(diff.Diff(want, got, diff.Only(diff.MustParsePath(".status.ready"))))
	// Output:
	// true
	// .status.ready: 3 → 1
}

func ExampleListKeys() {
	want := []any{
		map[string]any{"name": "web", "image": "web:1"},
		map[string]any{"name": "proxy", "image": "proxy:1"},
	}
	got := []any{
		map[string]any{"name": "proxy", "image": "proxy:2"},
		map[string]any{"name": "web", "image": "web:1"},
	}
	fmt.Println(diff.Diff(want, got, diff.ListKeys(diff.Path{}, "name")))
	// Output:
	// .[name="proxy"].image: "proxy:1" → "proxy:2"
}

func ExampleEquateEmpty() {
	want := map[string][]string{"args": nil}
	got := map[string][]string{"args": {}}
	fmt.Println(diff.Diff(want, got))
	fmt.Println(diff.Diff(want, got, diff.EquateEmpty()).Empty())
	// Output:
	// .args: null → []
	// true
}

func ExampleHash() {
	// A controller labels an object with the hash of what its user wrote.
	// The hash leaves out the label itself and the status the controller
	// writes, so writing the label does not change the hash.
	obj := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{}},
		"spec":     map[string]any{"replicas": 3.0, "image": "web:1"},
		"status":   map[string]any{"ready": 0.0},
	}
	view := diff.Ignore(
		diff.MustParsePath(`.metadata.labels["steady.dev/hash"]`),
		diff.MustParsePath(".status"),
	)
	h := diff.Hash(obj, view)
	obj["metadata"].(map[string]any)["labels"].(map[string]any)["steady.dev/hash"] = strconv.FormatUint(h, 16)
	obj["status"].(map[string]any)["ready"] = 3.0
	fmt.Println(diff.Hash(obj, view) == h)

	obj["spec"].(map[string]any)["image"] = "web:2"
	fmt.Println(diff.Hash(obj, view) == h)
	// Output:
	// true
	// false
}
