package jsonscan

import (
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
