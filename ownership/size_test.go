package ownership

import (
	"hash/fnv"
	"testing"

	"github.com/stretchr/testify/require"
)

// Three managers owning interleaved fields of a Pod encode their sets in at
// most 35% of the Pod's JSON size (Kubernetes' FieldsV1 is about 72% for
// one manager).
func TestEncodedSetsOfThreeManagersAreSmall(t *testing.T) {
	r := threeManagers(t)
	require.Len(t, r.Managed, 3)
	require.Equal(t, countLeaves(podTree(t)), countLeaves(r.Object), "every leaf written")
	codec := NewCodec(r.Object, podSchema)
	total, plain := 0, 0
	for _, e := range r.Managed {
		enc := codec.Encode(e.Set)
		total += len(enc)
		plain += len(e.Set.Encode())
		t.Logf("%s: %d bytes, %d paths: %s", e.Manager, len(enc), e.Set.Len(), enc)
		back, err := codec.Decode(enc)
		require.NoError(t, err)
		require.True(t, back.Equal(e.Set), "round trip")
	}
	t.Logf("self-contained Set.Encode of the same sets: %d bytes", plain)
	size := podJSONSize(t)
	pct := 100 * float64(total) / float64(size)
	t.Logf("three sets: %d bytes, pod JSON: %d bytes, %.1f%%", total, size, pct)
	require.LessOrEqual(t, pct, 35.0)
}

// TestShapeHashIsFNV1a: the shape hash in stored encodings is FNV-1a over
// kind, low byte of the child count and name of every node.
func TestShapeHashIsFNV1a(t *testing.T) {
	nodes := []node{{}, {kind: elemField, name: "spec", lo: 2, hi: 3}, {kind: elemKey, name: `name="é\x00"`}}
	h := fnv.New32a()
	for _, n := range nodes {
		h.Write([]byte{n.kind, byte(n.hi - n.lo)})
		h.Write([]byte(n.name))
	}
	require.Equal(t, h.Sum32(), shapeHash(nodes))
}

// TestCodecOfEmptyObject: every path of a set is dangling for an empty
// object, and still round-trips.
func TestCodecOfEmptyObject(t *testing.T) {
	c := NewCodec(map[string]any{}, nil)
	s, err := DecodeSet("spec(replicas)")
	require.NoError(t, err)
	back, err := c.Decode(c.Encode(s))
	require.NoError(t, err)
	require.True(t, back.Equal(s))
}
