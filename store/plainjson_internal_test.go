package store

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type marshalsItself struct{ N int }

func (m marshalsItself) MarshalJSON() ([]byte, error) { return []byte(`"n"`), nil }

type textItself int

func (textItself) MarshalText() ([]byte, error) { return []byte("t"), nil }

// Only a type whose encoding/json form round-trips is stored as it
// encodes: no pointer, map, slice or interface at any depth (plainCopy),
// and no encoding of its own, time.Time excepted.
func TestPlainJSON(t *testing.T) {
	for _, c := range []struct {
		v    any
		want bool
	}{
		{struct{ A int64 }{}, true},
		{struct {
			At time.Time
			B  [2]struct{ S string }
		}{}, true},
		{struct{ M marshalsItself }{}, false},
		{struct{ T [1]textItself }{}, false},
		{struct{ S []int }{}, false},
		{struct{ P *int }{}, false},
		{struct{ M map[string]string }{}, false},
	} {
		require.Equal(t, c.want, plainJSON(reflect.TypeOf(c.v)), "%T", c.v)
	}
}
