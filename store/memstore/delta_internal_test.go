package memstore

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// A delta spells the value exactly from its base, whatever the two are, and
// is short when they differ in a few places.
func TestDeltaSpellsTheValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	alphabet := []byte(`{}",:abc0123456789`)
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return b
	}
	for i := range 20000 {
		base := random(rng.IntN(300))
		v := bytes.Clone(base)
		for range rng.IntN(6) { // a few edits: replace, insert or cut a span
			at := rng.IntN(len(v) + 1)
			end := min(len(v), at+rng.IntN(40))
			v = append(v[:at:at], append(random(rng.IntN(40)), v[end:]...)...)
		}
		if i%10 == 0 {
			v = random(rng.IntN(300)) // unrelated
		}
		d := encodeDelta(nil, v, base)
		got, ok := applyDelta(nil, d, base)
		require.True(t, ok)
		require.Equal(t, string(v), string(got), "base %q", base)
	}

	base := bytes.Repeat([]byte(`{"type":"Ready","status":"True","message":"4/4 running"},`), 16)
	v := bytes.Clone(base)
	copy(v[100:], "False")
	copy(v[700:], "3/4")
	d := encodeDelta(nil, v, base)
	require.Less(t, len(d), 40, "a delta of two small edits of %d bytes", len(v))
	// A value with a whole entry more than its base (a manager's record
	// that the next write dropped) adds that entry and copies the rest,
	// and one with another word where its base has one that recurs
	// further on does not skip to there.
	entry := []byte(`{"manager":"dashboard","operation":"Update","subresource":"status","fields":"~N7AoRgQAEB"},`)
	v = append(append(bytes.Clone(base[:300]), entry...), base[300:]...)
	d = encodeDelta(nil, v, base)
	require.Less(t, len(d), len(entry)+20, "a delta of an entry of %d bytes added", len(entry))
	v = bytes.Replace(base, []byte(`"True"`), []byte(`"Ready"`), 1)
	d = encodeDelta(nil, v, base)
	require.Less(t, len(d), 20, "a delta of one word replaced by another that recurs")
	_, ok := applyDelta(nil, []byte{0xff}, base)
	require.False(t, ok, "a truncated delta")
}
