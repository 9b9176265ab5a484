package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var memberSeeds = []string{
	`{"metadata":{"kind":"K","name":"a","labels":{"x":"y"}},"spec":{"a":[1,2.5e3,-0,true,false,null,"s\"\\\/\b\f\n\r\t\u00e9"]},"status":null}`,
	` { "a" : {} , "b" : [ ] , "c" : { } } `, `{}`, ` {} `, `{"a":1,"a":2}`, `{"a":1e400}`,
	`{"me\u0074a":1}`, "{\"a\x01\":1}", `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`,
	`{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"a\x01\"}", "{\"a\":\"\xff\"}",
	`{"a":[1,]}`, `{"a":{"b":1,}}`, `{"a" 1}`, `{"a":tru}`, `{"a":1}x`, `{"a":1,}`, `[1]`, `null`, ``, `{`,
}

var elementSeeds = []string{
	`[]`, ` [ ] `, `[1]`, `[1,"a",{"b":[2]},null,true,false,-0.5e3]`, ` [ {"a":1} , [] ] `,
	`[1,]`, `[,1]`, `[1 2]`, `[`, `]`, `[1]x`, `{}`, `"a"`, ``, `[01]`, `["\x"]`, "[\"a\x01\"]", "[\"\xff\"]",
}

// A Reader that reads a text whole, with Raw for every value, accepts only
// what encoding/json accepts, and gives the values encoding/json gives.
func FuzzReader(f *testing.F) {
	for _, s := range memberSeeds {
		f.Add([]byte(s))
	}
	for _, s := range elementSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"s":"a","n":-12,"big":1234567890123456789,"f":1.5,"b":true,"x":null,"e":"\u00e9"}`))
	f.Add([]byte(`{"f":-0.5e3,"f2":1,"z":null,"f3":"1","z2":nul,"z3":0,"f4":-}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkArray(t, b)
		r := NewReader(b)
		got := map[string]any{}
		ok := r.Object(func(key []byte) bool {
			var v any
			var ok bool
			switch {
			case bytes.HasPrefix(key, []byte("s")):
				var tok []byte
				var plain bool
				if tok, plain, ok = r.String(); ok {
					if plain {
						v = string(tok[1 : len(tok)-1])
					} else {
						var s string
						ok = json.Unmarshal(tok, &s) == nil
						v = s
					}
				}
			case bytes.HasPrefix(key, []byte("n")):
				v, ok = r.Int64()
			case bytes.HasPrefix(key, []byte("b")):
				v, ok = r.Bool()
			case bytes.HasPrefix(key, []byte("f")):
				var tok []byte
				tok, ok = r.Number()
				v = string(tok)
			case bytes.HasPrefix(key, []byte("z")):
				ok = r.Null()
				v = "null"
			default:
				var raw []byte
				raw, ok = r.Raw()
				v = string(raw)
			}
			got[string(key)] = v
			return ok
		}) && r.End()
		if !ok {
			return // the caller takes the encoding/json way
		}
		var want map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b, &want), "accepted what encoding/json rejects: %q", b)
		for k, raw := range want {
			switch {
			case strings.HasPrefix(k, "s"):
				var s string
				require.NoError(t, json.Unmarshal(raw, &s))
				require.Equal(t, s, got[k], k)
			case strings.HasPrefix(k, "n"):
				var n int64
				require.NoError(t, json.Unmarshal(raw, &n), "Int64 accepted %s", raw)
				require.Equal(t, n, got[k], k)
			case strings.HasPrefix(k, "b"):
				var v bool
				require.NoError(t, json.Unmarshal(raw, &v))
				require.Equal(t, v, got[k], k)
			case strings.HasPrefix(k, "f"):
				var n json.Number
				require.NoError(t, json.Unmarshal(raw, &n), "Number accepted %s", raw)
				require.Equal(t, string(n), got[k], k)
			case strings.HasPrefix(k, "z"):
				require.Equal(t, "null", string(raw), "Null accepted %s", raw)
			default:
				require.Equal(t, string(raw), got[k], k)
			}
		}
	})
}

// checkArray reads b as an array of raw values and checks them against
// encoding/json's.
func checkArray(t *testing.T, b []byte) {
	r := NewReader(b)
	got := []string{}
	if !r.Array(func() bool {
		raw, ok := r.Raw()
		got = append(got, string(raw))
		return ok
	}) || !r.End() {
		return
	}
	var want []json.RawMessage
	require.NoError(t, json.Unmarshal(b, &want), "accepted what encoding/json rejects: %q", b)
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, string(want[i]), got[i])
	}
}

func TestReaderMatchesEncodingJSON(t *testing.T) {
	r := NewReader([]byte(` {"kind" : "K", "n":-12, "on":true, "l":[1, "a"], "e":"\u00e9", "x":{"y":null}} `))
	var keys []string
	require.True(t, r.Object(func(key []byte) bool {
		keys = append(keys, string(key))
		switch string(key) {
		case "kind":
			tok, plain, ok := r.String()
			require.Equal(t, `"K"`, string(tok))
			return plain && ok
		case "n":
			n, ok := r.Int64()
			require.Equal(t, int64(-12), n)
			return ok
		case "on":
			v, ok := r.Bool()
			return v && ok
		case "l":
			return r.Array(func() bool { _, ok := r.Raw(); return ok })
		case "e":
			_, plain, ok := r.String()
			return !plain && ok
		}
		raw, ok := r.Raw()
		require.Equal(t, `{"y":null}`, string(raw))
		return ok
	}))
	require.True(t, r.End())
	require.Equal(t, []string{"kind", "n", "on", "l", "e", "x"}, keys)
	for _, s := range elementSeeds {
		checkArray(t, []byte(s))
	}
	bad := NewReader([]byte(`{"a":2.5}`))
	require.False(t, bad.Object(func([]byte) bool { _, ok := bad.Int64(); return ok }), "2.5 is no int64")
}

// storedShape is a value as package store writes it on the event path:
// metadata with two managed entries and a last write, a Reconciling
// condition, a spec and a status.
const storedShape = `{"version":"v1","metadata":{"kind":"App","name":"app-00017","uid":"3f9c2a71-5b1e-4c8e-9d0a-6e2f7b8c1d40",` +
	`"managed":[{"manager":"user","operation":"Update","fields":"{\"f:spec\":{\"f:args\":{},\"f:image\":{},\"f:replicas\":{},\"f:selector\":{\"f:app\":{}}}}"},` +
	`{"manager":"app-controller","operation":"Apply","subresource":"status","fields":"{\"f:status\":{\"f:readyReplicas\":{}}}"}],` +
	`"lastWrite":{"manager":"user","op":"Update"},"generation":42,"statusGeneration":42},` +
	`"spec":{"replicas":41,"image":"registry.example.com/team/app:v1.2.3","args":["--port=8080","--log-level=info"],"selector":{"app":"app-00017"}},` +
	`"status":{"readyReplicas":41},` +
	`"conditions":[{"type":"Reconciling","status":"False","reason":"Reconciled","message":"bench: generation 1 reconciled","lastTransitionTime":"2026-12-02T07:00:00Z","observedGeneration":1}]}`

// BenchmarkReaderObject reads storedShape the way store's decoder does:
// every string of metadata and conditions with String, spec and status
// whole with Raw. It is the inner loop of every read and watch event
// (EventToReconcile/steady decodes five such values per event).
func BenchmarkReaderObject(b *testing.B) {
	text := []byte(storedShape)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(text)
		if !readStored(&r) || !r.End() {
			b.Fatal("storedShape did not read")
		}
	}
}

func readStored(r *Reader) bool {
	switch r.Next() {
	case '{':
		return r.Object(func(key []byte) bool {
			if string(key) == "spec" || string(key) == "status" {
				_, ok := r.Raw()
				return ok
			}
			return readStored(r)
		})
	case '[':
		return r.Array(func() bool { return readStored(r) })
	case '"':
		_, _, ok := r.String()
		return ok
	}
	_, ok := r.Raw()
	return ok
}

// Pos is the offset of the next byte to read: within Object's f, the byte
// after the member's colon, and after a value, the byte after it.
func TestReaderPos(t *testing.T) {
	text := []byte(`{"a":1, "bb" : [2]}`)
	r := NewReader(text)
	var at []int
	require.True(t, r.Object(func(key []byte) bool {
		at = append(at, r.Pos())
		_, ok := r.Raw()
		at = append(at, r.Pos())
		return ok
	}))
	require.Equal(t, []int{5, 6, 14, 18}, at)
	require.Equal(t, len(text), r.Pos())
}

// Literal reads its text only when it comes next byte for byte; Plain
// reads a string only where String, starting at a quote, reads one it
// calls plain, with the content String gives; both read nothing otherwise.
func TestReaderLiteralAndPlain(t *testing.T) {
	r := NewReader([]byte(`{"kind":"App"}`))
	require.False(t, r.Literal(`{"kind" :`))
	require.False(t, r.Literal(`{"kind":"App"}x`))
	require.Equal(t, 0, r.Pos())
	require.True(t, r.Literal(`{"kind":`))
	require.Equal(t, 8, r.Pos())

	texts := append(append([]string{`"a"`, `""`, `"a\"b"`, `"ä"`, "\"a\x01\"", `"a`, ` "a"`, `a`, "\"\x7f\"",
		`"abcdefghijklmnop\n"`, `"abcdefghijklmnopq"`, `"abcdefgh"`, `"abcdefghi`}, memberSeeds...), elementSeeds...)
	for _, text := range texts {
		for i := range len(text) + 1 {
			tail := []byte(text[i:])
			r, s := NewReader(tail), NewReader(tail)
			content, ok := r.Plain()
			token, plain, sok := s.String()
			want := sok && plain && len(tail) > 0 && tail[0] == '"'
			require.Equal(t, want, ok, "%q", tail)
			if !ok {
				require.Equal(t, 0, r.Pos(), "%q", tail)
				continue
			}
			require.Equal(t, string(token[1:len(token)-1]), string(content), "%q", tail)
			require.Equal(t, s.Pos(), r.Pos(), "%q", tail)
		}
	}
}

// LiteralBytes reads exactly what Literal reads, at every place of a text
// and for every piece of it, and Since returns what was read.
func TestReaderLiteralBytes(t *testing.T) {
	text := `{"metadata":{"kind":"App","managed":[{"manager":"user"}]},"spec":{}}`
	for i := range len(text) + 1 {
		for j := i; j <= len(text); j++ {
			for _, lit := range []string{text[i:j], text[i:j] + "x", "x" + text[i:j]} {
				r, s := NewReader([]byte(text)), NewReader([]byte(text))
				r.p.i, s.p.i = i, i
				ok := r.LiteralBytes([]byte(lit))
				require.Equal(t, s.Literal(lit), ok, "%q at %d", lit, i)
				require.Equal(t, s.Pos(), r.Pos(), "%q at %d", lit, i)
				if ok {
					require.Equal(t, lit, string(r.Since(i)))
				}
			}
		}
	}
}

// Skip reads the next n bytes as they are, whatever they hold, and the
// Reader goes on right after them; with fewer than n left, or n negative,
// it reads nothing.
func TestSkipReadsTheNextNBytes(t *testing.T) {
	text := []byte(`{"spec":{"a":"}"},"status":1}`)
	r := NewReader(text)
	require.True(t, r.Literal(`{"spec":`))
	got, ok := r.Skip(len(`{"a":"}"}`))
	require.True(t, ok)
	require.Equal(t, `{"a":"}"}`, string(got))
	require.True(t, r.Literal(`,"status":`), "the Reader right after them")
	at := r.Pos()
	for _, n := range []int{len(text) - at + 1, -1} {
		_, ok = r.Skip(n)
		require.False(t, ok, n)
		require.Equal(t, at, r.Pos(), "nothing read")
	}
	got, ok = r.Skip(len(text) - at)
	require.True(t, ok)
	require.Equal(t, `1}`, string(got))
	require.True(t, r.End())
}
