package store

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// Two objects' metadata have the same shape key exactly when their
// spec-side metadata trees have the same shape (metaTree with shape), the
// trees a Codec is made from: label and annotation values do not count,
// which keys there are, and the owners and finalizers, do.
func TestMetaShapeKeyTellsShapesApart(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	metas := make([]Meta, 120)
	for i := range metas {
		metas[i] = randomObject(rng).Meta
	}
	metas = append(metas,
		Meta{Labels: map[string]string{`a"b`: ""}}, Meta{Labels: map[string]string{`a`: "", `b`: ""}},
		Meta{Labels: map[string]string{"a": ""}}, Meta{Annotations: map[string]string{"a": ""}},
		Meta{Finalizers: []string{"a"}}, Meta{Finalizers: []string{"a", "a"}},
		Meta{Owners: []OwnerRef{{Kind: "K", Name: "n"}}}, Meta{Owners: []OwnerRef{{Kind: "K", Name: "n", Controller: true}}},
		Meta{Owners: []OwnerRef{{Kind: "Kn"}}}, Meta{})
	keys := make([]string, len(metas))
	trees := make([]map[string]any, len(metas))
	for i := range metas {
		keys[i], trees[i] = string(appendMetaShape(nil, &metas[i])), metaTree(&metas[i], true)
	}
	same, differ := 0, 0
	for i := range metas {
		for j := range metas {
			shapesEqual := reflect.DeepEqual(trees[i], trees[j])
			require.Equalf(t, shapesEqual, keys[i] == keys[j], "metadata %+v and %+v: keys %q and %q", metas[i], metas[j], keys[i], keys[j])
			if i != j && shapesEqual {
				same++
			} else if !shapesEqual {
				differ++
			}
		}
	}
	require.Positive(t, same, "some distinct metadata share a shape")
	require.Positive(t, differ)
}
