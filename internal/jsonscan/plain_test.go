package jsonscan

import (
	"math/rand/v2"
	"testing"
)

// plainEndBytewise is plainEnd one byte at a time: the specification.
func plainEndBytewise(b []byte, i int) int {
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return i
		}
	}
	return i
}

// randomRun returns up to 39 bytes, each printable ASCII, or one of
// alphabet one time in four.
func randomRun(rng *rand.Rand, alphabet []byte) []byte {
	b := make([]byte, rng.IntN(40))
	for j := range b {
		if rng.IntN(4) == 0 {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		} else {
			b[j] = byte(0x20 + rng.IntN(0x5f))
		}
	}
	return b
}

// plainEnd finds the end of a plain run where a byte-at-a-time loop does,
// from every start, whatever bytes end it and wherever they fall within a
// word: each byte value that ends a run and its neighbours that do not
// (0x1f and 0x20, 0x21 and 0x23 around the quote, 0x5b and 0x5d around the
// backslash, 0x7f and 0x80), alone or after another, on random runs.
func TestPlainEndIsBytewise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{0x00, 0x1f, 0x20, 0x21, '"', 0x23, 0x5b, '\\', 0x5d, 'a', 0x7e, 0x7f, 0x80, 0xff, 0xe2}
	for range 20000 {
		b := randomRun(rng, alphabet)
		for i := 0; i <= len(b); i++ {
			if got, want := plainEnd(b, i), plainEndBytewise(b, i); got != want {
				t.Fatalf("plainEnd(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	}
	for c := range 256 {
		for pos := range 17 {
			b := []byte("abcdefghijklmnopqrstuvwxyz")
			b[pos] = byte(c)
			if got, want := plainEnd(b, 0), plainEndBytewise(b, 0); got != want {
				t.Fatalf("plainEnd(%q, 0) = %d, want %d", b, got, want)
			}
		}
	}
}

// strictEndBytewise finds, one byte at a time, where a strict run ends
// (see Reader.PlainStrict): the specification.
func strictEndBytewise(b []byte, i int) int {
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 || c == '<' || c == '>' || c == '&' {
			return i
		}
	}
	return i
}

// PlainStrict reads a string exactly when a byte-at-a-time loop finds its
// run ends at its closing quote, from every start in a text, as
// TestPlainEndIsBytewise checks plainEnd, with the bytes that end a strict
// run only (<, >, &) and their neighbours (0x25 and 0x27, 0x3b, 0x3d and
// 0x3f) among them.
func TestPlainStrictIsBytewise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte{0x00, 0x1f, 0x20, 0x21, '"', 0x23, 0x5b, '\\', 0x5d, 'a', 0x7e, 0x7f, 0x80, 0xff, 0xe2, 0xa2,
		0x25, '&', 0x27, 0x3b, '<', 0x3d, '>', 0x3f}
	check := func(b []byte, i int) {
		text := append(append([]byte(nil), b...), '"')
		r := NewReader(text)
		r.p.i = i
		end := strictEndBytewise(text, i+1)
		got, ok := r.PlainStrict()
		want := i < len(text) && text[i] == '"' && end < len(text) && text[end] == '"'
		if ok != want || ok && (string(got) != string(text[i+1:end]) || r.Pos() != end+1) {
			t.Fatalf("PlainStrict of %q at %d = %q, %v; want %v to %d", text, i, got, ok, want, end)
		}
	}
	for range 20000 {
		b := randomRun(rng, alphabet)
		b = append([]byte{'"'}, b...)
		for i := 0; i < len(b); i++ {
			if b[i] == '"' {
				check(b, i)
			}
		}
	}
	for c := range 256 {
		for pos := range 17 {
			b := []byte(`"abcdefghijklmnopqrstuvwxyz`)
			b[1+pos] = byte(c)
			check(b, 0)
		}
	}
}

// Quoted of a plain string s (no byte that ends a plain run) reads what
// Plain reads when Plain reads s, and nothing when Plain reads anything
// else or nothing: from every start in random texts that hold s's token,
// s's token with a byte more or less, and other runs.
func TestQuotedOfAPlainStringIsPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte{0x00, 0x1f, '"', '\\', 'a', 0x7f, 0x80}
	for range 5000 {
		s := randomRun(rng, []byte{'a', 'b'})
		if plainEndBytewise(s, 0) != len(s) {
			continue
		}
		var text []byte
		for range 1 + rng.IntN(4) {
			switch rng.IntN(4) {
			case 0:
				text = append(append(append(text, '"'), s...), '"')
			case 1:
				text = append(append(append(text, '"'), s...), 'x', '"')
			case 2:
				text = append(append(text, '"'), s[:len(s)/2]...)
			default:
				text = append(text, randomRun(rng, alphabet)...)
			}
		}
		for i := 0; i <= len(text); i++ {
			q, p := NewReader(text), NewReader(text)
			q.p.i, p.p.i = i, i
			b, ok := p.Plain()
			want := ok && string(b) == string(s)
			if got := q.Quoted(string(s)); got != want || want && q.Pos() != p.Pos() || !want && q.Pos() != i {
				t.Fatalf("Quoted(%q) at %d of %q = %v, at %d; Plain read %q, %v, to %d", s, i, text, got, q.Pos(), b, ok, p.Pos())
			}
		}
	}
}
