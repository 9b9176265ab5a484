package ownership

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/jsonscan"
)

var numberSchema = mustSchema(map[string]Strategy{
	".tags":  AsSet(),
	".items": Keyed("k"),
})

// numberCases are the integers a float64 would lose or respell: each with
// its JSON text, a value equal to it in another form (an apply of it
// changes nothing), and a value next to it, mostly one a float64 cannot
// tell from it (an apply of it changes the object). A float64 is the
// integer its JSON text is.
var numberCases = []struct {
	name       string
	v          any
	text       string
	same, next any
}{
	{"uint64 2^63+1", uint64(1<<63 + 1), "9223372036854775809", json.Number("9223372036854775809"), uint64(1<<63 + 2)},
	{"uint64 max", uint64(math.MaxUint64), "18446744073709551615", json.Number("18446744073709551615"), uint64(math.MaxUint64 - 1)},
	{"uint 2^63", uint(1 << 63), "9223372036854775808", json.Number("9223372036854775808"), float64(1 << 63)},
	{"int64 max", int64(math.MaxInt64), "9223372036854775807", uint64(math.MaxInt64), uint64(1 << 63)},
	{"int64 min", int64(math.MinInt64), "-9223372036854775808", json.Number("-9223372036854775808"), int64(math.MinInt64 + 1)},
	{"json 2^64", json.Number("18446744073709551616"), "18446744073709551616", float64(1 << 64), uint64(math.MaxUint64)},
	{"json big", json.Number("123456789012345678901234567890"), "123456789012345678901234567890", json.Number("1.2345678901234568e29"), json.Number("123456789012345690000000000000")},
	{"json 1e3", json.Number("1e3"), "1e3", int64(1000), int64(1001)},
	{"json 1.0", json.Number("1.0"), "1.0", int64(1), json.Number("1.5")},
	{"json -0", json.Number("-0"), "-0", int64(0), int64(1)},
	{"float -0", math.Copysign(0, -1), "-0", json.Number("0"), float64(1)},
	{"float 2^63+2048", float64(1<<63 + 2048), "9223372036854778000", json.Number("9223372036854778000"), uint64(1<<63 + 2048)},
	{"float 2^60+256", float64(1<<60 + 256), "1152921504606847200", int64(1152921504606847200), int64(1<<60 + 256)},
	{"float 1e21", float64(1e21), "1e+21", json.Number("1e21"), float64(1e21 + 1<<17)},
}

// Every integer keeps its value and its text through an Apply, an Update,
// a later apply that leaves it alone (from the stored JSON, as the store
// decodes it), a set, a keyed list and the codecs; a value equal to it in
// another form changes nothing, and the value next to it changes it.
func TestNumbersKeepValueAndText(t *testing.T) {
	opt := WithSchema(numberSchema)
	for _, c := range numberCases {
		t.Run(c.name, func(t *testing.T) {
			field := `"v":` + c.text
			r := applyOK(t, nil, map[string]any{"v": c.v, "s": "x"}, "a", nil, opt)
			require.Contains(t, mustJSON(r.Object), field, "Apply")
			again := applyOK(t, r.Object, map[string]any{"v": c.same, "s": "x"}, "a", r.Managed, opt)
			require.False(t, again.Changed, "applying %#v over %#v", c.same, c.v)
			moved := applyOK(t, r.Object, map[string]any{"v": c.next, "s": "x"}, "a", r.Managed, opt)
			require.True(t, moved.ObjectChanged, "applying %#v over %#v", c.next, c.v)
			require.NotContains(t, mustJSON(moved.Object), field)

			u, err := Update(nil, map[string]any{"v": c.v}, "u", nil, opt)
			require.NoError(t, err)
			require.Contains(t, mustJSON(u.Object), field, "Update")

			// The stored object, decoded as the store decodes it, and
			// another manager's apply that leaves v alone.
			stored, err := jsonscan.Decode([]byte(mustJSON(r.Object)))
			require.NoError(t, err)
			other := applyOK(t, stored.(map[string]any), map[string]any{"o": int64(1)}, "b", r.Managed, opt)
			require.Contains(t, mustJSON(other.Object), field, "an apply that leaves it alone")
			tree, err := ToTree(struct {
				V json.RawMessage `json:"v"`
			}{json.RawMessage(c.text)})
			require.NoError(t, err)
			require.Equal(t, `{"v":`+c.text+`}`, mustJSON(tree), "ToTree")
			require.True(t, scalarEqual(tree["v"], c.v), "ToTree's value %#v", tree["v"])

			// A set holding it and its neighbour, and a keyed list keyed by
			// them: two items, named apart, through every codec.
			cfg := map[string]any{
				"tags":  []any{c.v, c.next},
				"items": []any{map[string]any{"k": c.v, "x": "1"}, map[string]any{"k": c.next, "x": "2"}},
			}
			r, err = Apply(nil, cfg, "a", nil, opt)
			require.NoError(t, err)
			doc := mustJSON(r.Object)
			require.Contains(t, doc, `"tags":[`+c.text+`,`)
			set := r.Managed[0].Set
			require.Len(t, set.Paths(), 8, "%s", set.Encode())
			plain, err := DecodeSet(set.Encode())
			require.NoError(t, err)
			require.True(t, plain.Equal(set), "%s", set.Encode())
			for _, p := range set.Paths() {
				require.True(t, set.Has(p), "Paths gives %s, which Has does not find in %s", p, set.Encode())
			}
			codec := NewCodec(r.Object, numberSchema)
			fromJSON, err := NewCodecJSON([]byte(doc), numberSchema)
			require.NoError(t, err)
			requireSameCodec(t, codec, fromJSON, doc)
			back, err := fromJSON.Decode(codec.Encode(set))
			require.NoError(t, err)
			require.True(t, back.Equal(set))
			again, err = Apply(r.Object, map[string]any{
				"tags":  []any{c.same, c.next},
				"items": []any{map[string]any{"k": c.same, "x": "1"}, map[string]any{"k": c.next, "x": "2"}},
			}, "a", r.Managed, opt)
			require.NoError(t, err)
			require.False(t, again.Changed, "the same items in another form")
			require.True(t, strings.HasPrefix(mustJSON(again.Object["tags"]), "["+c.text+","))
		})
	}
}
