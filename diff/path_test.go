package diff

import (
	"encoding/json"
	"errors"
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParsePathCanonical(t *testing.T) {
	tests := []struct {
		in   string
		want Path
	}{
		{".", Path{}},
		{".spec.replicas", Path{}.Field("spec").Field("replicas")},
		{".items[name=\"x\"].v", Path{}.Field("items").Key(KeyField{"name", "x"}).Field("v")},
		{`.ports[port=80,protocol="TCP"]`, Path{}.Field("ports").Key(KeyField{"port", 80}, KeyField{"protocol", "TCP"})},
		{`.tags[="a"]`, Path{}.Field("tags").Value("a")},
		{`.metadata.labels["app.kubernetes.io/name"]`, Path{}.Field("metadata").Field("labels").Field("app.kubernetes.io/name")},
		{".args[2]", Path{}.Field("args").Index(2)},
		{`.[0].name`, Path{}.Index(0).Field("name")},
		{`[""]`, Path{}.Field("")},
		{`.a["b c"]["é"]["1x"]`, Path{}.Field("a").Field("b c").Field("é").Field("1x")},
		{`.x-y_z.A9`, Path{}.Field("x-y_z").Field("A9")},
		{`.s[=null][=true][=false][=-1.5][=1e+300][=NaN][=+Inf][=-Inf]`, Path{}.Field("s").Value(nil).Value(true).Value(false).
			Value(-1.5).Value(1e300).Value(math.NaN()).Value(math.Inf(1)).Value(math.Inf(-1))},
		{`.k["a.b"=1,c=null]`, Path{}.Field("k").Key(KeyField{"a.b", 1}, KeyField{"c", nil})},
		{`.q["quote\"and\\slash\n"]`, Path{}.Field("q").Field("quote\"and\\slash\n")},
		{`["\xff"]`, Path{}.Field("\xff")},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParsePath(tt.in)
			require.NoError(t, err)
			require.True(t, got.Equal(tt.want), "parsed %#v, want %#v", got, tt.want)
			require.Equal(t, tt.in, got.String(), "canonical spelling round-trips")
			require.Equal(t, tt.in, tt.want.String())
		})
	}
}

func TestParsePathNormalizes(t *testing.T) {
	tests := []struct{ in, canonical string }{
		{`["spec"]["replicas"]`, ".spec.replicas"},
		{`[2]`, ".[2]"},
		{`.a[007]`, ".a[7]"},
		{`.a[=1.0]`, ".a[=1]"},
		{`.a[=1e2]`, ".a[=100]"},
		{`.a[=-0]`, ".a[=0]"},
		{`.a[=-0.0]`, ".a[=0]"},
		{`.a[="b"]`, `.a[="b"]`},
		{`.a["n"="x"]`, `.a[n="x"]`},
		{`.a[=9223372036854775808]`, ".a[=9223372036854775808]"},
		{`.a[=9223372036854775809]`, ".a[=9223372036854775809]"},
		{`.a[=18446744073709551616]`, ".a[=1.8446744073709552e+19]"},
		{`.a[=1e19]`, ".a[=10000000000000000000]"},
		{`.a[=1E400000000000000000000000000000000000000000000000000000000000000000000000000000000000]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, err := ParsePath(tt.in)
			if tt.canonical == "" {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.canonical, p.String())
		})
	}
}

func TestParsePathErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		reason string
	}{
		{"", 0, "empty path"},
		{"spec", 0, `starts with "."`},
		{"..a", 1, "expected a field name"},
		{".a.", 3, "expected a field name"},
		{".a.b/c", 4, `unexpected '/'`},
		{".a.[0]", 2, `".[" only starts a path`},
		{".1a", 1, "must be quoted"},
		{".-a", 1, "must be quoted"},
		{".a[", 2, "unterminated"},
		{".a[]", 2, "empty"},
		{".a[-1]", 3, "non-negative"},
		{".a[1", 4, `expected "]"`},
		{".a[99999999999999999999]", 3, "out of range"},
		{`.a["x`, 3, "unterminated quoted"},
		{`.a["\q"]`, 3, "invalid quoted string"},
		{`.a[="x"`, 7, "found the end"},
		{`.a[=]`, 4, "expected a value"},
		{`.a[=01]`, 4, "invalid number"},
		{`.a[=1.]`, 4, "invalid number"},
		{`.a[=tru]`, 4, "expected a value"},
		{`.a[n=1,n=2]`, 2, "appears twice"},
		{`.a[n=1;m=2]`, 6, `expected "," or "]"`},
		{`.a[n=1,]`, 7, "expected a key field name"},
		{`.a[n]`, 4, `expected '='`},
		{`.a[%]`, 3, "expected a quoted name"},
		{`.a["x"y]`, 6, `expected '='`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParsePath(tt.in)
			var pe *PathError
			require.True(t, errors.As(err, &pe), "error %v is a *PathError", err)
			require.Equal(t, tt.in, pe.Path)
			require.Equal(t, tt.offset, pe.Offset, "offset in %v", err)
			require.Contains(t, pe.Reason, tt.reason)
			require.Contains(t, err.Error(), "at offset")
		})
	}
}

func TestMustParsePathPanics(t *testing.T) {
	require.Panics(t, func() { MustParsePath(".a..b") })
	require.Equal(t, ".a.b", MustParsePath(".a.b").String())
}

func TestPathHelpers(t *testing.T) {
	base := MustParsePath(".spec")
	child := base.Field("replicas")
	require.Equal(t, ".spec.replicas", child.String())
	require.Equal(t, ".spec", base.String(), "extending never changes the receiver")

	// Appending to two children of one parent must not alias.
	p := make(Path, 1, 8)
	p[0] = Element{Kind: FieldElem, Name: "a"}
	x, y := p.Field("x"), p.Field("y")
	require.Equal(t, ".a.x", x.String())
	require.Equal(t, ".a.y", y.String())

	require.True(t, child.HasPrefix(base))
	require.True(t, child.HasPrefix(child))
	require.True(t, child.HasPrefix(Path{}))
	require.False(t, base.HasPrefix(child))
	require.False(t, MustParsePath(".specs").HasPrefix(base))
	require.True(t, child.Parent().Equal(base))
	require.True(t, Path{}.Parent().Equal(Path{}))
	pa := child.Parent().Field("other")
	require.Equal(t, ".spec.replicas", child.String(), "Parent's result does not share capacity")
	require.Equal(t, ".spec.other", pa.String())

	// Numeric values normalize and compare by value.
	require.True(t, Path{}.Value(int32(2)).Equal(Path{}.Value(2.0)))
	require.True(t, Path{}.Value(uint8(2)).Equal(MustParsePath(".[=2]")))
	require.True(t, Path{}.Value(json.Number("2.50")).Equal(MustParsePath(".[=2.5]")))
	require.Equal(t, ".[=18446744073709551615]", Path{}.Value(uint64(math.MaxUint64)).String())
	require.False(t, Path{}.Value(uint64(1<<63+1)).Equal(Path{}.Value(float64(1<<63))), "exact beyond int64")
	require.True(t, Path{}.Value(json.Number("9223372036854775809")).Equal(Path{}.Value(uint64(1<<63+1))))
	type color string
	require.Equal(t, `.[="red"]`, Path{}.Value(color("red")).String())
	require.True(t, Element{Kind: ValueElem, Value: math.NaN()}.Equal(Element{Kind: ValueElem, Value: math.NaN()}))
	require.False(t, Path{}.Value("1").Equal(Path{}.Value(1)))
}

func TestPathCompare(t *testing.T) {
	sorted := []string{
		".",
		".a",
		".a.b",
		".a[k=1]",
		".a[k=1,l=2]",
		".a[k=2]",
		".a[=null]",
		".a[=false]",
		".a[=true]",
		".a[=-1.5]",
		".a[=1]",
		".a[=1.5]",
		".a[=9223372036854775807]",
		".a[=9223372036854775808]",
		".a[=9223372036854775809]",
		".a[=18446744073709551615]",
		".a[=1.8446744073709552e+19]",
		`.a[=""]`,
		`.a[="a"]`,
		".a[2]",
		".a[10]",
		".b",
	}
	paths := make([]Path, len(sorted))
	for i := range sorted {
		paths[len(sorted)-1-i] = MustParsePath(sorted[i])
	}
	sort.Slice(paths, func(i, j int) bool { return paths[i].Compare(paths[j]) < 0 })
	for i, p := range paths {
		require.Equal(t, sorted[i], p.String())
		require.Zero(t, p.Compare(MustParsePath(sorted[i])))
		for _, q := range paths[i+1:] {
			require.Negative(t, p.Compare(q), "%s before %s", p, q)
			require.Positive(t, q.Compare(p), "%s after %s", q, p)
		}
	}
}

func FuzzPath(f *testing.F) {
	for _, s := range []string{
		".", ".spec.replicas", `.items[name="x"].v`, `.ports[port=80,protocol="TCP"]`, `.tags[="a"]`,
		`.metadata.labels["app.kubernetes.io/name"]`, ".args[2]", `[0]`, `.a[=1.5e-7][=NaN][=null]`,
		`.a["k\u00e9"=true,b=-3]`, `["\xff\n"]`, ".a..b", ".a[", `.a[=01]`, "", "x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			var pe *PathError
			if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > len(s) {
				t.Fatalf("ParsePath(%q): bad error %v", s, err)
			}
			return
		}
		canon := p.String()
		q, err := ParsePath(canon)
		if err != nil {
			t.Fatalf("ParsePath(%q) (canonical of %q): %v", canon, s, err)
		}
		if !q.Equal(p) || q.Compare(p) != 0 {
			t.Fatalf("round trip of %q through %q changed the path", s, canon)
		}
		if q.String() != canon {
			t.Fatalf("canonical %q reformats as %q", canon, q.String())
		}
	})
}

// Path.Equal and Path.Compare compare field steps by name without going
// through Element.Compare: they must answer as it does, step by step, for
// fields and every other kind, mixed.
func TestPathEqualAndCompareAreElementCompares(t *testing.T) {
	var paths []Path
	for _, s := range []string{
		".", ".a", ".b", ".a.b", ".a.c", ".b.a", ".status", ".status.ready", ".spec.replicas",
		`.a[="a"]`, `.a[k="a"]`, `.a[k="b"]`, ".a[0]", ".a[1]", `.conditions[type="Ready"].status`,
		`.["a"]`, `.a[=1]`, `.a[=1.0]`, `.a[="1"]`, `.a[k="a"].b`,
	} {
		paths = append(paths, MustParsePath(s))
	}
	ref := func(p, q Path) int {
		for i := 0; i < len(p) && i < len(q); i++ {
			if c := p[i].Compare(q[i]); c != 0 {
				return c
			}
		}
		return cmpInt(len(p), len(q))
	}
	for _, p := range paths {
		for _, q := range paths {
			want := ref(p, q)
			require.Equal(t, want, p.Compare(q), "%s against %s", p, q)
			require.Equal(t, want == 0, p.Equal(q), "%s against %s", p, q)
			require.Equal(t, len(q) <= len(p) && ref(p[:len(q)], q) == 0, p.HasPrefix(q), "%s has prefix %s", p, q)
		}
	}
}
