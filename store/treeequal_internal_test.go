package store

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// treeEqual's verdict is reflect.DeepEqual's, pair by pair, for random
// trees of decoded JSON and the values beside them that it hands on:
// copies, copies with one edit, trees sharing subtrees, nil against empty,
// NaN, numbers of different types, values of other types, and cycles.
func TestTreeEqualIsDeepEqual(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 1))
	check := func(a, b any) {
		t.Helper()
		if got, want := treeEqual(a, b), reflect.DeepEqual(a, b); got != want {
			t.Fatalf("treeEqual(%#v, %#v) = %v, reflect.DeepEqual says %v", a, b, got, want)
		}
		if got, want := treeEqual(b, a), reflect.DeepEqual(b, a); got != want {
			t.Fatalf("treeEqual(%#v, %#v) = %v, reflect.DeepEqual says %v", b, a, got, want)
		}
	}
	pairs := 0
	for range 2000 {
		a := randTree(r, 0)
		check(a, a)
		check(a, copyTree(a))
		check(a, editTree(r, copyTree(a)))
		check(a, randTree(r, 0))
		pairs += 4
	}
	nan := math.NaN()
	shared := map[string]any{"n": nan}
	sharedList := []any{nan}
	self, self2 := map[string]any{}, map[string]any{}
	self["self"], self2["self"] = self, self2
	for _, c := range [][2]any{
		{nil, nil}, {nil, map[string]any(nil)}, {map[string]any(nil), map[string]any{}},
		{[]any(nil), []any{}}, {[]any{}, []any{}}, {nan, nan}, {0.0, math.Copysign(0, -1)},
		{int64(1), 1.0}, {int64(1), 1}, {"1", json.Number("1")}, {json.Number("1"), json.Number("1")},
		{[]string{"a"}, []string{"a"}}, {[]any{"a"}, []string{"a"}},
		{shared, shared}, {map[string]any{"m": shared}, map[string]any{"m": shared}},
		{map[string]any{"n": nan}, map[string]any{"n": nan}},
		{sharedList, sharedList}, {sharedList[:0], sharedList[:0]}, {[]any{sharedList}, []any{sharedList}},
		{map[string]any{"k": nil}, map[string]any{"j": nil}}, {map[string]any{"k": nil}, map[string]any{"k": map[string]any(nil)}},
		{self, self}, {self, self2}, {map[string]any{"self": self}, self2},
	} {
		check(c[0], c[1])
		pairs++
	}
	if pairs < 2000 {
		t.Fatalf("only %d pairs", pairs)
	}
}

// randTree returns a random tree of decoded JSON, with now and then a
// value jsonscan never makes.
func randTree(r *rand.Rand, depth int) any {
	n := 8
	if depth < 4 {
		n = 11
	}
	switch r.IntN(n) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return []string{"a", "b", "c"}[r.IntN(3)]
	case 3:
		return int64(r.IntN(3))
	case 4:
		return []float64{0.5, 1, math.NaN()}[r.IntN(3)]
	case 5:
		return json.Number("1")
	case 6:
		return []any{[]any(nil), map[string]any(nil), []any{}, map[string]any{}}[r.IntN(4)]
	case 7:
		return int64(7)
	case 8, 9:
		m := map[string]any{}
		for i := range r.IntN(4) {
			m[[]string{"a", "b", "c", "d"}[i]] = randTree(r, depth+1)
		}
		return m
	default:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randTree(r, depth+1)
		}
		return l
	}
}

func copyTree(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return v
		}
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = copyTree(x)
		}
		return m
	case []any:
		if v == nil {
			return v
		}
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = copyTree(x)
		}
		return l
	}
	return v
}

// editTree changes, adds or removes one node of v somewhere, or replaces v.
func editTree(r *rand.Rand, v any) any {
	switch v := v.(type) {
	case map[string]any:
		if len(v) > 0 && r.IntN(3) > 0 {
			for k, x := range v {
				switch r.IntN(3) {
				case 0:
					delete(v, k)
				case 1:
					v[k+"x"] = x
					delete(v, k)
				default:
					v[k] = editTree(r, x)
				}
				return v
			}
		}
	case []any:
		if len(v) > 0 && r.IntN(3) > 0 {
			i := r.IntN(len(v))
			if r.IntN(3) == 0 {
				return append(v[:i:i], v[i+1:]...)
			}
			v[i] = editTree(r, v[i])
			return v
		}
	}
	return randTree(r, 3)
}
