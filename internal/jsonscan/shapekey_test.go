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
