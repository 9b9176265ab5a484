package jsonscan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestChangedScalars(t *testing.T) {
	tests := []struct {
		a, b string
		want [][]string // nil with ok false
		ok   bool
	}{
		{`{"r":1,"i":"x"}`, `{"r":2,"i":"x"}`, [][]string{{"spec", "r"}}, true},
		{`{"r":1,"m":{"a":true}}`, ` { "r" : 1 , "m" : { "a" : false } } `, [][]string{{"spec", "m", "a"}}, true},
		{`{"r":1}`, `{"r":1.0}`, [][]string{{"spec", "r"}}, true},
		{`{"r":1,"l":[1,2]}`, `{"r":1,"l":[1,2]}`, nil, true},
		{`null`, `null`, nil, true},
		{`{"r":1}`, `{"r":1,"s":2}`, nil, false},
		{`{"r":1,"s":2}`, `{"s":2,"r":1}`, nil, false},
		{`{"l":[1,2]}`, `{"l":[1,3]}`, nil, false},
		{`{"r":1}`, `{"r":"1"}`, [][]string{{"spec", "r"}}, true},
		{`{"r":1}`, `{"r":null}`, nil, false},
		{`{"r":1}`, `{"r":{}}`, nil, false},
		{`{"r":1}`, `{"r":1e400}`, nil, false},
		{`{"r":1}`, `{"r":1}x`, nil, false},
		{`{"a":1,"b":1,"c":1}`, `{"a":2,"b":2,"c":2}`, nil, false}, // over max
	}
	for _, tt := range tests {
		got, ok := ChangedScalars([]byte(tt.a), []byte(tt.b), "spec", 2)
		require.Equal(t, tt.ok, ok, "%s → %s", tt.a, tt.b)
		if ok {
			require.Equal(t, tt.want, got, "%s → %s", tt.a, tt.b)
		}
	}
}

// What ChangedScalars accepts, encoding/json reads as two trees that are
// equal but for scalars at the reported paths.
func FuzzChangedScalars(f *testing.F) {
	f.Add([]byte(`{"r":1,"m":{"a":true,"b":"x"},"l":[1]}`), []byte(`{"r":2,"m":{"a":false,"b":"x"},"l":[1]}`))
	f.Add([]byte(`{"r":1}`), []byte(`{"r":1.0}`))
	f.Add([]byte(`[{"a":1}]`), []byte(`[{"a":1}]`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		changed, ok := ChangedScalars(a, b, "root", 16)
		if !ok {
			return
		}
		ta, errA := referenceTree(a)
		tb, errB := referenceTree(b)
		require.NoError(t, errA, "accepted what encoding/json rejects: %q", a)
		require.NoError(t, errB, "accepted what encoding/json rejects: %q", b)
		for _, p := range changed {
			require.Equal(t, "root", p[0])
			if len(p) == 1 {
				require.True(t, isScalar(ta) && isScalar(tb), "both are scalars")
				tb = ta
				continue
			}
			va, vb := at(t, ta, p[1:]), at(t, tb, p[1:])
			require.True(t, isScalar(va) && isScalar(vb), "%v is a scalar on both sides", p)
			set(tb, p[1:], va)
		}
		require.Equal(t, ta, tb, "the values differ only at %v", changed)
	})
}

func at(t *testing.T, v any, path []string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		require.True(t, ok)
		v = m[k]
	}
	return v
}

func set(v any, path []string, x any) {
	for _, k := range path[:len(path)-1] {
		v = v.(map[string]any)[k]
	}
	v.(map[string]any)[path[len(path)-1]] = x
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any, nil:
		return false
	}
	return true
}

// BenchmarkChangedScalars compares the ~200-byte spec of the
// controller-shaped benchmark (bench/cmd/ctl-steady) before and after its
// writer bumps the replicas, as an Update's keepManaged does.
//
//	go test -run '^$' -bench ChangedScalars -benchmem ./internal/jsonscan/
func BenchmarkChangedScalars(b *testing.B) { benchChangedScalars(b, ChangedScalars) }

// BenchmarkChangedScalarsOfValid is BenchmarkChangedScalars for a spec
// the Update's read gave a shape key, as keepManaged compares it.
//
//	go test -run '^$' -bench ChangedScalarsOfValid -benchmem ./internal/jsonscan/
func BenchmarkChangedScalarsOfValid(b *testing.B) { benchChangedScalars(b, ChangedScalarsOfValid) }

func benchChangedScalars(b *testing.B, changedScalars func(a, b []byte, root string, max int) ([][]string, bool)) {
	a := []byte(`{"replicas":7,"image":"registry.example.com/team/app:v1.2.3","args":["--listen=:8080","--verbose","--config=/etc/app/config.yaml"],"selector":{"app":"app-00042","tier":"backend"}}`)
	c := []byte(`{"replicas":8,"image":"registry.example.com/team/app:v1.2.3","args":["--listen=:8080","--verbose","--config=/etc/app/config.yaml"],"selector":{"app":"app-00042","tier":"backend"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if changed, ok := changedScalars(a, c, "spec", 16); !ok || len(changed) != 1 {
			b.Fatal(changed, ok)
		}
	}
}

// TestCommonPrefixAndSuffix checks commonPrefix and commonSuffix, which
// read words (two at a time from the end), against a byte-by-byte count,
// for texts of every length to 40 that differ at every place.
func TestCommonPrefixAndSuffix(t *testing.T) {
	byByte := func(a, b []byte, fromEnd bool) int {
		n := 0
		for n < len(a) && n < len(b) {
			i, j := n, n
			if fromEnd {
				i, j = len(a)-1-n, len(b)-1-n
			}
			if a[i] != b[j] {
				break
			}
			n++
		}
		return n
	}
	for la := range 41 {
		a := make([]byte, la)
		for i := range a {
			a[i] = byte('a' + i%26)
		}
		for lb := range 41 {
			for at := -1; at < lb; at++ { // b is a's head or tail, with one byte changed (none at -1)
				b := make([]byte, lb)
				tail := make([]byte, lb)
				for i := range b {
					b[i] = byte('a' + i%26)
					if k := la - lb + i; k >= 0 {
						tail[i] = a[k]
					} else {
						tail[i] = '#'
					}
				}
				if at >= 0 {
					b[at], tail[at] = '!', '!'
				}
				require.Equal(t, byByte(a, b, false), commonPrefix(a, b), "prefix %q %q", a, b)
				require.Equal(t, byByte(a, tail, true), commonSuffix(a, tail), "suffix %q %q", a, tail)
			}
		}
	}
}

// TestChangedScalarsToLeavesNoPathOnFalse checks that a Changes that
// held paths holds none after a call that reports false, even one that
// found a change before it declined.
func TestChangedScalarsToLeavesNoPathOnFalse(t *testing.T) {
	var c Changes
	require.True(t, ChangedScalarsTo(&c, []byte(`{"a":1}`), []byte(`{"a":2}`), "r", 4, true))
	require.Equal(t, 1, c.Len())
	for _, valid := range []bool{false, true} {
		require.False(t, ChangedScalarsTo(&c, []byte(`{"a":1,"b":[1]}`), []byte(`{"a":2,"b":[2]}`), "r", 4, valid))
		require.Zero(t, c.Len(), "valid %v", valid)
	}
	require.True(t, ChangedScalarsTo(&c, []byte(`{"a":1,"b":2}`), []byte(`{"a":1,"b":3}`), "r", 4, true))
	require.Equal(t, [][]string{{"r", "b"}}, [][]string{c.Path(0)})
	require.Equal(t, 1, c.Len())
}
