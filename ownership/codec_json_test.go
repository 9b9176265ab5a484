package ownership

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/jsonscan"
)

// requireSameCodec fails unless a and b are the same Codec: the same nodes
// in the same order, so the same shape hash and the same bits per path.
func requireSameCodec(t testing.TB, want, got *Codec, doc string) {
	t.Helper()
	require.Equal(t, want.hash, got.hash, "shape hash of %s", doc)
	require.Equal(t, want.all.nodes, got.all.nodes, "nodes of %s", doc)
}

// NewCodecJSON reads the shape from the text and gives the Codec NewCodec
// gives for the decoded tree, down to the repeated key, the escaped key,
// the list items' identities and an atomic map, and fails where decoding
// fails.
func TestNewCodecJSONIsNewCodecOfTheDecodedTree(t *testing.T) {
	sch := mustSchema(map[string]Strategy{
		".spec.ports":          Keyed("name", "protocol"),
		".spec.tags":           AsSet(),
		".spec.selector":       Atomic(),
		".spec.items[*].m":     Atomic(),
		".spec.items":          Keyed("name"),
		".spec.items[*].tags":  AsSet(),
		".metadata.finalizers": AsSet(),
	})
	for _, tc := range []struct {
		doc     string
		onePass bool // read in one pass, not through the tree
	}{
		{`{}`, true},
		{` { "spec" : null } `, true},
		{`{"spec":{"image":"a","replicas":3,"command":["a","b"],"env":{"B":"1","A":"2"}}}`, true},
		{`{"spec":{"b":1,"a":{"x":1},"b":{"y":2,"z":[1,2]}}}`, false},
		{`{"spec":{"k\u00e9y":1,"plain":{"a\"b":2}}}`, false},
		{`{"spec":{"ports":[{"name":"http","protocol":"TCP","port":80},{"name":"http","protocol":"UDP"},{"name":"dns"},{"name":"http","protocol":"TCP"}]}}`, true},
		{`{"spec":{"tags":["b","a",3,1.5,true,null,"b"],"selector":{"x":{"y":1}}}}`, true},
		{`{"spec":{"tags":["b","a","b","\u0041"]}}`, true},
		{`{"metadata":{"finalizers":["y","x","y"]}}`, true},
		{`{"spec":{"items":[{"name":"p","m":{"q":1},"w":{"deep":[1]},"tags":["x"]},"notanobject",{"name":"q","tags":[1,1]}]}}`, true},
		{`{"metadata":{"labels":{"a":null,"b":null},"finalizers":["x","y"]},"spec":{"n":1e300,"f":-0.5e-400,"d":123456789012345678901234}}`, true},
		{`{"spec":"a string","status":[1,{"a":2}],"x":true}`, true},
		{`{"spec":{"args":["x\"1e999\"","\\",-1.5E+300],"s":"\\\"9e999"}}`, true},
	} {
		tree, err := jsonscan.DecodeShape([]byte(tc.doc))
		require.NoError(t, err, tc.doc)
		got, err := NewCodecJSON([]byte(tc.doc), sch)
		require.NoError(t, err, tc.doc)
		requireSameCodec(t, NewCodec(tree.(map[string]any), sch), got, tc.doc)
		_, onePass := codecOfJSON([]byte(tc.doc), sch)
		require.Equal(t, tc.onePass, onePass, tc.doc)
	}
	for _, doc := range []string{``, `null`, `[1]`, `"s"`, `{"a":1}x`, `{"a":1`, `{"a":1e999}`, `{"a":[1e999]}`, `{"a":{"b":-2e400}}`, `{"a":[{"b":1}],}`, `{"a":["\\",1e999]}`, `{"a":"\"","b":[-1e400]}`} {
		_, err := NewCodecJSON([]byte(doc), sch)
		require.Error(t, err, doc)
	}
}

// The JSON a struct encodes to gives the Codec of the struct's tree.
func TestNewCodecJSONOfAnEncodedStruct(t *testing.T) {
	type port struct {
		Name string `json:"name"`
		Port int    `json:"port"`
	}
	type spec struct {
		Image string            `json:"image"`
		Env   map[string]string `json:"env"`
		Ports []port            `json:"ports" steady:"keys=name"`
		Tags  []string          `json:"tags" steady:"set"`
	}
	sch, err := SchemaFor(spec{})
	require.NoError(t, err)
	v := spec{Image: "i", Env: map[string]string{"Z": "1", "A": "<&>"}, Ports: []port{{"b", 2}, {"a", 1}}, Tags: []string{"y", "x"}}
	doc, err := json.Marshal(v)
	require.NoError(t, err)
	tree, err := ToTree(v)
	require.NoError(t, err)
	got, err := NewCodecJSON(doc, sch)
	require.NoError(t, err)
	requireSameCodec(t, NewCodec(tree, sch), got, string(doc))
}

// TestNumbersInRangeReadsStringsAsText: text inside a string, escaped
// quotes included, is never judged as a number; a number after a string
// that ends in an escaped backslash is.
func TestNumbersInRangeReadsStringsAsText(t *testing.T) {
	for _, c := range []struct {
		json string
		want bool
	}{
		{`{"a":1e308}`, true},
		{`{"a":1e999}`, false},
		{`{"a":-1e999}`, false},
		{`{"a":"1e999"}`, true},
		{`{"a":"x\"1e999"}`, true},
		{`{"a":"x\\\"1e999"}`, true},
		{`{"a":"x\\","b":1e999}`, false},
		{`{"a":"x\\\\","b":1e999}`, false},
		{`{"a":12345678901234567890123}`, true},
		{`{"a":"unterminated`, true},
	} {
		require.Equal(t, c.want, numbersInRange([]byte(c.json)), c.json)
	}
}
