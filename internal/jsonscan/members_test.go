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

// member is one member as Members reports it.
type member struct{ key, value string }

// referenceMembers is Members' specification: encoding/json's tokens, each
// value as a json.RawMessage.
func referenceMembers(b []byte) ([]member, bool) {
	if !json.Valid(b) {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(b))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	out := []member{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, member{tok.(string), string(v)})
	}
	return out, true
}

func FuzzMembers(f *testing.F) {
	for _, s := range memberSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkMembers)
}

func TestMembersMatchesEncodingJSON(t *testing.T) {
	for _, s := range memberSeeds {
		t.Run(s, func(t *testing.T) { checkMembers(t, []byte(s)) })
	}
	_, ok := members([]byte(`{"metadata":{"a":1},"spec":[1, 2],"status":"x"}`))
	require.True(t, ok, "the values the store writes take the fast way")
}

func members(b []byte) ([]member, bool) {
	out := []member{}
	ok := Members(b, func(k, v []byte) bool {
		out = append(out, member{string(k), string(v)})
		return true
	})
	return out, ok
}

func checkMembers(t *testing.T, b []byte) {
	got, ok := members(b)
	if !ok {
		return // the caller takes the encoding/json way
	}
	want, wantOK := referenceMembers(b)
	require.True(t, wantOK, "accepted what encoding/json rejects: %q", b)
	require.Equal(t, want, got)
}

func TestMembersStopsWhenTold(t *testing.T) {
	n := 0
	require.False(t, Members([]byte(`{"a":1,"b":2}`), func(k, _ []byte) bool { n++; return string(k) != "a" }))
	require.Equal(t, 1, n)
}

var elementSeeds = []string{
	`[]`, ` [ ] `, `[1]`, `[1,"a",{"b":[2]},null,true,false,-0.5e3]`, ` [ {"a":1} , [] ] `,
	`[1,]`, `[,1]`, `[1 2]`, `[`, `]`, `[1]x`, `{}`, `"a"`, ``, `[01]`, `["\x"]`, "[\"a\x01\"]", "[\"\xff\"]",
}

// referenceElements is Elements' specification: encoding/json's elements,
// each as a json.RawMessage.
func referenceElements(b []byte) ([]string, bool) {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || raw == nil {
		return nil, false
	}
	out := []string{}
	for _, v := range raw {
		out = append(out, string(v))
	}
	return out, true
}

func elements(b []byte) ([]string, bool) {
	out := []string{}
	ok := Elements(b, func(v []byte) bool {
		out = append(out, string(v))
		return true
	})
	return out, ok
}

func checkElements(t *testing.T, b []byte) {
	got, ok := elements(b)
	if !ok {
		return // the caller takes the encoding/json way
	}
	want, wantOK := referenceElements(b)
	require.True(t, wantOK, "accepted what encoding/json rejects: %q", b)
	require.Equal(t, want, got)
}

func FuzzElements(f *testing.F) {
	for _, s := range elementSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkElements)
}

func TestElementsMatchesEncodingJSON(t *testing.T) {
	for _, s := range elementSeeds {
		t.Run(s, func(t *testing.T) { checkElements(t, []byte(s)) })
	}
	got, ok := elements([]byte(`[{"a":1}, "b"]`))
	require.True(t, ok, "an array takes the fast way")
	require.Equal(t, []string{`{"a":1}`, `"b"`}, got)
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
	f.Fuzz(func(t *testing.T, b []byte) {
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
			default:
				require.Equal(t, string(raw), got[k], k)
			}
		}
	})
}
