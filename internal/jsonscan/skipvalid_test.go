package jsonscan

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// SkipValid reads every value that Raw accepts as Raw reads it, where
// what follows may follow a value (nothing, a comma, a close): the same
// bytes, and the Reader where Raw leaves it. On any other text it does not
// panic and stays within the text. The values are random JSON, with white
// space and escapes (a quote, a backslash before a quote, braces within
// strings), values as the store writes them, followed by what a member
// may be followed by, and those values cut short or with a byte changed.
func TestSkipValidIsRawOfValidJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(58, 26))
	texts := append(append([]string{`{}`, `[]`, ` {} `, `""`, `"a\"b"`, `"\\"`, `"a\\\"}"`, `{"a":"}\"]"}`, `["[\\",{"b":"{"}]`,
		`{"readyReplicas":5}`, `-12.5e-3`, `true`, `null`, ` 7 `, "\"\xff\u00e9\"", `{"a":[{"b":[]}],"c":{"d":{}}}`},
		memberSeeds...), elementSeeds...)
	for range 20000 {
		var s string
		switch rng.IntN(3) {
		case 0:
			s = randomJSON(rng, 0)
		case 1:
			s = randomStoredJSON(rng, 0)
		default:
			s = mutatedJSON(rng, randomStoredJSON(rng, 0))
		}
		texts = append(texts, s+[]string{"", ",", "}", "]", `,"b":1}`, " ,"}[rng.IntN(6)])
	}
	var valid int
	for _, s := range texts {
		b := []byte(s)
		raw := NewReader(b)
		want, wantOK := raw.Raw()
		r := NewReader(b)
		got, ok := r.SkipValid() // must not panic, whatever b is
		require.LessOrEqual(t, r.Pos(), len(b), "%q", s)
		if rest := b[spaceEnd(b, raw.Pos()):]; !wantOK || len(rest) > 0 && !endsScalar[rest[0]] {
			continue // not valid JSON, nor a valid member's value
		}
		valid++
		require.True(t, ok, "%q: Raw reads %q", s, want)
		require.Equal(t, string(want), string(got), "%q", s)
		require.Equal(t, raw.Pos(), r.Pos(), "%q: where the Reader stands", s)
	}
	require.Greater(t, valid, 10000, "the texts Raw reads")
}
