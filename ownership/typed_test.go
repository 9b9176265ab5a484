package ownership

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type deploySpec struct {
	// Replicas is optional: nil leaves it unclaimed, a pointer to 0
	// applies an explicit zero.
	Replicas *int32            `json:"replicas,omitempty"`
	Image    string            `json:"image,omitempty"`
	Paused   bool              `json:"paused"` // always present, always claimed
	Ports    []port            `json:"ports,omitempty" steady:"keys=port,protocol"`
	Tags     []string          `json:"tags,omitempty" steady:"set"`
	Selector map[string]string `json:"selector,omitempty" steady:"atomic"`
	Labels   map[string]string `json:"labels,omitempty"`
}

type port struct {
	Port     int    `json:"port"`
	Protocol string `json:"protocol"`
	Name     string `json:"name,omitempty"`
}

type deployment struct {
	Spec deploySpec `json:"spec"`
}

func ptr[T any](v T) *T { return &v }

func TestTypedConfigClaimsFieldsPresentAfterEncoding(t *testing.T) {
	r, err := Apply(nil, deployment{Spec: deploySpec{Image: "a"}}, "m", nil)
	require.NoError(t, err)
	requireObject(t, `{"spec":{"image":"a","paused":false}}`, r.Object)
	require.Equal(t, sorted(".spec.image", ".spec.paused"), ownedBy(r.Managed, "m", OpApply),
		"nil pointer with omitempty is not claimed; a non-omitempty bool is, even when false")
}

func TestTypedPointerAppliesAnExplicitZero(t *testing.T) {
	hpa, err := Apply(nil, obj(t, `{"spec":{"replicas":3}}`), "hpa", nil)
	require.NoError(t, err)

	// A user whose Replicas is nil does not touch the hpa's field.
	r, err := Apply(hpa.Object, &deployment{Spec: deploySpec{Image: "a"}}, "user", hpa.Managed)
	require.NoError(t, err)
	requireObject(t, `{"spec":{"replicas":3,"image":"a","paused":false}}`, r.Object)

	// A pointer to zero applies 0, which conflicts with the hpa's 3.
	_, err = Apply(r.Object, &deployment{Spec: deploySpec{Image: "a", Replicas: ptr[int32](0)}}, "user", r.Managed)
	require.Equal(t, []string{"hpa .spec.replicas"}, conflictStrings(err))
	f, err := Apply(r.Object, &deployment{Spec: deploySpec{Image: "a", Replicas: ptr[int32](0)}}, "user", r.Managed, Force())
	require.NoError(t, err)
	requireObject(t, `{"spec":{"replicas":0,"image":"a","paused":false}}`, f.Object)
}

func TestTypedConfigBringsItsSchema(t *testing.T) {
	a := deployment{Spec: deploySpec{
		Ports:    []port{{Port: 80, Protocol: "TCP", Name: "http"}},
		Tags:     []string{"x"},
		Selector: map[string]string{"app": "a"},
	}}
	r, err := Apply(nil, a, "a", nil)
	require.NoError(t, err)
	require.Equal(t, sorted(".spec.paused", `.spec.ports[port=80,protocol="TCP"]`, `.spec.ports[port=80,protocol="TCP"].name`,
		`.spec.ports[port=80,protocol="TCP"].port`, `.spec.ports[port=80,protocol="TCP"].protocol`, `.spec.selector`, `.spec.tags[="x"]`),
		ownedBy(r.Managed, "a", OpApply))

	b := deployment{Spec: deploySpec{Ports: []port{{Port: 443, Protocol: "TCP"}}, Tags: []string{"y"}}}
	r, err = Apply(r.Object, b, "b", r.Managed)
	require.NoError(t, err, "keyed list and set merge, paused=false is shared")
	requireObject(t, `{"spec":{"paused":false,"ports":[{"port":80,"protocol":"TCP","name":"http"},{"port":443,"protocol":"TCP"}],
		"tags":["x","y"],"selector":{"app":"a"}}}`, r.Object)

	_, err = Apply(r.Object, deployment{Spec: deploySpec{Selector: map[string]string{"app": "b"}}}, "b", r.Managed)
	require.Equal(t, []string{"a .spec.selector"}, conflictStrings(err), "atomic map")
}

func TestToTree(t *testing.T) {
	tree, err := ToTree(deployment{Spec: deploySpec{Replicas: ptr[int32](2), Image: "i"}})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"spec": map[string]any{"replicas": int64(2), "image": "i", "paused": false}}, tree)

	tree, err = ToTree(nil)
	require.NoError(t, err)
	require.Nil(t, tree)

	_, err = ToTree([]int{1})
	require.ErrorContains(t, err, "not an object")
	_, err = ToTree(make(chan int))
	require.Error(t, err)
}
