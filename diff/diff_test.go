package diff

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type (
	tagged struct {
		Replicas int               `json:"replicas"`
		Image    string            `json:"image,omitempty"`
		NoTag    bool              // named by its Go name, as encoding/json does
		Skipped  string            `json:"-"`
		Labels   map[string]string `json:"labels"`
		Ptr      *int              `json:"ptr"`
		hidden   int
	}
	base struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	embeds struct {
		base
		*Extra
		Name string `json:"name"` // shadows base.Name, as in encoding/json
	}
	Extra struct {
		Note string `json:"note"`
	}
	node struct {
		V    int   `json:"v"`
		Next *node `json:"next"`
	}
	opaque struct {
		F func()         `json:"f"`
		C chan int       `json:"c"`
		B []byte         `json:"b"`
		X complex128     `json:"x"`
		A [2]int         `json:"a"`
		M map[int]string `json:"m"`
		I any            `json:"i"`
	}
)

func ptr[T any](v T) *T { return &v }

func lines(cs Changes) []string {
	if cs.Empty() {
		return nil
	}
	return strings.Split(cs.String(), "\n")
}

func TestDiff(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ch := make(chan int)
	tests := []struct {
		name      string
		want, got any
		opts      []Option
		changes   []string
	}{
		{name: "equal scalars", want: 1, got: 1},
		{name: "root scalar", want: 1, got: 2, changes: []string{".: 1 → 2"}},
		{name: "root types differ", want: 1, got: "1", changes: []string{`.: 1 → "1"`}},
		{name: "nil against value", want: nil, got: map[string]any{}, changes: []string{".: null → {}"}},
		{name: "both nil", want: nil, got: nil},
		{
			name:    "struct fields by json name",
			want:    tagged{Replicas: 3, Image: "a", NoTag: true, Skipped: "x", hidden: 1},
			got:     tagged{Replicas: 2, Image: "b", NoTag: false, Skipped: "y", hidden: 2},
			changes: []string{".replicas: 3 → 2", `.image: "a" → "b"`, ".NoTag: true → false"},
		},
		{
			name:    "nil pointer against value",
			want:    tagged{},
			got:     tagged{Ptr: ptr(3)},
			changes: []string{".ptr: null → 3"},
		},
		{name: "pointers compare pointees", want: &tagged{Ptr: ptr(3)}, got: &tagged{Ptr: ptr(3)}},
		{
			name:    "map keys added removed changed, sorted",
			want:    map[string]string{"a": "1", "b": "2", "c": "3", "app.kubernetes.io/name": "x"},
			got:     map[string]string{"a": "1", "b": "9", "d": "4", "app.kubernetes.io/name": "y"},
			changes: []string{`["app.kubernetes.io/name"]: "x" → "y"`, `.b: "2" → "9"`, `.c: removed "3"`, `.d: added "4"`},
		},
		{
			name:    "typed map values",
			want:    map[string]int{"a": 1, "b": 2},
			got:     map[string]int{"b": 3, "c": 4},
			changes: []string{".a: removed 1", ".b: 2 → 3", ".c: added 4"},
		},
		{
			name:    "int map keys are named in decimal",
			want:    map[int]string{1: "a", 10: "b"},
			got:     map[int]string{1: "a", 10: "c", 2: "d"},
			changes: []string{`["10"]: "b" → "c"`, `["2"]: added "d"`},
		},
		{
			name:    "positional lists",
			want:    []string{"a", "b", "c"},
			got:     []string{"a", "x"},
			changes: []string{`.[1]: "b" → "x"`, `.[2]: removed "c"`},
		},
		{name: "longer list", want: []int{1}, got: []int{1, 2}, changes: []string{".[1]: added 2"}},
		{name: "nil against empty slice", want: []int(nil), got: []int{}, changes: []string{".: null → []"}},
		{name: "nil equals empty slice with EquateEmpty", want: []int(nil), got: []int{}, opts: []Option{EquateEmpty()}},
		{name: "nil against empty map", want: map[string]int(nil), got: map[string]int{}, changes: []string{".: null → {}"}},
		{name: "nil equals empty map with EquateEmpty", want: map[string]int(nil), got: map[string]int{}, opts: []Option{EquateEmpty()}},
		{name: "nil equals empty tree map with EquateEmpty", want: map[string]any{"a": []any(nil)}, got: map[string]any{"a": []any{}}, opts: []Option{EquateEmpty()}},
		{name: "nil against empty tree list", want: map[string]any{"a": []any(nil)}, got: map[string]any{"a": []any{}}, changes: []string{".a: null → []"}},
		{name: "nil against empty bytes", want: []byte(nil), got: []byte{}, changes: []string{`.: null → ""`}},
		{name: "nil equals empty bytes with EquateEmpty", want: []byte(nil), got: []byte{}, opts: []Option{EquateEmpty()}},
		{name: "same instant, other location", want: t0, got: t0.In(time.FixedZone("X", 3600))},
		{name: "times", want: t0, got: t0.Add(time.Second), changes: []string{".: 2026-01-02T03:04:05Z → 2026-01-02T03:04:06Z"}},
		{name: "NaN equals NaN", want: math.NaN(), got: math.NaN()},
		{name: "minus zero equals zero", want: math.Copysign(0, -1), got: 0.0},
		{
			name:    "embedded structs are promoted",
			want:    embeds{base: base{ID: "1", Name: "inner"}, Name: "outer"},
			got:     embeds{base: base{ID: "2", Name: "other"}, Name: "outer2", Extra: &Extra{Note: "n"}},
			changes: []string{`.note: added "n"`, `.name: "outer" → "outer2"`}, // encoding/json's order
		},
		{
			name: "opaque and other kinds",
			want: opaque{C: ch, B: []byte("ab"), X: 1i, A: [2]int{1, 2}, M: map[int]string{1: "a"}, I: 1},
			got:  opaque{F: func() {}, C: make(chan int), B: []byte("ac"), X: 2i, A: [2]int{1, 3}, M: map[int]string{1: "a"}, I: "1"},
			changes: []string{
				".f: null → <func()>", // functions are equal only when both nil
				".c: <chan int> → <chan int>",
				`.b: "YWI=" → "YWM="`,
				".x: (0+1i) → (0+2i)",
				".a[1]: 2 → 3",
				`.i: 1 → "1"`,
			},
		},
		{name: "same channel", want: opaque{C: ch}, got: opaque{C: ch}},
		{
			name:    "tree numbers compare by value",
			want:    map[string]any{"a": 1, "b": 1.0, "c": json.Number("2"), "d": uint8(3), "e": 1.5},
			got:     map[string]any{"a": 1.0, "b": int64(1), "c": 2.0, "d": json.Number("3.0"), "e": 1.5},
			changes: nil,
		},
		{
			name:    "tree numbers differ by value",
			want:    map[string]any{"a": 1, "b": json.Number("18446744073709551615")},
			got:     map[string]any{"a": 1.5, "b": uint64(18446744073709551614)},
			changes: []string{".a: 1 → 1.5", ".b: 18446744073709551615 → 18446744073709551614"},
		},
		{
			name:    "ExactNumbers",
			want:    map[string]any{"a": 1, "b": 2.0},
			got:     map[string]any{"a": 1.0, "b": 2.0},
			opts:    []Option{ExactNumbers()},
			changes: []string{".a: 1 → 1"},
		},
		{
			name:    "tree",
			want:    map[string]any{"spec": map[string]any{"replicas": 3.0, "tags": []any{"a", "b"}, "gone": true}},
			got:     map[string]any{"spec": map[string]any{"replicas": 2.0, "tags": []any{"a", "c", "d"}, "new": nil}},
			changes: []string{".spec.gone: removed true", ".spec.new: added null", ".spec.replicas: 3 → 2", `.spec.tags[1]: "b" → "c"`, `.spec.tags[2]: added "d"`},
		},
		{
			name:    "tree types differ",
			want:    map[string]any{"a": map[string]any{"x": 1.0}, "b": []any{1.0}, "c": "s"},
			got:     map[string]any{"a": []any{}, "b": map[string]any{}, "c": true},
			changes: []string{`.a: {"x":1} → []`, ".b: [1] → {}", `.c: "s" → true`},
		},
		{
			name:    "composite values are cut",
			want:    map[string]any{},
			got:     map[string]any{"a": strings.Repeat("x", 100)},
			changes: []string{`.a: added "` + strings.Repeat("x", 79) + "…"},
		},
		{
			name:    "interface fields holding trees",
			want:    struct{ V any }{V: map[string]any{"a": 1.0}},
			got:     struct{ V any }{V: map[string]any{"a": 2}},
			changes: []string{".V.a: 1 → 2"},
		},
		{name: "nil interface field", want: struct{ V any }{}, got: struct{ V any }{V: 1}, changes: []string{".V: null → 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := Diff(tt.want, tt.got, tt.opts...)
			require.Equal(t, tt.changes, lines(cs))
			require.Equal(t, len(tt.changes) == 0, cs.Empty())
			if cs.Empty() {
				require.Equal(t, Hash(tt.want, tt.opts...), Hash(tt.got, tt.opts...), "equal values hash equal")
			}
			back := Diff(tt.got, tt.want, tt.opts...)
			require.Equal(t, len(cs), len(back), "Diff is symmetric in what it finds")
		})
	}
}

func TestDiffChangeKindsAndValues(t *testing.T) {
	want := map[string]any{"a": 1.0, "b": "x", "c": []any{true}}
	got := map[string]any{"a": 2.0, "c": []any{true, false}, "d": "new"}
	cs := Diff(want, got)
	require.Equal(t, Changes{
		{Kind: Changed, Path: MustParsePath(".a"), Old: 1.0, New: 2.0},
		{Kind: Removed, Path: MustParsePath(".b"), Old: "x"},
		{Kind: Added, Path: MustParsePath(".c[1]"), New: false},
		{Kind: Added, Path: MustParsePath(".d"), New: "new"},
	}, cs)
	require.Equal(t, []Path{MustParsePath(".a"), MustParsePath(".b"), MustParsePath(".c[1]"), MustParsePath(".d")}, cs.Paths())
	require.Equal(t, ".a: 1 → 2\n.b: removed \"x\"\n.c[1]: added false\n.d: added \"new\"", cs.String())
	require.Equal(t, "added", Added.String())
	require.Equal(t, "removed", Removed.String())
	require.Equal(t, "changed", Changed.String())
	require.Equal(t, "ChangeKind(9)", ChangeKind(9).String())

	// Paths are fresh slices: changing one never changes another.
	cs[0].Path[0].Name = "zzz"
	require.Equal(t, ".b", cs[1].Path.String())
	require.Equal(t, "", Changes(nil).String())
	require.Empty(t, Changes(nil).Paths())
}

func TestDiffUnexportedAndIgnoredFields(t *testing.T) {
	// Unexported fields and json:"-" fields are not part of the compared
	// view, so values differing only there are equal and hash equal.
	a := tagged{hidden: 1, Skipped: "a"}
	b := tagged{hidden: 2, Skipped: "b"}
	require.True(t, Diff(a, b).Empty())
	require.Equal(t, Hash(a), Hash(b))
}

func TestDiffCycles(t *testing.T) {
	ring := func(vals ...int) *node {
		var first, last *node
		for _, v := range vals {
			n := &node{V: v}
			if first == nil {
				first = n
			} else {
				last.Next = n
			}
			last = n
		}
		last.Next = first
		return first
	}
	require.True(t, Diff(ring(1, 2, 3), ring(1, 2, 3)).Empty(), "equal cycles end")
	cs := Diff(ring(1, 2, 3), ring(1, 5, 3))
	require.NotEmpty(t, cs)
	require.Equal(t, ".next.v: 2 → 5", cs[0].String())
	require.Equal(t, Hash(ring(1, 2, 3)), Hash(ring(1, 2, 3)))

	tree := map[string]any{}
	tree["self"] = tree
	list := []any{nil}
	list[0] = list
	require.True(t, Diff(tree, tree).Empty())
	other := map[string]any{}
	other["self"] = other
	require.True(t, Diff(tree, other).Empty())
	require.NotPanics(t, func() { Hash(tree); Hash(list) })
	require.Equal(t, Hash(tree), Hash(other))
}

func TestDiffOptionsCompose(t *testing.T) {
	want := map[string]any{"a": 1.0, "b": 1.0, "c": []any(nil)}
	got := map[string]any{"a": 2.0, "b": 2.0, "c": []any{}}
	both := Options(Ignore(MustParsePath(".a")), nil, Options(EquateEmpty()))
	require.Equal(t, []string{".b: 1 → 2"}, lines(Diff(want, got, both)))
	require.Equal(t, []string{".b: 1 → 2"}, lines(Diff(want, got, Ignore(MustParsePath(".a")), nil, EquateEmpty())))

	// An option's paths are its own: changing the caller's slice later
	// does not change the option.
	p := MustParsePath(".a")
	opt := Ignore(p)
	p[0].Name = "b"
	require.Equal(t, []string{".b: 1 → 2"}, lines(Diff(want, got, opt, EquateEmpty())))
}
