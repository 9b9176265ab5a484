package memstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
)

// TestIndex fills the index past many chunk splits, then empties it in
// random order, checking order, seeks and the chunk bounds throughout.
func TestIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var x index
	model := []string{}
	keys := rng.Perm(5 * maxChunk)
	check := func() {
		t.Helper()
		got := []string{}
		for c := x.seek("", false); c.peek() != nil; c.advance() {
			got = append(got, c.peek().Key)
		}
		require.Equal(t, model, got)
		require.Equal(t, len(model), x.len())
		for _, ch := range x.chunks {
			require.NotEmpty(t, ch, "no empty chunks")
			require.LessOrEqual(t, len(ch), maxChunk)
		}
	}
	for i, k := range keys {
		key := fmt.Sprintf("%05d", k)
		x.insert(&kv.KeyValue{Key: key})
		j, _ := slices.BinarySearch(model, key)
		model = slices.Insert(model, j, key)
		if i%97 == 0 {
			check()
		}
	}
	check()
	require.Greater(t, len(x.chunks), 5, "the index split into chunks")

	for _, tc := range []struct {
		seek  string
		after bool
		want  string // "" for the end
	}{
		{"", false, "00000"},
		{"00100", false, "00100"},
		{"00100", true, "00101"},
		{"001005", false, "00101"},
		{"02559", true, ""},
		{"9", false, ""},
	} {
		c := x.seek(tc.seek, tc.after)
		got := ""
		if kv := c.peek(); kv != nil {
			got = kv.Key
		}
		require.Equal(t, tc.want, got, "seek(%q, %v)", tc.seek, tc.after)
	}

	x.remove("absent") // a no-op
	for i, k := range rng.Perm(len(keys)) {
		key := fmt.Sprintf("%05d", k)
		x.remove(key)
		j, _ := slices.BinarySearch(model, key)
		model = slices.Delete(model, j, j+1)
		if i%89 == 0 {
			check()
		}
	}
	check()
	require.Empty(t, x.chunks)
}
