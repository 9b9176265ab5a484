package diff

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
)

// FuzzDiff decodes two JSON documents into trees and checks Diff's laws:
// nothing panics, a value equals itself, Diff finds the same number of
// differences both ways with Added and Removed swapped, equal values hash
// equal, and numbers compare and hash by value whatever their Go type.
func FuzzDiff(f *testing.F) {
	seeds := [][2]string{
		{`{"a":1}`, `{"a":1.0}`},
		{`{"spec":{"replicas":3,"tags":["a","b"]}}`, `{"spec":{"replicas":2,"tags":["b","a","c"]}}`},
		{`[{"name":"x","v":1},{"name":"y"}]`, `[{"name":"y"},{"name":"x","v":2}]`},
		{`[{"name":"x"},{"name":"x"}]`, `[{"name":"x"}]`},
		{`{"a":null,"b":[],"c":{}}`, `{"a":[],"b":null,"c":null}`},
		{`"s"`, `1e300`},
		{`[1,2,3]`, `[1,2]`},
		{`{"a.b":{"c/d":[true,false]}}`, `{"a.b":{"c/d":[false]}}`},
		{`{"items":[{"name":"a","ports":[{"p":1}]}]}`, `{"items":[{"name":"a","ports":[{"p":1},{"p":2}]}]}`},
		{`{"n":18446744073709551615}`, `{"n":-9223372036854775808}`},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	opts := [][]Option{
		nil,
		{EquateEmpty()},
		{ListKeys(Path{}, "name"), ListKeys(MustParsePath(".items"), "name"), ListKeys(MustParsePath(".items.ports"), "p")},
		{ListSets(Path{}, MustParsePath(".spec.tags"))},
		{Ignore(MustParsePath(".a"), MustParsePath(`.[name="x"]`)), Only(Path{}.Field("spec"), Path{}.Field("a.b"), Path{}.Index(0), Path{}.Field("a"))},
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		x, ok := decodeTree(a, false)
		if !ok {
			return
		}
		y, ok := decodeTree(b, false)
		if !ok {
			return
		}
		xn, _ := decodeTree(a, true)
		mixed := mixNumbers(xn, new(int))
		for _, o := range opts {
			if cs := Diff(x, x, o...); !cs.Empty() {
				t.Fatalf("Diff(x, x) = %s", cs)
			}
			if cs := Diff(x, mixed, o...); !cs.Empty() {
				t.Fatalf("numbers of other types differ: %s", cs)
			}
			if Hash(x, o...) != Hash(mixed, o...) {
				t.Fatalf("numbers of other types hash differently")
			}
			fwd, back := Diff(x, y, o...), Diff(y, x, o...)
			if ps := ChangedPaths(x, y, o...); !slices.EqualFunc(ps, fwd.Paths(), Path.Equal) {
				t.Fatalf("ChangedPaths = %v, Diff's paths %v", ps, fwd.Paths())
			}
			if grouped := Diff(x, y, Options(o...)); !slices.EqualFunc(grouped.Paths(), fwd.Paths(), Path.Equal) {
				t.Fatalf("grouped options: %s, not %s", grouped, fwd)
			}
			if count(fwd, Added) != count(back, Removed) || count(fwd, Removed) != count(back, Added) || count(fwd, Changed) != count(back, Changed) {
				t.Fatalf("asymmetric:\n%s\nback:\n%s", fwd, back)
			}
			if fwd.Empty() && Hash(x, o...) != Hash(y, o...) {
				t.Fatalf("equal values hash differently")
			}
			for _, c := range fwd {
				p, err := ParsePath(c.Path.String())
				if err != nil || !p.Equal(c.Path) {
					t.Fatalf("path %s does not round-trip: %v", c.Path, err)
				}
				_ = c.String()
			}
		}
	})
}

// mixNumbers turns json.Numbers into float64 as encoding/json would, held
// in turn as float64, int64, int, json.Number and uint8 when exact.
func mixNumbers(v any, n *int) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = mixNumbers(e, n)
		}
	case []any:
		for i, e := range x {
			x[i] = mixNumbers(e, n)
		}
	case json.Number:
		f, _ := strconv.ParseFloat(string(x), 64)
		*n++
		switch i := int64(f); {
		case *n%5 == 1 && float64(i) == f && f < 1<<62 && f > -(1<<62):
			return i
		case *n%5 == 2 && float64(i) == f && f < 1<<31 && f > -(1<<31):
			return int(i)
		case *n%5 == 3:
			return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
		case *n%5 == 4 && f >= 0 && f < 256 && float64(uint8(f)) == f:
			return uint8(f)
		}
		return f
	}
	return v
}

func count(cs Changes, k ChangeKind) int {
	n := 0
	for _, c := range cs {
		if c.Kind == k {
			n++
		}
	}
	return n
}

func decodeTree(s string, useNumber bool) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	if useNumber {
		dec.UseNumber()
	}
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	return v, true
}
