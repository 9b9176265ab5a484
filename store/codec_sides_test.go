package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/jsonscan"
	"github.com/steady-go/steady/internal/race"
	"github.com/steady-go/steady/store/kv"
)

type (
	sideName  string
	sideNum   int16
	sideKey   string
	sideTextK string
	sideP     *sideP
	sideS     []sideS
	sideM     map[string]sideM
	sideNode  struct {
		Name string     `json:"name"`
		Kids []sideNode `json:"kids,omitempty"`
		Next *sideNode  `json:"next"`
	}
)

func (k *sideTextK) UnmarshalText(b []byte) error { *k = sideTextK("t:" + string(b)); return nil }

// sideFieldTypes are the types the random Spec types are made of: those a
// sideDecoder handles and some it declines (an interface, an array, bytes,
// a type with its own decoding, a map keyed by a TextUnmarshaler).
var sideFieldTypes = []reflect.Type{
	reflect.TypeFor[bool](), reflect.TypeFor[string](), reflect.TypeFor[int](), reflect.TypeFor[int8](),
	reflect.TypeFor[int64](), reflect.TypeFor[uint8](), reflect.TypeFor[uint32](), reflect.TypeFor[uint64](),
	reflect.TypeFor[float32](), reflect.TypeFor[float64](), reflect.TypeFor[*int](), reflect.TypeFor[*string](),
	reflect.TypeFor[[]string](), reflect.TypeFor[[]int](), reflect.TypeFor[[]*string](), reflect.TypeFor[[][]int16](),
	reflect.TypeFor[map[string]string](), reflect.TypeFor[map[string]int](), reflect.TypeFor[map[sideKey]sideName](),
	reflect.TypeFor[map[string][]string](), reflect.TypeFor[time.Time](), reflect.TypeFor[*time.Time](),
	reflect.TypeFor[sideName](), reflect.TypeFor[sideNum](), reflect.TypeFor[sideNode](), reflect.TypeFor[[]sideNode](),
	reflect.TypeFor[any](), reflect.TypeFor[[2]int](), reflect.TypeFor[[]byte](), reflect.TypeFor[customSpec](),
	reflect.TypeFor[map[sideTextK]int](), reflect.TypeFor[json.RawMessage](),
}

// sideTagNames are the json names of the random types' fields: some alike
// but for case, some encoding/json does not take as they are.
var sideTagNames = []string{"", "a", "A", "b", "B", "replicas", "image", "x.y", "-", "with space", "é"}

// randomSideType returns a struct type of random fields, sometimes nested.
func randomSideType(rng *rand.Rand, depth int) reflect.Type {
	var fields []reflect.StructField
	for i := range rng.IntN(6) {
		t := sideFieldTypes[rng.IntN(len(sideFieldTypes))]
		if depth < 2 && rng.IntN(6) == 0 {
			t = randomSideType(rng, depth+1)
			switch rng.IntN(3) {
			case 1:
				t = reflect.PointerTo(t)
			case 2:
				t = reflect.SliceOf(t)
			}
		}
		tag := sideTagNames[rng.IntN(len(sideTagNames))]
		switch rng.IntN(8) {
		case 0:
			tag += ",omitempty"
		case 1:
			tag += ",string"
		case 2:
			tag = "-"
		}
		sf := reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: t, Tag: reflect.StructTag(fmt.Sprintf(`json:%q`, tag))}
		if rng.IntN(5) == 0 {
			sf.Tag = "" // the field's name
		}
		fields = append(fields, sf)
	}
	return reflect.StructOf(fields)
}

var sideStrings = []string{"", "web", "registry.example.com/platform/web:v1", "a<b>&c", "é", "tab\there", `q"uote`, "\u2028", "--listen=:8080"}

// fillRandom sets v, a settable value, to a random value of its type.
func fillRandom(rng *rand.Rand, v reflect.Value, depth int) {
	if depth > 4 {
		return
	}
	switch v.Type() {
	case timeType:
		v.Set(reflect.ValueOf(time.Unix(rng.Int64N(1<<33), rng.Int64N(1e9)).In(time.FixedZone("", 3600*(rng.IntN(5)-2)))))
		return
	case reflect.TypeFor[json.RawMessage]():
		v.SetBytes([]byte(`{"raw":[1,2]}`))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.String:
		v.SetString(sideStrings[rng.IntN(len(sideStrings))])
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := rng.Int64() >> rng.IntN(64)
		if rng.IntN(2) == 0 {
			n = -n
		}
		if !v.OverflowInt(n) {
			v.SetInt(n)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n := rng.Uint64() >> rng.IntN(65); !v.OverflowUint(n) {
			v.SetUint(n)
		}
	case reflect.Float32, reflect.Float64:
		f := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
		if !v.OverflowFloat(f) {
			v.SetFloat(f)
		}
	case reflect.Pointer:
		if rng.IntN(3) > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fillRandom(rng, v.Elem(), depth+1)
		}
	case reflect.Slice:
		if rng.IntN(4) == 0 {
			return // nil
		}
		n := rng.IntN(4)
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fillRandom(rng, v.Index(i), depth+1)
		}
	case reflect.Array:
		for i := range v.Len() {
			fillRandom(rng, v.Index(i), depth+1)
		}
	case reflect.Map:
		if rng.IntN(4) == 0 {
			return
		}
		v.Set(reflect.MakeMap(v.Type()))
		for range rng.IntN(4) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fillRandom(rng, k, depth+1)
			fillRandom(rng, e, depth+1)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillRandom(rng, v.Field(i), depth+1)
			}
		}
	case reflect.Interface:
		if rng.IntN(2) == 0 {
			v.Set(reflect.ValueOf(map[string]any{"n": 1.5, "s": "x"}))
		}
	}
}

var (
	sideScalar = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null`)
	// sideSnippets replace a scalar token, or open a member that repeats
	// a key or brings an unknown one.
	sideSnippets = []string{`null`, `1e2`, `-0`, `1.5`, `300`, `-1`, `99999999999999999999`, `1e400`, `"x"`,
		`"a\u0026b"`, `"\u00e9\ud800"`, `"2024-01-02T03:04:05Z"`, `"2024-13-02T03:04:05Z"`, `true`, `[]`, `{}`,
		`[null]`, `{"a":null}`, `["x",null]`, `{"k":"v","k":"w"}`, `"A"`, `"a"`, `"replicas"`, `"Replicas"`, `"F0"`, `"f0"`}
)

// mutate returns text with one random change: a scalar token replaced by a
// snippet, or a member inserted after a random '{'.
func mutate(rng *rand.Rand, text []byte) []byte {
	snippet := sideSnippets[rng.IntN(len(sideSnippets))]
	if rng.IntN(3) == 0 {
		var opens []int
		for i, c := range text {
			if c == '{' {
				opens = append(opens, i)
			}
		}
		if len(opens) > 0 {
			i := opens[rng.IntN(len(opens))] + 1
			key := []string{"a", "A", "b", "replicas", "F0", "F1", "zzz", "k"}[rng.IntN(8)]
			member := fmt.Sprintf("%q:%s", key, snippet)
			if text[i] != '}' {
				member += ","
			}
			return append(append(append([]byte(nil), text[:i]...), member...), text[i:]...)
		}
	}
	locs := sideScalar.FindAllIndex(text, -1)
	if len(locs) == 0 {
		return text
	}
	l := locs[rng.IntN(len(locs))]
	return append(append(append([]byte(nil), text[:l[0]]...), snippet...), text[l[1]:]...)
}

// fastSide decodes text into p with plan alone.
func fastSide(plan sideDecoder, text []byte, p reflect.Value) bool {
	d := &metaDecoder{scratch: new(decodeScratch)}
	d.r = jsonscan.NewReader(text)
	return plan(d, p.UnsafePointer(), 0) && d.r.End()
}

// A sideDecoder decodes exactly what encoding/json decodes without error,
// and to the same value; anything else it declines. Random struct types
// (with fields of the types it handles and of some it declines, tags alike
// but for case, options), random values of them encoded by encoding/json,
// and those texts changed by one token or member (nulls, numbers out of
// range or with a fraction, escapes, keys in another case, repeated and
// unknown keys).
func TestSideDecoderAgreesWithEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 1))
	var compiled, typesSeen, plain, plainFast, mutated, mutatedFast int
	for range race.Sweep(600, 4) {
		typ := randomSideType(rng, 0)
		if rng.IntN(4) == 0 {
			typ = sideFieldTypes[rng.IntN(len(sideFieldTypes))]
		}
		typesSeen++
		plan := sidePlanOf(typ)
		if plan == nil {
			continue
		}
		compiled++
		for range 8 {
			v := reflect.New(typ)
			fillRandom(rng, v.Elem(), 0)
			text, err := json.Marshal(v.Interface())
			require.NoError(t, err)
			for m := range 6 {
				if m > 0 {
					text = mutate(rng, text)
				}
				want := reflect.New(typ)
				wantErr := json.Unmarshal(text, want.Interface())
				got := reflect.New(typ)
				ok := fastSide(plan, text, got)
				if m == 0 {
					plain++
				} else {
					mutated++
				}
				if !ok {
					continue
				}
				if m == 0 {
					plainFast++
				} else {
					mutatedFast++
				}
				require.NoError(t, wantErr, "%v: the fast way read what encoding/json refuses: %s", typ, text)
				require.Equal(t, want.Interface(), got.Interface(), "%v: %s", typ, text)
			}
		}
	}
	t.Logf("%d of %d types compiled; %d of %d encoded and %d of %d changed values read the fast way",
		compiled, typesSeen, plainFast, plain, mutatedFast, mutated)
	require.Greater(t, compiled, typesSeen/4)
	require.Greater(t, plainFast, plain*9/10, "what encoding/json writes is read the fast way")
	require.Greater(t, mutatedFast, mutated/8)
}

// Types that contain themselves without a struct compile, and their
// values decode as with encoding/json; a pointer to itself, which reads
// no byte per level, is declined past the depth bound rather than
// followed for ever.
func TestSideDecoderOfTypesThatContainThemselves(t *testing.T) {
	for _, c := range []struct {
		typ  reflect.Type
		text string
	}{
		{reflect.TypeFor[sideS](), `[[],[[]],null]`},
		{reflect.TypeFor[sideM](), `{"a":{},"b":{"c":null}}`},
		{reflect.TypeFor[sideP](), `null`},
	} {
		plan := sidePlanOf(c.typ)
		require.NotNil(t, plan, "%v", c.typ)
		want, got := reflect.New(c.typ), reflect.New(c.typ)
		require.NoError(t, json.Unmarshal([]byte(c.text), want.Interface()))
		require.True(t, fastSide(plan, []byte(c.text), got), c.text)
		require.Equal(t, want.Interface(), got.Interface(), c.text)
	}
	require.False(t, fastSide(sidePlanOf(reflect.TypeFor[sideP]()), []byte(`1`), reflect.New(reflect.TypeFor[sideP]())))
}

func TestSidePlanOfDeclines(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[any](), reflect.TypeFor[[2]int](), reflect.TypeFor[[]byte](), reflect.TypeFor[customSpec](),
		reflect.TypeFor[map[sideTextK]int](), reflect.TypeFor[map[int]string](), reflect.TypeFor[json.RawMessage](),
		reflect.TypeFor[struct{ sideNode }](),
		reflect.TypeFor[struct {
			N int `json:"n,string"`
		}](),
		reflect.StructOf([]reflect.StructField{ // two fields called "a"
			{Name: "A", Type: reflect.TypeFor[int](), Tag: `json:"a"`},
			{Name: "B", Type: reflect.TypeFor[int](), Tag: `json:"a"`},
		}),
	} {
		require.Nil(t, sidePlanOf(typ), "%v", typ)
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[sideNode](), reflect.TypeFor[fastSpec](), reflect.TypeFor[plainSpec]()} {
		if typ == reflect.TypeFor[plainSpec]() {
			continue // an array: declined
		}
		require.NotNil(t, sidePlanOf(typ), "%v", typ)
	}
}

// A typed read of the event path's value (bench/eventpath_test.go: a spec
// with a slice and a map, three managed entries, a condition) decodes its
// Spec and Status without encoding/json, which allocated seven times more.
func TestTypedDecodeOfTheEventPathsValue(t *testing.T) {
	type spec struct {
		Replicas int64             `json:"replicas"`
		Image    string            `json:"image"`
		Args     []string          `json:"args"`
		Selector map[string]string `json:"selector"`
	}
	type status struct {
		ReadyReplicas int64 `json:"readyReplicas"`
	}
	st, err := New[spec, status](newMapBackend(), "App")
	require.NoError(t, err)
	value := `{"metadata":{"kind":"App","name":"app-0","uid":"0f0fd3b4-1384-4602-9c2f-9901f8012bba","managed":[` +
		`{"manager":"user","operation":"Update","fields":"~OVitRw_g"},` +
		`{"manager":"app-controller-loop","operation":"Apply","subresource":"status","fields":"~uSOuHQ-AE"},` +
		`{"manager":"app-controller","operation":"Apply","subresource":"status","fields":"~uSOuHQAAI"}],` +
		`"lastWrite":{"manager":"app-controller","op":"ApplyStatus"},"generation":8,"statusGeneration":9},` +
		`"spec":{"replicas":6001,"image":"registry.example.com/platform/web-frontend:v1.27.3",` +
		`"args":["--listen=:8080","--log-level=info","--config=/etc/web/config.yaml"],"selector":{"app":"web","shard":"0"}},` +
		`"status":{"readyReplicas":6001},"conditions":[{"type":"Reconciling","status":"False","reason":"Reconciled",` +
		`"message":"bench: generation 1 reconciled","lastTransitionTime":"2026-12-02T08:29:05.720223692Z"}]}`
	in := kv.KeyValue{Key: "App/app-0", Value: []byte(value), ModRevision: 7}
	got, err := st.decode(in)
	require.NoError(t, err)
	var std Object[spec, status]
	require.NoError(t, json.Unmarshal(in.Value, &std))
	std.Meta.Revision = 7
	require.Equal(t, &std, got)
	scratch := new(decodeScratch)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := st.decodeShared(in, scratch); err != nil {
			t.Fatal(err)
		}
	})
	require.LessOrEqual(t, allocs, 11.0)
}

// structAsWritten reads a struct's text as encoding/json writes it (the
// store's own spelling), one comparison per key, to what encoding/json
// decodes: random struct types and values.
func TestStructAsWrittenReadsEncodingJSONsText(t *testing.T) {
	rng := rand.New(rand.NewPCG(58, 1))
	var tried, read int
	for range race.Sweep(400, 4) {
		typ := randomSideType(rng, 0)
		c := sideCompiler{late: map[reflect.Type]*sideDecoder{}}
		fields, ok := c.structFields(typ)
		if !ok {
			continue
		}
		for range 4 {
			v := reflect.New(typ)
			fillRandom(rng, v.Elem(), 0)
			text, err := json.Marshal(v.Interface())
			require.NoError(t, err)
			want, got := reflect.New(typ), reflect.New(typ)
			require.NoError(t, json.Unmarshal(text, want.Interface()))
			d := &metaDecoder{scratch: new(decodeScratch)}
			d.r = jsonscan.NewReader(text)
			tried++
			if !structAsWritten(d, fields, got.UnsafePointer(), nil, 0) || !d.r.End() {
				continue // a value its field's decoder declines
			}
			read++
			require.Equal(t, want.Interface(), got.Interface(), "%v: %s", typ, text)
		}
	}
	t.Logf("%d of %d texts read as written", read, tried)
	require.Greater(t, read, tried*9/10, "what encoding/json writes is read as written")
}

// A struct's text in another spelling than encoding/json's (keys in
// another order, from the first or after some read as written, at any
// depth; white space) is read member by member, to what encoding/json
// decodes; and the struct decoder declines what the member loop declines,
// after a part read as written too.
func TestStructDecoderReadsOtherSpellingsMemberByMember(t *testing.T) {
	type inner struct {
		A int    `json:"a"`
		B string `json:"b,omitempty"`
	}
	type spec struct {
		Replicas int64             `json:"replicas"`
		Image    string            `json:"image"`
		Args     []string          `json:"args"`
		In       inner             `json:"in"`
		Selector map[string]string `json:"selector"`
	}
	plan := sidePlanOf(reflect.TypeFor[spec]())
	require.NotNil(t, plan)
	for _, text := range []string{
		`{"replicas":3,"image":"x","args":["a"],"in":{"a":1,"b":"y"},"selector":{"k":"v"}}`,
		`{}`, `{"image":"x"}`, `{"in":{}}`, `{"args":[],"selector":{}}`,
		`{"image":"x","replicas":3}`,
		`{"replicas":3,"image":"x","selector":{"k":"v"},"args":["a","b"]}`,
		`{"replicas":3,"in":{"b":"y","a":1},"image":"x"}`,
		`{"replicas":3,"in":{"a":1,"b":"y"},"image":"x"}`,
		`{ "replicas": 3, "image":"x" }`, `{"replicas":3 ,"image":"x"}`, ` {"replicas":3}`, `{"in":{ "a":1}}`,
		`{"replicas":3,"args":null,"image":"x"}`,
	} {
		want, got := new(spec), new(spec)
		require.NoError(t, json.Unmarshal([]byte(text), want), text)
		require.True(t, fastSide(plan, []byte(text), reflect.ValueOf(got)), text)
		require.Equal(t, want, got, text)
	}
	for _, text := range []string{
		`{"replicas":3,"image":"x","image":"y"}`,
		`{"image":"x","replicas":3,"image":"y"}`,
		`{"replicas":3,"Image":"x"}`,
		`{"replicas":3,"zzz":1}`,
		`{"replicas":3,"in":{"a":1,"zzz":2}}`,
		`{"replicas":1.5,"image":"x"}`,
		`{"replicas":3,"in":{"a":1.5},"image":"x"}`,
		`{"replicas":3,}`, `{"replicas":3`, `{"replicas":3,"image":"x"`,
		// inner's members end where the outer's would: the closing
		// brace is the inner's, the text one short.
		`{"in":{"a":1,"image":"x"}`,
	} {
		require.False(t, fastSide(plan, []byte(text), reflect.ValueOf(new(spec))), text)
	}
}

// A list of strings spelled as encoding/json writes one of plain strings
// is read as written (stringsAsWritten); any other text element by
// element, to what encoding/json decodes, or declined where it refuses or
// another type's value stands for an element.
func TestStringListReadAsWrittenOrElementByElement(t *testing.T) {
	rng := rand.New(rand.NewPCG(58, 2))
	plain := []string{"", "a", "web", "--listen=:8080", "x<y>&z", "registry.example.com/platform/web-frontend:v1.27.3"}
	for range 200 {
		l := make([]string, rng.IntN(12))
		for i := range l {
			l[i] = plain[rng.IntN(len(plain))]
		}
		text, err := json.Marshal(l)
		require.NoError(t, err)
		text = bytes.ReplaceAll(bytes.ReplaceAll(bytes.ReplaceAll(text, []byte(`\u003c`), []byte(`<`)), []byte(`\u003e`), []byte(`>`)), []byte(`\u0026`), []byte(`&`))
		d := &metaDecoder{scratch: new(decodeScratch)}
		d.r = jsonscan.NewReader(text)
		got, ok := stringsAsWritten(d)
		require.True(t, ok && d.r.End(), "%s", text)
		require.Equal(t, l, got, "%s", text)
	}
	plan := sidePlanOf(stringsType)
	for _, text := range []string{
		`[]`, `null`, `["a"]`, `["a","b","c","d","e","f","g","h","i","j"]`,
		`[ "a"]`, `["a" ,"b"]`, `["a", "b"]`, `[ ]`, `["a\u0026b","c"]`, `["tab\there"]`, `["é"]`,
	} {
		var want, got []string
		require.NoError(t, json.Unmarshal([]byte(text), &want), text)
		require.True(t, fastSide(plan, []byte(text), reflect.ValueOf(&got)), text)
		require.Equal(t, want, got, text)
	}
	for _, text := range []string{`["a",null]`, `["a",1]`, `["a",]`, `["a"`, `["a""b"]`, `["a"],`, `{"a":"b"}`} {
		var got []string
		require.False(t, fastSide(plan, []byte(text), reflect.ValueOf(&got)), text)
	}
	if race.Enabled {
		return // allocations counted without the race detector
	}
	// Strings seen lately are the scratch space's: read again, they cost
	// no allocation; the list does.
	sc := new(decodeScratch)
	d := &metaDecoder{scratch: sc}
	text := []byte(`["--listen=:8080","--log-level=info","--config=/etc/web/config.yaml"]`)
	allocs := testing.AllocsPerRun(50, func() {
		d.r = jsonscan.NewReader(text)
		if _, ok := stringsAsWritten(d); !ok {
			t.Fatal("not read")
		}
	})
	require.Equal(t, 1.0, allocs)
}
