package jsonscan

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// referenceTree is Decode's specification: encoding/json with
// UseNumber, numbers then made int64 when integral and written as
// strconv.FormatInt writes them, float64 when not integral, and kept as
// json.Numbers otherwise; a number beyond float64's range is an error.
func referenceTree(raw []byte) (any, error) {
	if !json.Valid(raw) {
		return nil, strconv.ErrSyntax
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	var rangeErr error
	var fix func(any) any
	fix = func(v any) any {
		switch v := v.(type) {
		case json.Number:
			if i, err := strconv.ParseInt(string(v), 10, 64); err == nil && strconv.FormatInt(i, 10) == string(v) {
				return i
			}
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				rangeErr = err
			}
			if f != math.Trunc(f) {
				return f
			}
			return v
		case map[string]any:
			for k, x := range v {
				v[k] = fix(x)
			}
		case []any:
			for i, x := range v {
				v[i] = fix(x)
			}
		}
		return v
	}
	v = fix(v)
	return v, rangeErr
}

var treeSeeds = []string{
	`{"a":1,"b":-2.5,"c":[true,false,null,"x"],"d":{"e":{}},"f":[]}`,
	`"caf\u00e9 \ud83d\ude00 \"q\" \\ \n"`,
	`"héllo"`,
	"\"bad \xff utf8\"",
	`12345678901234567890`,
	`-9223372036854775808`,
	`1e3`, `1E-2`, `0.5`, `-0`, `0`,
	` [ 1 , 2 ] `,
	`01`, `1.`, `.5`, `-`, `1e`, `+1`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `tru`, `nul`, `"abc`, `{`, `[`, ``,
	`{"a":1}x`, "\"a\x01\"", `1e400`,
	`9223372036854775807`, `9223372036854775808`, `18446744073709551615`, `18446744073709551616`,
	`-9223372036854775809`, `100000000000000000001`, `1e21`, `1.0`, `-0.0`, `1.5e3`, `1e-400`, `-0e5`,
	`{"u":18446744073709551615,"z":-0,"e":1e3,"f":0.1,"i":7}`,
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, s := range treeSeeds {
		t.Run(s, func(t *testing.T) { checkTree(t, []byte(s)) })
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range treeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkTree)
}

func checkTree(t *testing.T, raw []byte) {
	got, err := Decode(raw)
	want, wantErr := referenceTree(raw)
	if wantErr != nil {
		require.Error(t, err, "encoding/json rejects %q: %v", raw, wantErr)
		_, err = DecodeShape(raw)
		require.Error(t, err, "DecodeShape rejects it too")
		return
	}
	require.NoError(t, err, "encoding/json accepts %q", raw)
	require.Equal(t, want, got)

	shape, err := DecodeShape(raw)
	require.NoError(t, err)
	require.Equal(t, shapeOf(want, false), shape, "DecodeShape is Decode with scalars outside lists nil")
}

// shapeOf is DecodeShape's specification.
func shapeOf(v any, inList bool) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = shapeOf(x, inList)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = shapeOf(x, true)
		}
		return out
	}
	if inList {
		return v
	}
	return nil
}

// Texts with the same shape key decode to the same shape; texts of another
// shape, or with another list, get another key.
func TestAppendShapeKey(t *testing.T) {
	key := func(s string) string {
		k, ok := AppendShapeKey(nil, []byte(s))
		if !ok {
			return "!"
		}
		return string(k)
	}
	same := [][2]string{
		{`{"a":1,"b":{"c":"x"}}`, ` {"a" : 2.5, "b":{"c":null}} `},
		{`{"a":[1,2],"b":true}`, `{"a":[1,2],"b":false}`},
		{`3`, `"s"`},
	}
	for _, c := range same {
		if key(c[0]) == "!" || key(c[0]) != key(c[1]) {
			t.Errorf("keys of %s and %s: %q, %q; want equal", c[0], c[1], key(c[0]), key(c[1]))
		}
		a, _ := DecodeShape([]byte(c[0]))
		b, _ := DecodeShape([]byte(c[1]))
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s and %s share a key but decode to %v and %v", c[0], c[1], a, b)
		}
	}
	differ := [][2]string{
		{`{"a":1}`, `{"b":1}`},
		{`{"a":1}`, `{"a":{}}`},
		{`{"a":[1,2]}`, `{"a":[1,3]}`},
		{`{"a":1}`, `{"a":1,"b":2}`},
	}
	for _, c := range differ {
		if key(c[0]) == key(c[1]) {
			t.Errorf("%s and %s share the key %q", c[0], c[1], key(c[0]))
		}
	}
	for _, bad := range []string{`{"a":1`, `{"a\u0062":1}`, `{"a":1} x`, `[1,`, `{"a":1e999}`} {
		if k, ok := AppendShapeKey([]byte("pre"), []byte(bad)); ok || string(k) != "pre" {
			t.Errorf("AppendShapeKey(%s) = %q, %v; want pre, false", bad, k, ok)
		}
	}
}

// BenchmarkDecode decodes storedShape whole, as the store decodes a stored
// value's side into ownership's tree on every apply (two per write), and a
// run of numbers of every kind the tree holds.
func BenchmarkDecode(b *testing.B) {
	for _, c := range []struct{ name, text string }{
		{"stored", storedShape},
		{"numbers", `[0,1,-1,42,65535,-9223372036854775808,9223372036854775807,0.5,-2.25,1e-3,3.141592653589793,` +
			`1e3,-0,9223372036854775808,18446744073709551615,1e21]`},
	} {
		b.Run(c.name, func(b *testing.B) {
			text := []byte(c.text)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decode(text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
