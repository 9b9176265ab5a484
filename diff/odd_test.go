package diff

import (
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

type (
	inner       struct{ X int }
	withPrivate struct {
		inner        // unexported embedded struct: not promoted
		*Extra       // exported embedded pointer: promoted, nil on one side
		P      **int `json:"p"`
	}
	keyStruct struct{ A, B int }
)

// Odd inputs never panic, and each gives a definite answer.
func TestDiffOddInputs(t *testing.T) {
	one, two := 1, 2
	p1, p2 := &one, &two
	var x int
	tests := []struct {
		name      string
		want, got any
		changes   []string
	}{
		{name: "unexported embedded struct is not compared", want: withPrivate{inner: inner{1}}, got: withPrivate{inner: inner{2}}},
		{name: "promoted field behind a nil pointer", want: withPrivate{Extra: &Extra{Note: "a"}}, got: withPrivate{}, changes: []string{`.note: removed "a"`}},
		{name: "pointer to pointer", want: withPrivate{P: &p1}, got: withPrivate{P: &p2}, changes: []string{".p: 1 → 2"}},
		{name: "struct map keys", want: map[keyStruct]int{{1, 2}: 1}, got: map[keyStruct]int{{1, 2}: 2}, changes: []string{`["{\"A\":1,\"B\":2}"]: 1 → 2`}},
		{name: "any map keys", want: map[any]int{1: 1, "a": 2}, got: map[any]int{1: 1, "a": 3}, changes: []string{`.a: 2 → 3`}},
		{name: "NaN map keys never match", want: map[float64]int{math.NaN(): 1}, got: map[float64]int{math.NaN(): 1}, changes: []string{".NaN: removed 1", ".NaN: added 1"}},
		{name: "unsafe pointers", want: unsafe.Pointer(&x), got: unsafe.Pointer(&x)},
		{name: "arrays of interfaces", want: [2]any{1, "a"}, got: [2]any{1.0, "b"}, changes: []string{`.[1]: "a" → "b"`}},
		{name: "typed nil in interface", want: any((*int)(nil)), got: any((*int)(nil))},
		{name: "typed nil against nil", want: any((*int)(nil)), got: nil, changes: []string{".: null → null"}},
		{name: "uint64 beyond int64", want: uint64(math.MaxUint64), got: uint64(math.MaxUint64 - 1), changes: []string{".: 18446744073709551615 → 18446744073709551614"}},
		{name: "float32", want: float32(1.5), got: float32(2.5), changes: []string{".: 1.5 → 2.5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cs Changes
			require.NotPanics(t, func() { cs = Diff(tt.want, tt.got) })
			require.Equal(t, tt.changes, lines(cs))
			require.NotPanics(t, func() { Hash(tt.want); Hash(tt.got) })
			if cs.Empty() {
				require.Equal(t, Hash(tt.want), Hash(tt.got))
			}
		})
	}
}

type (
	embA      struct{ Name, A string }
	embB      struct{ Name, B string }
	embTagged struct {
		Name string `json:"Name"`
	}
	ambiguous struct {
		embA
		embB
	}
	ambiguousEmbedded struct {
		EmbA
		EmbB
	}
	EmbA      embA
	EmbB      embB
	tagBreaks struct {
		EmbA
		EmbTagged
	}
	EmbTagged embTagged
)

func TestDiffEmbeddedNameConflicts(t *testing.T) {
	// As in encoding/json: two untagged fields with one name at one depth
	// cancel out; a tagged one wins over untagged ones.
	a := ambiguousEmbedded{EmbA{Name: "x", A: "1"}, EmbB{Name: "y", B: "1"}}
	b := ambiguousEmbedded{EmbA{Name: "z", A: "2"}, EmbB{Name: "w", B: "1"}}
	require.Equal(t, []string{`.A: "1" → "2"`}, lines(Diff(a, b)))

	c := tagBreaks{EmbA{Name: "x"}, EmbTagged{Name: "t1"}}
	d := tagBreaks{EmbA{Name: "y"}, EmbTagged{Name: "t2"}}
	require.Equal(t, []string{`.Name: "t1" → "t2"`}, lines(Diff(c, d)))

	require.True(t, Diff(ambiguous{embA: embA{A: "1"}}, ambiguous{embA: embA{A: "2"}}).Empty(), "unexported embedded structs are left out")
}

func TestHashFiltersOnKeyedListsAndSets(t *testing.T) {
	a := service{Ports: []port{{Name: "a", Port: 80, Protocol: "TCP"}, {Name: "d", Port: 53, Protocol: "UDP"}}, Tags: []string{"x", "y"}}
	b := service{Ports: []port{{Name: "d", Port: 53, Protocol: "UDP"}, {Name: "b", Port: 80, Protocol: "TCP"}}, Tags: []string{"y", "z"}}
	opts := []Option{Ignore(MustParsePath(`.ports[port=80,protocol="TCP"].name`), MustParsePath(`.tags[="x"]`), MustParsePath(`.tags[="z"]`))}
	require.True(t, Diff(a, b, opts...).Empty())
	require.Equal(t, Hash(a, opts...), Hash(b, opts...))
	require.NotEqual(t, Hash(a, opts[:0]...), Hash(b, opts[:0]...))

	only := Only(MustParsePath(`.ports[port=53,protocol="UDP"]`))
	require.True(t, Diff(a, b, only).Empty())
	require.Equal(t, Hash(a, only), Hash(b, only))
	b.Ports[0].Name = "changed"
	require.Equal(t, []string{`.ports[port=53,protocol="UDP"].name: "d" → "changed"`}, lines(Diff(a, b, only)))
	require.NotEqual(t, Hash(a, only), Hash(b, only))
}

type label string

func TestDiffKeysInTypedMaps(t *testing.T) {
	want := []map[label]string{{"name": "a", "v": "1"}, {"name": "b", "v": "1"}}
	got := []map[label]string{{"name": "b", "v": "2"}, {"name": "a", "v": "1"}}
	require.Equal(t, []string{`.[name="b"].v: "1" → "2"`}, lines(Diff(want, got, ListKeys(Path{}, "name"))))
	require.Equal(t, []string{`.[name="b"].v: "1" → "2"`}, lines(Diff(want, got, Only(MustParsePath(`[name="b"]`)), ListKeys(Path{}, "name"))))
}

func TestElementString(t *testing.T) {
	require.Equal(t, ".spec", Element{Kind: FieldElem, Name: "spec"}.String())
	require.Equal(t, `["a.b"]`, Element{Kind: FieldElem, Name: "a.b"}.String())
	require.Equal(t, `[name="x"]`, Element{Kind: KeyElem, Keys: []KeyField{{"name", "x"}}}.String())
	require.Equal(t, `[=1.5]`, Element{Kind: ValueElem, Value: 1.5}.String())
	require.Equal(t, `[2]`, Element{Kind: IndexElem, Index: 2}.String())
	require.Equal(t, `[<invalid element kind 0>]`, Element{}.String())
}

type myTime time.Time

func TestDiffTimeDefinedTypes(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	require.True(t, Diff(myTime(t0), myTime(t0.In(time.FixedZone("X", 60)))).Empty())
	require.Equal(t, Hash(myTime(t0)), Hash(myTime(t0.In(time.FixedZone("X", 60)))))
	require.Equal(t, ".: 2026-01-02T03:04:05Z → 2026-01-02T03:04:05.000000001Z", Diff(myTime(t0), myTime(t0.Add(1))).String())
}
