package store

import (
	"math"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

type eqLabel string

type eqInner struct {
	N    int8
	U    uint16
	F    float32
	C    complex128
	Arr  [2]int32
	hide string // unexported fields count, as in reflect.DeepEqual
}

type eqValue struct {
	B      bool
	I      int
	F      float64
	S      string
	P      *int
	In     eqInner
	PIn    *eqInner
	Sl     []string
	SlIn   []eqInner
	M      map[string]string
	Named  map[eqLabel]string // no compiled form: reflect.DeepEqual
	MAny   map[string]any
	Any    any
	Fn     func()
	Nested [][]int
	Empty  struct{}
}

type eqList struct {
	V    int
	Next *eqList // contains itself: reflect.DeepEqual, which stops at cycles
}

// equalOf's verdict is reflect.DeepEqual's, value by value, for each kind
// it compiles and each it hands on.
func TestEqualOfIsDeepEqual(t *testing.T) {
	one, one2, two := 1, 1, 2
	nan := math.NaN()
	shared := []string{"a", "b"}
	base := func() eqValue {
		return eqValue{B: true, I: 1, F: 1.5, S: "s", P: &one, In: eqInner{N: 1, U: 2, F: 3, C: 4i, Arr: [2]int32{5, 6}, hide: "h"},
			PIn: &eqInner{N: 1}, Sl: []string{"a"}, SlIn: []eqInner{{N: 1}}, M: map[string]string{"k": "v"},
			Named: map[eqLabel]string{"l": "v"}, MAny: map[string]any{"x": []any{1}}, Any: map[string]any{"y": 1}, Nested: [][]int{{1}, nil}}
	}
	edits := map[string]func(v *eqValue){
		"same":                 func(v *eqValue) {},
		"bool":                 func(v *eqValue) { v.B = false },
		"int":                  func(v *eqValue) { v.I = 2 },
		"float":                func(v *eqValue) { v.F = 2.5 },
		"nan":                  func(v *eqValue) { v.F = nan },
		"negative zero":        func(v *eqValue) { v.F = math.Copysign(0, -1) },
		"string":               func(v *eqValue) { v.S = "t" },
		"pointer to same":      func(v *eqValue) { v.P = &one2 },
		"pointer to other":     func(v *eqValue) { v.P = &two },
		"nil pointer":          func(v *eqValue) { v.P = nil },
		"int8":                 func(v *eqValue) { v.In.N = -1 },
		"uint16":               func(v *eqValue) { v.In.U = 9 },
		"float32":              func(v *eqValue) { v.In.F = 9 },
		"complex":              func(v *eqValue) { v.In.C = 5i },
		"array":                func(v *eqValue) { v.In.Arr[1] = 7 },
		"unexported":           func(v *eqValue) { v.In.hide = "i" },
		"struct pointer":       func(v *eqValue) { v.PIn = &eqInner{N: 2} },
		"nil slice":            func(v *eqValue) { v.Sl = nil },
		"empty slice":          func(v *eqValue) { v.Sl = []string{} },
		"longer slice":         func(v *eqValue) { v.Sl = []string{"a", "b"} },
		"slice item":           func(v *eqValue) { v.Sl = []string{"b"} },
		"struct slice item":    func(v *eqValue) { v.SlIn = []eqInner{{N: 2}} },
		"map value":            func(v *eqValue) { v.M = map[string]string{"k": "w"} },
		"map key":              func(v *eqValue) { v.M = map[string]string{"j": "v"} },
		"nil map":              func(v *eqValue) { v.M = nil },
		"empty map":            func(v *eqValue) { v.M = map[string]string{} },
		"named map":            func(v *eqValue) { v.Named = map[eqLabel]string{"l": "w"} },
		"map of any":           func(v *eqValue) { v.MAny = map[string]any{"x": []any{2}} },
		"interface":            func(v *eqValue) { v.Any = map[string]any{"y": 2} },
		"interface type":       func(v *eqValue) { v.Any = 1 },
		"func":                 func(v *eqValue) { v.Fn = func() {} },
		"nested nil to empty":  func(v *eqValue) { v.Nested = [][]int{{1}, {}} },
		"nested item":          func(v *eqValue) { v.Nested = [][]int{{2}, nil} },
		"slices sharing array": func(v *eqValue) { v.Sl = shared[:1] },
	}
	eq := equalOf(reflect.TypeFor[eqValue]())
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			a, b := base(), base()
			edit(&b)
			want := reflect.DeepEqual(&a, &b)
			require.Equal(t, want, eq(unsafe.Pointer(&a), unsafe.Pointer(&b)), "a, b")
			require.Equal(t, want, eq(unsafe.Pointer(&b), unsafe.Pointer(&a)), "b, a")
			require.Equal(t, reflect.DeepEqual(&b, &b), eq(unsafe.Pointer(&b), unsafe.Pointer(&b)), "b, b")
		})
	}
	t.Run("slices sharing an array", func(t *testing.T) {
		a, b := base(), base()
		a.Sl, b.Sl = shared, shared
		require.True(t, eq(unsafe.Pointer(&a), unsafe.Pointer(&b)))
	})
	t.Run("recursive type", func(t *testing.T) {
		leq := equalOf(reflect.TypeFor[eqList]())
		a := &eqList{V: 1}
		a.Next = a // a cycle
		b := &eqList{V: 1}
		b.Next = b
		require.Equal(t, reflect.DeepEqual(a, b), leq(unsafe.Pointer(a), unsafe.Pointer(b)))
		c := &eqList{V: 1, Next: &eqList{V: 2}}
		require.False(t, leq(unsafe.Pointer(a), unsafe.Pointer(c)))
	})
}

// TestUserMetaEqualIsEachPartEqual checks userMetaEqual against what it
// means: the labels, annotations, owners and finalizers of both Metas are
// each equal, an empty map or list equal to a nil one. Every pairing of
// nil, empty and two different values of each part is tried, so a part
// left out of its shortcut for Metas with none of them is caught.
func TestUserMetaEqualIsEachPartEqual(t *testing.T) {
	labels := []map[string]string{nil, {}, {"a": "1"}, {"a": "2"}}
	annotations := []map[string]string{nil, {}, {"n": "x"}, {"o": "x"}}
	owners := [][]OwnerRef{nil, {}, {{Kind: "K", Name: "n", UID: "u"}}, {{Kind: "K", Name: "n", UID: "u", Controller: true}}}
	finalizers := [][]string{nil, {}, {"f"}, {"g"}}
	// part i of combination c: its (i+1)-th base-4 digit, one of the four
	// values above (0 nil, 1 empty, 2 and 3 two others).
	part := func(c, i int) int { return c >> (2 * i) & 3 }
	same := func(x, y int) bool { return x == y || x < 2 && y < 2 }
	for c := range 1 << 16 {
		a := Meta{Labels: labels[part(c, 0)], Annotations: annotations[part(c, 1)], Owners: owners[part(c, 2)], Finalizers: finalizers[part(c, 3)]}
		b := Meta{Labels: labels[part(c, 4)], Annotations: annotations[part(c, 5)], Owners: owners[part(c, 6)], Finalizers: finalizers[part(c, 7)]}
		want := true
		for i := range 4 {
			want = want && same(part(c, i), part(c, i+4))
		}
		if got := userMetaEqual(&a, &b); got != want {
			t.Fatalf("userMetaEqual(%+v, %+v) = %v, want %v", a, b, got, want)
		}
	}
}
