package nilness

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestIsNil(t *testing.T) {
	type s struct{}
	var p *s
	var m map[string]int
	var f func()
	for name, tc := range map[string]struct {
		v    any
		want bool
	}{
		"nil":           {nil, true},
		"typed nil ptr": {p, true},
		"nil map":       {m, true},
		"nil func":      {f, true},
		"pointer":       {&s{}, false},
		"struct":        {s{}, false},
		"zero int":      {0, false},
		"non-nil map":   {map[string]int{}, false},
	} {
		if got := IsNil(tc.v); got != tc.want {
			t.Errorf("%s: IsNil = %v, want %v", name, got, tc.want)
		}
	}
}
