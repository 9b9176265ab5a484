package ownership_test

import (
	"errors"
	"fmt"

	"github.com/steady-go/steady/ownership"
)

// A user applies a Deployment-like spec; an autoscaler then wants to own
// the replica count. Its first apply conflicts, naming the owner; with
// Force it takes exactly that field.
func Example() {
	user := map[string]any{"spec": map[string]any{"replicas": 3, "image": "web:1"}}
	r, err := ownership.Apply(nil, user, "user", nil)
	if err != nil {
		panic(err)
	}

	scale := map[string]any{"spec": map[string]any{"replicas": 5}}
	_, err = ownership.Apply(r.Object, scale, "autoscaler", r.Managed)
	var conflict *ownership.ConflictError
	if errors.As(err, &conflict) {
		fmt.Println(conflict)
	}

	r, err = ownership.Apply(r.Object, scale, "autoscaler", r.Managed, ownership.Force())
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Object["spec"])
	for _, e := range r.Managed {
		fmt.Println(e.Manager, e.Operation, e.Set.Paths())
	}

	// The user re-applying without replicas changes nothing.
	again, _ := ownership.Apply(r.Object, map[string]any{"spec": map[string]any{"image": "web:1"}}, "user", r.Managed)
	fmt.Println("changed:", again.Changed)
	// Output:
	// ownership: apply conflict: .spec.replicas is managed by "user" (Apply)
	// map[image:web:1 replicas:5]
	// user Apply [.spec.image]
	// autoscaler Apply [.spec.replicas]
	// changed: false
}

type Port struct {
	Port     int    `json:"port"`
	Protocol string `json:"protocol"`
	Name     string `json:"name,omitempty"`
}

type ServiceSpec struct {
	Replicas *int   `json:"replicas,omitempty"` // nil: not applied, not claimed
	Ports    []Port `json:"ports,omitempty" steady:"keys=port,protocol"`
}

// Typed configs carry their schema in struct tags. Two managers each apply
// one port of a keyed list; both ports are kept.
func ExampleApply_typed() {
	web := ServiceSpec{Ports: []Port{{Port: 80, Protocol: "TCP", Name: "http"}}}
	r, err := ownership.Apply(nil, web, "web", nil)
	if err != nil {
		panic(err)
	}
	metrics := ServiceSpec{Ports: []Port{{Port: 9090, Protocol: "TCP"}}}
	r, err = ownership.Apply(r.Object, metrics, "metrics", r.Managed)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Object["ports"])
	fmt.Println(r.Managed[1].Set.Paths())
	// Output:
	// [map[name:http port:80 protocol:TCP] map[port:9090 protocol:TCP]]
	// [.ports[port=9090,protocol="TCP"] .ports[port=9090,protocol="TCP"].port .ports[port=9090,protocol="TCP"].protocol]
}

// An ordinary update never conflicts: the editor owns what it changed, and
// the applier loses it.
func ExampleUpdate() {
	r, _ := ownership.Apply(nil, map[string]any{"a": 1, "b": 2}, "applier", nil)
	u, err := ownership.Update(r.Object, map[string]any{"a": 1, "b": 20}, "editor", r.Managed)
	if err != nil {
		panic(err)
	}
	for _, e := range u.Managed {
		fmt.Println(e.Manager, e.Operation, e.Set.Paths())
	}
	// Output:
	// applier Apply [.a]
	// editor Update [.b]
}

// A Codec stores field sets in a few bytes, relative to the object they
// describe.
func ExampleCodec() {
	obj := map[string]any{"spec": map[string]any{"a": 1, "b": 2, "c": 3}}
	r, _ := ownership.Apply(nil, map[string]any{"spec": map[string]any{"a": 1, "c": 3}}, "m", nil)
	codec := ownership.NewCodec(obj, nil)
	text := codec.Encode(r.Managed[0].Set)
	back, err := codec.Decode(text)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(text), back.Equal(r.Managed[0].Set))
	fmt.Println(r.Managed[0].Set.Encode())
	// Output:
	// 9 true
	// spec(a,c)
}
