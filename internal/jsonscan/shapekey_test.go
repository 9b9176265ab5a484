package jsonscan

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The store's judge keys its codecs by AppendShapeKey into a buffer on its
// stack, once per side of every event it judges: the buffer must not
// escape (a shapeKey split into mutually recursive functions leaks it).
func TestAppendShapeKeyKeepsTheCallersBufferOnTheStack(t *testing.T) {
	b := []byte(`{"spec":{"replicas":3,"env":{"A":"1"}},"items":[{"name":"x"}]}`)
	allocs := testing.AllocsPerRun(100, func() {
		var arr [128]byte
		if _, ok := AppendShapeKey(arr[:0], b); !ok {
			panic("not a shape key")
		}
	})
	require.Zero(t, allocs)
}

// RawShape reads what Raw reads, and appends what AppendShapeKey appends
// for the value it read, or nothing when that has no key.
func TestRawShapeIsRawAndAppendShapeKey(t *testing.T) {
	texts := append(append([]string{`{"a\u0062":1}`, `{"a":1e999}`, `{"a":[1,{"b":"c"}]} tail`, ` 7 `}, memberSeeds...), elementSeeds...)
	for _, s := range texts {
		b := []byte(s)
		r1, r2 := NewReader(b), NewReader(b)
		raw, ok := r1.Raw()
		gotRaw, key, keyed, gotOK := r2.RawShape([]byte("pre"))
		require.Equal(t, ok, gotOK, "%s", s)
		require.Equal(t, string(raw), string(gotRaw), "%s", s)
		require.Equal(t, r1.p.i, r2.p.i, "%s: where the Reader stands", s)
		want, wantKeyed := AppendShapeKey([]byte("pre"), raw)
		if !ok {
			continue
		}
		require.Equal(t, wantKeyed, keyed, "%s", s)
		require.Equal(t, string(want), string(key), "%s", s)
	}
}

// A text AppendShapeKey gives a key to is one that Decode accepts (what
// ChangedScalarsOfValid's callers rely on), lists included.
func TestAppendShapeKeyOnlyOfDecodable(t *testing.T) {
	texts := append(append([]string{`[1e400]`, `{"a":[1,{"b":1e999}]}`, `{"a":[10000000000000000000000000000000000000000e400]}`, `{"a":1e400}`, `{"a":[1e300,-2.5e-3,"x"]}`}, memberSeeds...), elementSeeds...)
	rng := rand.New(rand.NewPCG(26, 44))
	for range 3000 {
		texts = append(texts, randomJSON(rng, 0))
	}
	keyed := 0
	for _, s := range texts {
		if _, ok := AppendShapeKey(nil, []byte(s)); ok {
			keyed++
			_, err := Decode([]byte(s))
			require.NoError(t, err, "%s has a shape key", s)
		}
	}
	require.Greater(t, keyed, 100)
	_, ok := AppendShapeKey(nil, []byte(`{"a":[1e400]}`))
	require.False(t, ok)
}
