package store

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// rawObjectClass is the size class a rawObject's allocation takes: every
// event of a controller's status write allocates about two (the value its
// watch decoded, kept in the memory of values, and the status write's own
// object), so a word more than 416 bytes costs 32 of fresh memory each.
const rawObjectClass = 416

// TestRawObjectFitsItsSizeClass: a rawObject allocation is 416 bytes, not
// the 480 its three words per slice of knownShape, storedHead and
// storedSides made it.
func TestRawObjectFitsItsSizeClass(t *testing.T) {
	require.LessOrEqual(t, unsafe.Sizeof(rawObject{}), uintptr(rawObjectClass))
	// The least of a few tries: a test running beside this one allocates
	// too.
	const n = 1000
	keep := make([]*rawObject, n)
	per := uint64(1 << 20)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range keep {
			keep[i] = new(rawObject)
		}
		runtime.ReadMemStats(&after)
		per = min(per, (after.TotalAlloc-before.TotalAlloc)/n)
	}
	runtime.KeepAlive(keep)
	require.Equal(t, uint64(rawObjectClass), per, "bytes allocated per rawObject")
}

// TestStoredHeadIsItsText: headText(b).text() is b, capped at its length:
// its bytes, where they are, nil exactly when b is.
func TestStoredHeadIsItsText(t *testing.T) {
	value := []byte(`{"metadata":{"kind":"K","name":"a","uid":"u"},"spec":{}}`)
	cases := [][]byte{nil, {}, value[:0], value[:1], value[:13], value, value[5:9]}
	for range 50 {
		i := rand.IntN(len(value) + 1)
		j := i + rand.IntN(len(value)-i+1)
		cases = append(cases, value[i:j])
	}
	for _, b := range cases {
		got := headText(b).text()
		require.Equal(t, b == nil, got == nil, "nil exactly when given nil: %q", b)
		require.Equal(t, string(b), string(got))
		require.Equal(t, len(b), cap(got), "capped at its length")
		if len(b) > 0 {
			require.Same(t, &b[0], &got[0], "the very bytes")
		}
	}
	require.Nil(t, storedHead{}.text(), "no head known")
}

// TestSpecKeyIsTheKeyOfItsSpecOnly: the shape key a read kept (shapeOf) is
// raw's while raw.Spec is the very text it was computed from, and no
// longer for the same bytes elsewhere, a part of them, or another text.
func TestSpecKeyIsTheKeyOfItsSpecOnly(t *testing.T) {
	value := []byte(`{"replicas":3,"image":"x"}{"replicas":3,"image":"x"}`)
	spec, other := value[:26], value[26:]
	key := []byte("shape-key")
	raw := &rawObject{Spec: spec, shape: shapeOf(spec, key)}
	got := raw.specKey()
	require.Equal(t, string(key), string(got))
	require.Same(t, &key[0], &got[0], "the key kept, not a copy")
	require.Equal(t, len(key), cap(got), "capped at its length")
	for name, s := range map[string][]byte{
		"the same bytes elsewhere": other,
		"a copy":                   append([]byte(nil), spec...),
		"a prefix":                 spec[:len(spec)-1],
		"none":                     nil,
		"empty":                    spec[:0],
	} {
		raw.Spec = s
		require.Nil(t, raw.specKey(), name)
	}
	require.Nil(t, (&rawObject{Spec: spec, shape: shapeOf(spec, nil)}).specKey(), "no key computed")
	require.Nil(t, (&rawObject{Spec: spec[:0], shape: shapeOf(spec[:0], key)}).specKey(), "the key of an empty text")
}

// TestStoredSidesGiveBackTheirSides: a versioned value's stored sides
// (storedAs) come back (sides) as given, nil where nil was given, capped at
// their length.
func TestStoredSidesGiveBackTheirSides(t *testing.T) {
	value := []byte(`{"a":1}{"b":2}`)
	for _, c := range [][2][]byte{{value[:7], value[7:]}, {nil, value[7:]}, {value[:7], nil}, {nil, nil}, {value[:0], value[7:7]}} {
		s := storedAs("v1", c[0], c[1])
		spec, status := s.sides()
		require.Equal(t, "v1", s.version)
		for i, got := range [][]byte{spec, status} {
			require.Equal(t, c[i] == nil, got == nil)
			require.Equal(t, string(c[i]), string(got))
			require.Equal(t, len(c[i]), cap(got))
			if len(c[i]) > 0 {
				require.Same(t, &c[i][0], &got[0])
			}
		}
	}
}
