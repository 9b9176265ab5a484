package store

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

var rawSeeds = []string{
	// Values written before Meta's key was renamed.
	`{"meta":{"kind":"K","name":"a","generation":2},"spec":{"r":1},"status":null}`,
	`{"meta":{"name":"a"},"metadata":{"uid":"u"}}`,
	`{"Meta":{"name":"a"}}`,
	`{"metadata":{"kind":"K","name":"a","generation":2,"labels":{"x":"y"},"managed":[{"manager":"m","operation":"Update","fields":"~abc"}]},"spec":{"a":[1,2.5e3,-0,true,false,null,"s\"\\\/\b\f\n\r\t\u00e9"]},"status":null,"conditions":[{"type":"Ready","status":"True"}]}`,
	` { "metadata" : {} , "spec" : [ ] , "status" : { } } `,
	`{"spec":1,"metadata":{"name":"b"}}`,
	`{}`,
	`{"metadata":{"name":"a"},"metadata":{"name":"b"}}`,
	`{"Metadata":{"name":"a"}}`,
	`{"me\u0074adata":{"name":"a"}}`,
	`{"metadata":{"name":"a"},"extra":1}`,
	`{"metadata":{"generation":"x"}}`,
	`{"metadata":{},"conditions":[{"type":1}]}`,
	`{"spec":01}`, `{"spec":1.}`, `{"spec":-}`, `{"spec":1e}`, `{"spec":1e400}`,
	`{"spec":"\x"}`, `{"spec":"\u12"}`, "{\"spec\":\"a\x01\"}", "{\"spec\":\"\xff\"}",
	`{"spec":[1,]}`, `{"spec":{"a":1,}}`, `{"spec":{"a" 1}}`, `{"spec":tru}`, `{"spec":1}x`,
	`{"spec":1,}`, `[1]`, `null`, ``, `{`,
}

// decodeRawFast gives what encoding/json gives for rawObject, or defers to
// it.
func FuzzDecodeRawFast(f *testing.F) {
	for _, s := range rawSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		var fast rawObject
		if !decodeRawFast(value, &fast, &metaDecoder{}) {
			return
		}
		var want rawObject
		require.NoError(t, decodeRawJSON(value, &want), "accepted what encoding/json rejects: %q", value)
		require.Equal(t, want, fast)
	})
}

// The values the store writes take the fast way.
func TestDecodeRawFastTakesStoredValues(t *testing.T) {
	raw := rawObject{Meta: Meta{Kind: "K", Name: "a", Labels: map[string]string{"x": "y"}}, Spec: json.RawMessage(`{"r":1}`),
		Status: json.RawMessage(`null`), Conditions: []Condition{{Type: "Ready", Status: ConditionTrue}}}
	val, err := raw.encode()
	require.NoError(t, err)
	var got rawObject
	require.True(t, decodeRawFast(val, &got, &metaDecoder{}))
	require.Equal(t, `{"metadata":{"kind":"K","name":"a","uid":"","labels":{"x":"y"}`, string(got.head.text()), "the head of the value")
	got.head = storedHead{}
	require.Equal(t, raw, got)
	require.False(t, decodeRawFast([]byte(`{"metadata":{},"metadata":{}}`), &rawObject{}, &metaDecoder{}), "a repeated key goes to encoding/json")
	require.False(t, decodeRawFast([]byte(`{"meta":{},"metadata":{}}`), &rawObject{}, &metaDecoder{}), "Meta under both keys goes to encoding/json")
}
