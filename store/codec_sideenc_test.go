package store

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type encName string

type encInner struct {
	N int               `json:"n,omitempty"`
	S string            `json:"s"`
	P *encInner         `json:"p,omitempty"`
	L []encInner        `json:"l"`
	M map[string]string `json:",omitempty"`
}

type encSpec struct {
	Replicas int64                `json:"replicas"`
	Image    string               `json:"image,omitempty"`
	Args     []string             `json:"args"`
	Selector map[string]string    `json:"selector,omitempty"`
	On       bool                 `json:"on,omitempty"`
	Off      bool                 `json:"off"`
	U        uint16               //nolint:tagliatelle // a field without a tag
	I8       int8                 `json:"i8,omitempty"`
	Ptr      *int                 `json:"ptr"`
	In       encInner             `json:"in"`
	Ins      []*encInner          `json:"ins,omitempty"`
	ByName   map[string]*encInner `json:"byName"`
	Named    encName              `json:"named"`
	Names    []encName            `json:"names,omitempty"`
	Keys     map[encName]uint     `json:"keys"`
	Skip     int                  `json:"-"`
	Dash     int                  `json:"-,"`
	hidden   int
}

// encStrings are strings encoding/json writes as they are, and ones it
// escapes or replaces.
var encStrings = []string{"", "a", "app", "--port=8080", "a b", "<", ">", "&", `"`, `\`, "\x00", "\x1f", "\x7f", "é", "\xff", "\u2028", "\u2029", "a<b>&c", "日本"}

func randString(r *rand.Rand) string {
	s := ""
	for range r.IntN(3) {
		s += encStrings[r.IntN(len(encStrings))]
	}
	return s
}

func randInner(r *rand.Rand, depth int) encInner {
	in := encInner{N: r.IntN(3) - 1, S: randString(r)}
	if depth < 3 && r.IntN(2) == 0 {
		p := randInner(r, depth+1)
		in.P = &p
	}
	switch r.IntN(3) {
	case 1:
		in.L = []encInner{}
	case 2:
		for range 1 + r.IntN(2) {
			if depth < 3 {
				in.L = append(in.L, randInner(r, depth+1))
			}
		}
	}
	if r.IntN(2) == 0 {
		in.M = map[string]string{}
		for range r.IntN(3) {
			in.M[randString(r)] = randString(r)
		}
	}
	return in
}

func randSpec(r *rand.Rand) encSpec {
	s := encSpec{
		Replicas: r.Int64N(1<<40) - 1<<39, Image: randString(r), On: r.IntN(2) == 0, Off: r.IntN(2) == 0,
		U: uint16(r.IntN(70000)), I8: int8(r.IntN(256) - 128), In: randInner(r, 0), Named: encName(randString(r)),
		Skip: r.Int(), Dash: r.Int(), hidden: r.Int(),
	}
	if r.IntN(3) > 0 {
		s.Args = []string{}
		for range r.IntN(4) {
			s.Args = append(s.Args, randString(r))
		}
	}
	for range r.IntN(3) {
		s.Names = append(s.Names, encName(randString(r)))
	}
	if r.IntN(3) > 0 {
		s.Selector = map[string]string{}
		for range r.IntN(4) {
			s.Selector[randString(r)] = randString(r)
		}
	}
	if r.IntN(2) == 0 {
		n := r.IntN(5) - 2
		s.Ptr = &n
	}
	for range r.IntN(3) {
		var p *encInner
		if r.IntN(3) > 0 {
			in := randInner(r, 1)
			p = &in
		}
		s.Ins = append(s.Ins, p)
	}
	if r.IntN(3) > 0 {
		s.ByName = map[string]*encInner{}
		for range r.IntN(3) {
			in := randInner(r, 2)
			s.ByName[randString(r)] = &in
		}
		s.ByName[randString(r)] = nil
	}
	if r.IntN(2) == 0 {
		s.Keys = map[encName]uint{}
		for range r.IntN(3) {
			s.Keys[encName(randString(r))] = uint(r.Uint32())
		}
	}
	return s
}

// TestSideEncoderAgreesWithEncodingJSON: what a sideEncoder writes is what
// json.Marshal writes, byte for byte (the stored bytes of a Spec, which
// writes compare), on values with every kind it handles, strings that
// encoding/json escapes or replaces, nil and empty slices and maps, and
// omitempty fields empty or not.
func TestSideEncoderAgreesWithEncodingJSON(t *testing.T) {
	require.NotNil(t, sideEncoderOf(reflect.TypeFor[encSpec]()))
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		v := randSpec(r)
		want, err := json.Marshal(v)
		require.NoError(t, err)
		got, ok := encodeSide(v)
		require.True(t, ok)
		require.Equal(t, string(want), string(got))
		ptr, ok := encodeSide(&v)
		require.True(t, ok)
		require.Equal(t, string(want), string(ptr))
	}
	// A pointer to a string is not a slice of strings: read through it
	// (a field of an addressable struct too), never as a []string.
	str, name := "<s>", encName("n")
	ptrs := encPointers{S: &str, N: &name, L: &[]string{"a"}}
	for _, v := range []any{encSpec{}, &encSpec{}, (*encSpec)(nil), encInner{}, "<a>", 0, true, []string(nil), []string{}, []string{"a", "<b>"}, []encName{"x"}, map[string]int{},
		&str, (*string)(nil), ptrs, &ptrs, encPointers{}, &encPointers{}, []*string{&str, nil}} {
		want, err := json.Marshal(v)
		require.NoError(t, err)
		got, ok := encodeSide(v)
		require.True(t, ok, "%T", v)
		require.Equal(t, string(want), string(got), "%T", v)
	}
}

type encPointers struct {
	S *string   `json:"s"`
	N *encName  `json:"n,omitempty"`
	L *[]string `json:"l"`
}

type encMarshaler struct{ A int }

func (encMarshaler) MarshalJSON() ([]byte, error) { return []byte(`"mine"`), nil }

type encCycle struct {
	Next *encCycle `json:"next"`
}

type (
	encMapCycle   map[string]encMapCycle
	encSliceCycle []encSliceCycle
)

// TestSideEncoderLeavesToEncodingJSON: a type with something a
// sideEncoder does not write the way encoding/json does has none, and
// encodeJSON gives encoding/json's result; a cycle, which encoding/json
// reports, is declined and reported.
func TestSideEncoderLeavesToEncodingJSON(t *testing.T) {
	for _, v := range []any{
		struct{ F float64 }{1.5},
		struct{ T time.Time }{},
		struct{ X any }{1},
		struct{ B []byte }{[]byte("x")},
		struct{ A [2]int }{},
		struct {
			N int `json:"n,string"`
		}{},
		struct {
			N int `json:"n,omitzero"`
		}{},
		struct{ encInner }{},
		struct {
			X int
			B int `json:"X"`
		}{},
		struct{ M map[int]string }{map[int]string{1: "a"}},
		encMarshaler{},
		struct{ E encMarshaler }{},
		struct{ N json.Number }{"1"}, // a number's text, not a string
		struct{ N *json.Number }{new(json.Number("2.5e3"))},
		struct{ L []json.Number }{[]json.Number{"1", "-2"}},
		struct{ M map[string]json.Number }{map[string]json.Number{"a": "3"}},
	} {
		require.Nil(t, sideEncoderOf(reflect.TypeOf(v)), "%T", v)
		want, err := json.Marshal(v)
		require.NoError(t, err)
		got, err := encodeJSON("spec", v)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "%T", v)
	}
	c := &encCycle{}
	c.Next = c
	m := encMapCycle{}
	m["m"] = m
	l := make(encSliceCycle, 1)
	l[0] = l
	for _, v := range []any{c, m, l} {
		_, ok := encodeSide(v)
		require.False(t, ok, "%T", v)
		_, err := encodeJSON("spec", v)
		require.ErrorIs(t, err, ErrInvalid, "%T", v)
	}
}

// plainJSONStringBytewise is plainJSONString a byte at a time.
func plainJSONStringBytewise(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// TestPlainJSONStringIsBytewise: the word-at-a-time plainJSONString agrees
// with a byte loop whatever byte value stands at whatever place in a word,
// alone or next to others, on random strings.
func TestPlainJSONStringIsBytewise(t *testing.T) {
	for c := range 256 {
		for n := 1; n <= 17; n++ {
			for at := range n {
				b := []byte(strings.Repeat("a", n))
				b[at] = byte(c)
				require.Equal(t, plainJSONStringBytewise(string(b)), plainJSONString(string(b)), "%q", b)
			}
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte{0x00, 0x1f, 0x20, 0x21, '"', 0x23, '&', 0x27, ';', '<', '=', '>', '?', 0x5b, '\\', 0x5d, 0x7e, 0x7f, 0x80, 0xa2, 0xff}
	for range 20000 {
		b := make([]byte, r.IntN(40))
		for j := range b {
			if r.IntN(6) == 0 {
				b[j] = alphabet[r.IntN(len(alphabet))]
			} else {
				b[j] = byte(0x20 + r.IntN(0x5f))
			}
		}
		require.Equal(t, plainJSONStringBytewise(string(b)), plainJSONString(string(b)), "%q", b)
	}
}

// requireEncodeJSONAt requires encodeJSONAt of &v to give what encodeJSON
// of v gives: the same bytes, or an error both.
func requireEncodeJSONAt[V any](t *testing.T, v V) {
	t.Helper()
	want, wantErr := encodeJSON("spec", v)
	got, err := encodeJSONAt("spec", &v)
	require.Equal(t, wantErr != nil, err != nil, "%T: %v, %v", v, wantErr, err)
	require.Equal(t, string(want), string(got), "%T", v)
}

// TestEncodeJSONAtIsEncodeJSON holds the Update's encoding of its Spec in
// place (encodeJSONAt) to encodeJSON, on random specs and on the values a
// sideEncoder leaves to encoding/json: types it has none for, a cycle it
// declines, a Spec type that is an interface, whose dynamic type decides.
func TestEncodeJSONAtIsEncodeJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 7))
	for range 3000 {
		requireEncodeJSONAt(t, randSpec(r))
	}
	cycle := &encCycle{}
	cycle.Next = cycle
	requireEncodeJSONAt(t, cycle)
	requireEncodeJSONAt(t, encCycle{Next: cycle})
	requireEncodeJSONAt(t, struct{ F float64 }{1.5})
	requireEncodeJSONAt(t, encMarshaler{A: 1})
	requireEncodeJSONAt(t, struct{ E encMarshaler }{})
	requireEncodeJSONAt(t, struct{ T time.Time }{})
	requireEncodeJSONAt(t, (*encSpec)(nil))
	requireEncodeJSONAt[any](t, randSpec(r))
	requireEncodeJSONAt[any](t, struct{ F float64 }{2.5})
	requireEncodeJSONAt[any](t, nil)
	requireEncodeJSONAt(t, "<a>")
}

// TestEncodeStringMapIsEncodingJSON: a map[string]string of any size, 0 to
// 40 entries (sorted by insertion up to maxInsertionSort, by
// slices.SortFunc beyond), keys that share prefixes or are prefixes of one
// another, is written as json.Marshal writes it, keys in its order.
func TestEncodeStringMapIsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(58, 2))
	keys := []string{"", "a", "ab", "b", "app", "app-1", "tier", "z", "A", "é", "<", "\x7f"}
	for n := range 41 {
		for range 20 {
			m := map[string]string{}
			for len(m) < n {
				k := keys[r.IntN(len(keys))]
				for range r.IntN(3) {
					k += keys[r.IntN(len(keys))]
				}
				m[k] = randString(r)
			}
			want, err := json.Marshal(m)
			require.NoError(t, err)
			got, ok := encodeStringMap(nil, reflect.ValueOf(m), 0)
			require.True(t, ok)
			require.Equal(t, string(want), string(got), "%d entries", n)
		}
	}
}
