package jsonscan

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// referenceChangedScalars is ChangedScalars as it was before it learned to
// read the bytes both values share only once (issue 26): the oracle of
// FuzzChangedScalarsMatchesReference.
func referenceChangedScalars(a, b []byte, root string, max int) ([][]string, bool) {
	var pathBuf [8]string
	path := append(pathBuf[:0], root)
	d := refLockstep{a: scanner{b: a, s: string(a)}, b: scanner{b: b, s: string(b)}, max: max}
	if !d.compare(&path, false) || !d.a.atEnd() || !d.b.atEnd() {
		return nil, false
	}
	return d.changed, true
}

// refLockstep is the state of referenceChangedScalars.
type refLockstep struct {
	a, b    scanner
	changed [][]string
	max     int
}

func (d *refLockstep) compare(path *[]string, strict bool) bool {
	a, b := &d.a, &d.b
	a.space()
	b.space()
	if a.i >= len(a.b) || b.i >= len(b.b) || len(*path) > maxDepth {
		return false
	}
	ca, cb := a.b[a.i], b.b[b.i]
	if ca == '{' || cb == '{' || ca == '[' || cb == '[' || ca == 'n' || cb == 'n' {
		if ca != cb {
			return false
		}
		switch ca {
		case '{':
			return d.object(path, strict)
		case '[':
			return d.array(path)
		}
		return a.word("null") && b.word("null")
	}
	return d.scalars(*path, strict)
}

// scalars compares two scalars at path, recording a change unless strict
// forbids it or max changes are recorded already.
func (d *refLockstep) scalars(path []string, strict bool) bool {
	ta, errA := d.a.scalar()
	tb, errB := d.b.scalar()
	switch {
	case errA != nil || errB != nil:
		return false
	case ta == tb:
		return true
	case strict || len(d.changed) == d.max:
		return false
	}
	d.changed = append(d.changed, append([]string(nil), path...))
	return true
}

func (d *refLockstep) object(path *[]string, strict bool) bool {
	a, b := &d.a, &d.b
	a.i++ // {
	b.i++
	a.space()
	b.space()
	endA, endB := a.byte('}'), b.byte('}')
	if endA || endB {
		return endA && endB
	}
	for {
		k, ok := d.key()
		if !ok {
			return false
		}
		*path = append(*path, k)
		ok = d.compare(path, strict)
		*path = (*path)[:len(*path)-1]
		if !ok {
			return false
		}
		switch d.next() {
		case ',':
		case '}':
			return true
		default:
			return false
		}
	}
}

// key reads the same object key, and the colon after it, from both.
func (d *refLockstep) key() (string, bool) {
	a, b := &d.a, &d.b
	a.space()
	b.space()
	if a.i >= len(a.b) || a.b[a.i] != '"' || b.i >= len(b.b) || b.b[b.i] != '"' {
		return "", false
	}
	ka, errA := a.string()
	kb, errB := b.string()
	if errA != nil || errB != nil || ka != kb || d.next() != ':' {
		return "", false
	}
	return ka, true
}

// array requires both arrays to be equal item by item.
func (d *refLockstep) array(path *[]string) bool {
	a, b := &d.a, &d.b
	a.i++ // [
	b.i++
	a.space()
	b.space()
	endA, endB := a.byte(']'), b.byte(']')
	if endA || endB {
		return endA && endB
	}
	for {
		if !d.compare(path, true) {
			return false
		}
		switch d.next() {
		case ',':
		case ']':
			return true
		default:
			return false
		}
	}
}

// next reads the same delimiter from both and returns it, or 0 when they
// differ or end.
func (d *refLockstep) next() byte {
	a, b := &d.a, &d.b
	a.space()
	b.space()
	if a.i >= len(a.b) || b.i >= len(b.b) || a.b[a.i] != b.b[b.i] {
		return 0
	}
	c := a.b[a.i]
	a.i++
	b.i++
	return c
}

// ChangedScalars reads what both values share once; its answer is the
// reference's, whatever the values and wherever they differ: b is a with
// mid in place of a[i:j], so that the two share a prefix and a suffix.
func FuzzChangedScalarsMatchesReference(f *testing.F) {
	f.Add([]byte(`{"r":1,"m":{"a":true,"b":"x"},"l":[1]}`), []byte(`2`), uint(5), uint(6))
	f.Add([]byte(`{"r":1,"m":{"a":true,"b":"x"},"l":[1,2]}`), []byte(`3`), uint(37), uint(38))
	f.Add([]byte(`{"a":"x","b":{"c":1e5,"d":[{"e":null}]},"f":"\u00e9"}`), []byte(`"y"`), uint(5), uint(8))
	f.Add([]byte(`{"a":1,"b":1,"c":1}`), []byte(`2,"b":2,"c":2`), uint(5), uint(18))
	f.Add([]byte(` { "a" : [ 1 , 2 ] , "b" : 1e400 } `), []byte(`1`), uint(10), uint(11))
	f.Fuzz(func(t *testing.T, a, mid []byte, i, j uint) {
		i, j = i%uint(len(a)+1), j%uint(len(a)+1)
		if i > j {
			i, j = j, i
		}
		b := append(append(append([]byte(nil), a[:i]...), mid...), a[j:]...)
		for _, pair := range [][2][]byte{{a, b}, {b, a}, {a, a}} {
			for _, max := range []int{1, 16} {
				want, wantOK := referenceChangedScalars(pair[0], pair[1], "root", max)
				got, gotOK := ChangedScalars(pair[0], pair[1], "root", max)
				require.Equal(t, wantOK, gotOK, "%q → %q", pair[0], pair[1])
				require.Equal(t, want, got, "%q → %q", pair[0], pair[1])
				requireOfValidAgrees(t, pair[0], pair[1], "root", max)
				requireToAgrees(t, pair[0], pair[1], "root", max)
			}
		}
	})
}

// TestChangedScalarsMatchesReference holds ChangedScalars to the reference
// on random values and random edits of them (FuzzChangedScalarsMatchesReference
// explores further).
func TestChangedScalarsMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 26))
	for range 3000 {
		a := randomJSON(rng, 0)
		b := []byte(a)
		switch rng.IntN(4) {
		case 0: // change one byte
			if len(b) > 0 {
				b[rng.IntN(len(b))] = `0123456789"ab{}[],: ne`[rng.IntN(22)]
			}
		case 1: // a scalar replaced by another
			b = []byte(strings.Replace(a, []string{"1", "true", `"x"`, "2.5"}[rng.IntN(4)], []string{"7", "false", `"yz"`, "1e3", "null"}[rng.IntN(5)], 1))
		case 2: // two
			b = []byte(strings.Replace(a, "1", "9", 2))
		}
		for _, pair := range [][2][]byte{{[]byte(a), b}, {b, []byte(a)}} {
			want, wantOK := referenceChangedScalars(pair[0], pair[1], "spec", 3)
			got, gotOK := ChangedScalars(pair[0], pair[1], "spec", 3)
			require.Equal(t, wantOK, gotOK, "%s → %s", pair[0], pair[1])
			require.Equal(t, want, got, "%s → %s", pair[0], pair[1])
			requireOfValidAgrees(t, pair[0], pair[1], "spec", 3)
			requireToAgrees(t, pair[0], pair[1], "spec", 3)
		}
	}
}

// randomJSON is a random JSON value at depth, with white space here and
// there.
func randomJSON(rng *rand.Rand, depth int) string {
	ws := func() string { return []string{"", "", "", " ", "\n "}[rng.IntN(5)] }
	kind := rng.IntN(8)
	if depth > 3 {
		kind = 4 + rng.IntN(4)
	}
	switch kind {
	case 0, 1, 2:
		var sb strings.Builder
		sb.WriteString("{" + ws())
		for k := range rng.IntN(4) {
			if k > 0 {
				sb.WriteString("," + ws())
			}
			sb.WriteString(`"` + []string{"a", "bb", "c\\u0063", "d"}[rng.IntN(4)] + `"` + ws() + ":" + randomJSON(rng, depth+1))
		}
		return sb.String() + ws() + "}"
	case 3:
		var sb strings.Builder
		sb.WriteString("[")
		for k := range rng.IntN(3) {
			if k > 0 {
				sb.WriteString(",")
			}
			sb.WriteString(randomJSON(rng, depth+1))
		}
		return sb.String() + "]"
	}
	return ws() + []string{"1", "true", `"x"`, "2.5", "null", `"\u00e9\n"`, "-0", "1e400", "10000000000000000000000"}[rng.IntN(9)] + ws()
}

// requireOfValidAgrees requires ChangedScalarsOfValid to answer as
// ChangedScalars does when a is JSON that Decode accepts.
func requireOfValidAgrees(t *testing.T, a, b []byte, root string, max int) {
	t.Helper()
	if _, err := Decode(a); err != nil {
		return
	}
	want, wantOK := ChangedScalars(a, b, root, max)
	got, gotOK := ChangedScalarsOfValid(a, b, root, max)
	require.Equal(t, wantOK, gotOK, "of valid: %q → %q", a, b)
	require.Equal(t, want, got, "of valid: %q → %q", a, b)
}

// requireToAgrees requires ChangedScalarsTo to give the paths and the
// answer of ChangedScalars, and of ChangedScalarsOfValid when a is JSON
// that Decode accepts, but for paths that do not fit in a Changes.
func requireToAgrees(t *testing.T, a, b []byte, root string, max int) {
	t.Helper()
	for _, valid := range []bool{false, true} {
		var want [][]string
		var wantOK bool
		if !valid {
			want, wantOK = ChangedScalars(a, b, root, max)
		} else if _, err := Decode(a); err != nil {
			continue
		} else {
			want, wantOK = ChangedScalarsOfValid(a, b, root, max)
		}
		var c Changes
		c.n = 3 // not an earlier call's paths
		gotOK := ChangedScalarsTo(&c, a, b, root, max, valid)
		var got [][]string
		keys := 0
		for i := range c.Len() {
			got = append(got, slices.Clone(c.Path(i)))
		}
		for _, p := range want {
			keys += len(p)
		}
		if wantOK && !gotOK {
			require.True(t, len(want) > 16 || keys > 32, "to (valid %v): %q → %q: declined paths that fit", valid, a, b)
			continue
		}
		require.Equal(t, wantOK, gotOK, "to (valid %v): %q → %q", valid, a, b)
		if wantOK {
			require.Equal(t, want, got, "to (valid %v): %q → %q", valid, a, b)
		}
	}
}

// TestChangedScalarsToHoldsWhatFits checks that ChangedScalarsTo declines
// paths that do not fit in a Changes, and takes those that just fit.
func TestChangedScalarsToHoldsWhatFits(t *testing.T) {
	deep := func(n int, v string) string {
		return strings.Repeat(`{"k":`, n) + v + strings.Repeat("}", n)
	}
	var c Changes
	require.True(t, ChangedScalarsTo(&c, []byte(deep(31, "1")), []byte(deep(31, "2")), "r", 16, false))
	require.Equal(t, 32, len(c.Path(0)))
	require.False(t, ChangedScalarsTo(&c, []byte(deep(32, "1")), []byte(deep(32, "2")), "r", 16, false))
	wide := func(v string) string {
		var sb strings.Builder
		for i := range 17 {
			if i > 0 {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, `"k%d":%s`, i, v)
		}
		return "{" + sb.String() + "}"
	}
	require.False(t, ChangedScalarsTo(&c, []byte(wide("1")), []byte(wide("2")), "r", 17, false))
	require.True(t, ChangedScalarsTo(&c, []byte(wide("1")), []byte(wide("1")), "r", 17, false))
	require.Zero(t, c.Len())
}

// TestChangedScalarsOfValidReadsLess checks that the variant for a known
// valid a does skip the common suffix: with an a that only the suffix
// makes invalid, it reports the change that ChangedScalars refuses.
func TestChangedScalarsOfValidReadsLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want [][]string
	}{
		{`{"r":1,"x":[1e400]}`, `{"r":2,"x":[1e400]}`, [][]string{{"spec", "r"}}},              // after a comma
		{`{"r" :[1e400]}`, `{"r":[1e400]}`, nil},                                               // at a value
		{`{"r":{"s":1,"t":1e400}}`, `{"r":{"s":2,"t":1e400}}`, [][]string{{"spec", "r", "s"}}}, // nested
	} {
		_, ok := ChangedScalars([]byte(c.a), []byte(c.b), "spec", 4)
		require.False(t, ok, c.a)
		got, ok := ChangedScalarsOfValid([]byte(c.a), []byte(c.b), "spec", 4)
		require.True(t, ok, c.a)
		require.Equal(t, c.want, got, c.a)
	}
}
