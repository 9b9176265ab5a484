package store

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/jsonscan"
	"github.com/steady-go/steady/internal/race"
)

// heldStringCandidates returns strings for a held field: plain ones, ones
// with a byte that ends Plain's scan (a quote, a backslash, a control
// character, DEL, non-ASCII), and parts of one string that share its
// memory: a plain prefix of a string that goes on with a quote, and the
// whole of it, so that a string known plain and a longer one at the same
// address meet.
func heldStringCandidates(rng *rand.Rand) []string {
	alphabet := []string{"a", "b", "Z", "0", "-", ":", "/", " ", "~", `"`, `\`, "\x01", "\x7f", "\x80", "é", "<", "&"}
	word := func() string {
		var b []byte
		for range rng.IntN(12) {
			c := alphabet[rng.IntN(4)]
			if rng.IntN(4) == 0 {
				c = alphabet[rng.IntN(len(alphabet))]
			}
			b = append(b, c...)
		}
		return string(b)
	}
	long := "registry.example.com/web:v1" + `"` + "x" + `\` + "y"
	out := []string{"", "web", long, long[:27], long[:28], long[:29], long[:5]}
	for range 6 {
		out = append(out, word())
	}
	return out
}

// textsOf returns texts of a field's value around held and other: held's
// own token, its encoding/json token (escaped, or with \u escapes), a
// token of held with a byte more or cut short, another string's, and
// held's token with what follows it in a struct.
func textsOf(held, other string) []string {
	enc, _ := json.Marshal(held)
	return []string{
		`"` + held + `"`,
		`"` + held + `","next":1}`,
		string(enc),
		`"` + held + `x"`,
		`"` + held,
		`"` + other + `"`,
		`"x` + held + `"`,
		`null`,
		`"` + held + `\"",`,
	}
}

// sameString with a scratch space, whose plainStrings a held string found
// plain goes in and stays, gives what it gives with none (Plain and a
// comparison every time): the same answer, the same string (the held one,
// its memory shared, when it answers true) and the same bytes read, over
// random held strings and texts, and strings at the address of one found
// plain but longer than it (mutants: plainStrings.has comparing the
// address alone, keep of a string Plain did not read, and the held string
// taken without Quoted, or Quoted without its closing quote, fail it).
func TestSameStringOfAHeldStringFoundPlainIsPlainAndCompare(t *testing.T) {
	rng := rand.New(rand.NewPCG(60, 1))
	sc := new(decodeScratch)
	var taken, quoted int
	for range race.Sweep(3000, 8) {
		cands := heldStringCandidates(rng)
		for range 8 {
			held := cands[rng.IntN(len(cands))]
			other := cands[rng.IntN(len(cands))]
			texts := textsOf(held, other)
			text := []byte(texts[rng.IntN(len(texts))])
			run := func(scratch *decodeScratch) (bool, string, int) {
				d := &metaDecoder{scratch: scratch, r: jsonscan.NewReader(text)}
				var got string
				ok := sameString(d, unsafe.Pointer(&held), unsafe.Pointer(&got))
				if ok {
					require.True(t, unsafe.StringData(got) == unsafe.StringData(held) && len(got) == len(held), "the held string itself")
				} else {
					require.Empty(t, got, "nothing set")
				}
				return ok, got, d.r.Pos()
			}
			known := sc.plain.has(held)
			ok, got, pos := run(sc)
			wantOK, want, wantPos := run(nil)
			require.Equal(t, wantOK, ok, "held %q, text %q", held, text)
			require.Equal(t, want, got, "held %q, text %q", held, text)
			require.Equal(t, wantPos, pos, "held %q, text %q: bytes read", held, text)
			if ok {
				taken++
				if known {
					quoted++
				}
			}
		}
	}
	require.Positive(t, taken)
	require.Positive(t, quoted, "some strings taken as known plain")
	for _, s := range sc.plain.s {
		r := jsonscan.NewReader([]byte(`"` + s + `"`))
		b, ok := r.Plain()
		require.True(t, ok && string(b) == s, "%q: only plain strings are kept", s)
	}
}

// A held string found plain is read again by its text alone: the second
// read of the controller benchmark's image against the same held string
// scans nothing (its plainStrings has it), and a string of the same bytes
// at another address is not known by them.
func TestSameStringKnowsAPlainHeldStringByItsMemory(t *testing.T) {
	held := "registry.example.com/platform/web-frontend:v1.27.3"
	text := []byte(`"` + held + `"`)
	sc := new(decodeScratch)
	var got string
	for range 2 {
		d := &metaDecoder{scratch: sc, r: jsonscan.NewReader(text)}
		require.True(t, sameString(d, unsafe.Pointer(&held), unsafe.Pointer(&got)))
		require.True(t, sc.plain.has(held))
	}
	copied := string([]byte(held))
	require.False(t, sc.plain.has(copied), "an equal string elsewhere")
	require.False(t, sc.plain.has(held[:10]), "a part of it")
	for i := range len(sc.plain.s) {
		sc.plain.keep("other")
		require.Equal(t, i < len(sc.plain.s)-1, sc.plain.has(held), "kept until %d others came after it", len(sc.plain.s))
	}
}
