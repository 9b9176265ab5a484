package jsonscan

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The store's judge keys its codecs by AppendShapeKey into a buffer on its
// stack, once per side of every event it judges: the buffer must not
// escape (a shapeKey split into mutually recursive functions leaks it).
func TestAppendShapeKeyKeepsTheCallersBufferOnTheStack(t *testing.T) {
	b := []byte(`{"spec":{"replicas":3,"env":{"A":"1"}},"items":[{"name":"x"}]}`)
	allocs := testing.AllocsPerRun(100, func() {
		var arr [128]byte
		if _, ok := AppendShapeKey(arr[:0], b); !ok {
			panic("not a shape key")
		}
	})
	require.Zero(t, allocs)
}

// RawShape reads what Raw reads, and appends what AppendShapeKey appends
// for the value it read, or nothing when that has no key.
func TestRawShapeIsRawAndAppendShapeKey(t *testing.T) {
	texts := append(append([]string{`{"a\u0062":1}`, `{"a":1e999}`, `{"a":[1,{"b":"c"}]} tail`, ` 7 `}, memberSeeds...), elementSeeds...)
	for _, s := range texts {
		b := []byte(s)
		r1, r2 := NewReader(b), NewReader(b)
		raw, ok := r1.Raw()
		gotRaw, key, keyed, gotOK := r2.RawShape([]byte("pre"))
		require.Equal(t, ok, gotOK, "%s", s)
		require.Equal(t, string(raw), string(gotRaw), "%s", s)
		require.Equal(t, r1.p.i, r2.p.i, "%s: where the Reader stands", s)
		want, wantKeyed := AppendShapeKey([]byte("pre"), raw)
		if !ok {
			continue
		}
		require.Equal(t, wantKeyed, keyed, "%s", s)
		require.Equal(t, string(want), string(key), "%s", s)
	}
}

// A text AppendShapeKey gives a key to is one that Decode accepts (what
// ChangedScalarsOfValid's callers rely on), lists included.
func TestAppendShapeKeyOnlyOfDecodable(t *testing.T) {
	texts := append(append([]string{`[1e400]`, `{"a":[1,{"b":1e999}]}`, `{"a":[10000000000000000000000000000000000000000e400]}`, `{"a":1e400}`, `{"a":[1e300,-2.5e-3,"x"]}`}, memberSeeds...), elementSeeds...)
	rng := rand.New(rand.NewPCG(26, 44))
	for range 3000 {
		texts = append(texts, randomJSON(rng, 0))
	}
	keyed := 0
	for _, s := range texts {
		if _, ok := AppendShapeKey(nil, []byte(s)); ok {
			keyed++
			_, err := Decode([]byte(s))
			require.NoError(t, err, "%s has a shape key", s)
		}
	}
	require.Greater(t, keyed, 100)
	_, ok := AppendShapeKey(nil, []byte(`{"a":[1e400]}`))
	require.False(t, ok)
}

// compact, the one-loop reading of a value written as the store writes
// values, reads a value as shapeKey reads it (key) and as skip reads it
// (no key): whenever it answers, it gives shapeKey's key, or nothing, and
// stops where they stop, and it answers for every such value that they
// accept. The texts are random, written compactly (with plain keys and not
// too deep) or not, valid or cut short or with a byte changed. shapeKeyOf
// and Reader.Raw, which read again what compact declines, answer as
// shapeKey and skip do.
func TestCompactIsShapeKeyAndSkip(t *testing.T) {
	rng := rand.New(rand.NewPCG(46, 26))
	texts := append(append([]string{`{}`, `[]`, `{"a":{}}`, `{"a":[]}`, `{"a":[{}]}`, `""`, `"\u00e9"`, `-0`, `1e400`,
		`{"a":1e400}`, `{"a":[1e400]}`, `{"a":[{"b\u0062":1}]}`, `{"a":"x\ty"}`, `{"a":tru}`, `{"a":nul}`, `{"a":fals}`,
		`{"a":1,}`, `{"a":1]`, `[1}`, `{"a":01}`, `{"a":1.}`, `{"a":"\q"}`, `{"a" :1}`, `{"a":1} `, ` {"a":1}`, "{\"a\":\"\xff\"}"},
		memberSeeds...), elementSeeds...)
	deep := strings.Repeat(`{"a":`, maxCompactDepth) + "1" + strings.Repeat("}", maxCompactDepth)
	texts = append(texts, deep, `{"b":`+deep+`}`, strings.Repeat("[", maxCompactDepth+1)+strings.Repeat("]", maxCompactDepth+1))
	for range 20000 {
		s := randomStoredJSON(rng, 0)
		switch rng.IntN(8) {
		case 0:
			s = s[:rng.IntN(len(s)+1)]
		case 1:
			b := []byte(s)
			b[rng.IntN(len(b))] = `{}[]",:0-1e.tfnul \x`[rng.IntN(20)]
			s = string(b)
		case 2:
			s = randomJSON(rng, 0)
		}
		texts = append(texts, s)
	}
	var stored, answered [2]int
	for _, s := range texts {
		b := []byte(s)
		for k, key := range []bool{false, true} {
			slow := scanner{b: b}
			var want []byte
			var wantOK bool
			if key {
				want, wantOK = slow.shapeKey([]byte("pre"), 0, nil)
			} else {
				want, wantOK = []byte("pre"), slow.skip(0)
			}
			fast := scanner{b: b}
			got, ok := fast.compact([]byte("pre"), key)
			if ok {
				answered[k]++
				require.True(t, wantOK, "%s (key %v): read by compact only", s, key)
				require.Equal(t, string(want), string(got), "%s (key %v)", s, key)
				require.Equal(t, slow.i, fast.i, "%s (key %v): where the scanner stands", s, key)
			}
			if wantOK && storedForm(b[:slow.i]) {
				stored[k]++
				require.True(t, ok, "%s (key %v): written as the store writes values, yet declined", s, key)
			}
			r := NewReader(b)
			if key {
				got, ok = r.p.shapeKeyOf([]byte("pre"))
			} else {
				got, ok = r.Raw()
				want = bytes.TrimLeft(b[:slow.i], " \t\n\r")
			}
			require.Equal(t, wantOK, ok, "%s (key %v)", s, key)
			if ok {
				require.Equal(t, string(want), string(got), "%s (key %v)", s, key)
				require.Equal(t, slow.i, r.p.i, "%s (key %v): where the reader stands", s, key)
			}
		}
	}
	for k := range 2 {
		require.Greater(t, stored[k], 5000)
		require.Greater(t, answered[k], 5000)
	}
}

// storedForm reports whether the JSON text b is written as encoding/json
// writes it, with no white space outside strings and plain keys, nested at
// most maxCompactDepth deep: what compact must answer for.
func storedForm(b []byte) bool {
	var out bytes.Buffer
	if !json.Valid(b) || json.Compact(&out, b) != nil || !bytes.Equal(out.Bytes(), b) {
		return false
	}
	// A compact valid text: a string is a key when a colon follows it.
	depth, maxDepth := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{', '[':
			depth++
			maxDepth = max(maxDepth, depth)
		case '}', ']':
			depth--
		case '"':
			plain := true
			for i++; b[i] != '"'; i++ {
				if c := b[i]; c < 0x20 || c >= 0x7f {
					plain = false
				} else if c == '\\' {
					plain = false
					i++
				}
			}
			if !plain && i+1 < len(b) && b[i+1] == ':' {
				return false // a key written with an escape or not ASCII
			}
		}
	}
	return maxDepth <= maxCompactDepth
}

// randomStoredJSON is a random JSON value at depth as encoding/json writes
// one: no white space outside strings, keys plain but now and then, strings
// with escapes now and then, numbers of every kind.
// mutatedJSON is s cut short, with a byte replaced or inserted, another
// random stored text, or s itself: the texts a reader of s's shape must
// decline or read as the general reader does.
func mutatedJSON(rng *rand.Rand, s string) string {
	const bytes = `{}[]",:0-1e.tfnul \x`
	v := []byte(s)
	switch rng.IntN(5) {
	case 0:
		v = v[:rng.IntN(len(v)+1)]
	case 1:
		v[rng.IntN(len(v))] = bytes[rng.IntN(len(bytes))]
	case 2:
		at := rng.IntN(len(v) + 1)
		v = append(v[:at:at], append([]byte{bytes[rng.IntN(len(bytes))]}, v[at:]...)...)
	case 3:
		v = []byte(randomStoredJSON(rng, 0))
	}
	return string(v)
}

func randomStoredJSON(rng *rand.Rand, depth int) string {
	kind := rng.IntN(8)
	if depth > 4 {
		kind = 4 + rng.IntN(4)
	}
	switch kind {
	case 0, 1, 2:
		var sb strings.Builder
		sb.WriteString("{")
		for k := range rng.IntN(4) {
			if k > 0 {
				sb.WriteString(",")
			}
			sb.WriteString(`"` + []string{"a", "replicas", "c\\u0063", "d e", "f"}[rng.IntN(5)] + `":` + randomStoredJSON(rng, depth+1))
		}
		return sb.String() + "}"
	case 3:
		var sb strings.Builder
		sb.WriteString("[")
		for k := range rng.IntN(3) {
			if k > 0 {
				sb.WriteString(",")
			}
			sb.WriteString(randomStoredJSON(rng, depth+1))
		}
		return sb.String() + "]"
	}
	return []string{"1", "true", "false", `"x"`, "2.5", "null", `"\u00e9\n"`, "-0", "1e400", "10000000000000000000000", `"a\"b"`, `""`, "-12.5e-3", `"registry.example.com/team/app:v1.2.3"`}[rng.IntN(14)]
}

// BenchmarkRawShape reads a spec of the controller benchmark's shape
// (bench/cmd/ctl-steady) with its shape key, as the read of every Update
// reads the stored spec.
//
//	go test -run '^$' -bench RawShape -benchmem ./internal/jsonscan/
func BenchmarkRawShape(b *testing.B) {
	spec := []byte(`{"replicas":3,"image":"registry.example.com/team/app:v1.2.3","args":["--listen=:8080","--verbose","--config=/etc/app/config.yaml"],"selector":{"app":"app-00001","tier":"backend"}}`)
	var buf [256]byte
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(spec)
		if _, _, keyed, ok := r.RawShape(buf[:0]); !ok || !keyed {
			b.Fatal("no shape key")
		}
	}
}

// RawOfShape reads a value exactly as RawShape reads it with the Shape's
// key: whenever it answers, RawShape gives that value and that key, and
// stops where it stops; when it declines, the Reader is where it was. It
// answers for a value written as the key's own text was, with any valid
// scalars in the key's scalars' places. The values are random: each key's
// own text, that text with other scalars, cut short, with a byte changed,
// or another value.
func TestRawOfShapeIsRawShapeOfItsKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(57, 26))
	scalars := []string{"1", "true", "false", `"x"`, "2.5", "null", `"\u00e9\n"`, "-0", "1e400", `"a\"b"`, `""`, "-12.5e-3", "01", `"\q"`, "tru", "1.", "{}", "[]", `"x`}
	texts := []string{`{"a":[1e400]}`, `{"a":1,"b":[ 1 ]}`, ` 7 `, `{"a":{"b":"c"}} tail`}
	for range 5000 {
		texts = append(texts, randomStoredJSON(rng, 0))
	}
	var answered, withScalars int
	for _, s := range texts {
		key, ok := AppendShapeKey(nil, []byte(s))
		if !ok {
			continue
		}
		shape, ok := NewShape(key)
		require.True(t, ok, "%s: key %s", s, key)
		require.Equal(t, string(key), string(shape.Key()))
		// The key's own text, then others.
		others := []string{s, string(key)}
		for range 6 {
			others = append(others, mutatedJSON(rng, s))
		}
		// The key's text with a scalar in each of its scalars' places.
		var sb strings.Builder
		for k, seg := range shape.segs {
			if k > 0 {
				sb.WriteString(scalars[rng.IntN(len(scalars))])
			}
			sb.WriteString(seg)
		}
		others = append(others, sb.String(), sb.String()+`,"status":{}`)
		for _, o := range others {
			b := []byte(o)
			r1, r2 := NewReader(b), NewReader(b)
			raw, ok := r1.RawOfShape(shape)
			if !ok {
				require.Zero(t, r1.p.i, "%s against %s: declined, yet read", o, key)
				continue
			}
			answered++
			if o == sb.String() {
				withScalars++
			}
			wantRaw, wantKey, keyed, wantOK := r2.RawShape(nil)
			require.True(t, wantOK && keyed, "%s against %s: read by RawOfShape only", o, key)
			require.Equal(t, string(wantRaw), string(raw), "%s against %s", o, key)
			require.Equal(t, string(key), string(wantKey), "%s against %s", o, key)
			require.Equal(t, r2.p.i, r1.p.i, "%s against %s: where the Reader stands", o, key)
		}
		// Each key's own text, as the store writes it, is answered.
		if storedForm([]byte(s)) {
			r := NewReader([]byte(s))
			_, ok := r.RawOfShape(shape)
			require.True(t, ok, "%s: its own key's text, declined", s)
		}
	}
	require.Greater(t, answered, 3000)
	require.Greater(t, withScalars, 500)
}

// NewShape takes shape keys only: a text whose key is another text is
// not one.
func TestNewShapeOnlyOfShapeKeys(t *testing.T) {
	for _, s := range []string{`{"a":1}`, `{ "a":0}`, `{"a":0`, `{"a\u0062":0}`, `{"a":[1e400]}`, ``} {
		_, ok := NewShape([]byte(s))
		require.False(t, ok, "%s", s)
	}
	for _, s := range []string{`0`, `{"a":0,"b":[1,"x"],"c":{"d":0}}`, `[ 1 ]`, `{}`} {
		shape, ok := NewShape([]byte(s))
		require.True(t, ok, "%s", s)
		require.Equal(t, s, string(shape.Key()))
	}
}

// BenchmarkRawOfShape is BenchmarkRawShape read against the spec's known
// shape key, as the read of an Update whose shape the Store last kept
// the record of reads it (store's keptWrite).
//
//	go test -run '^$' -bench RawOfShape -benchmem ./internal/jsonscan/
func BenchmarkRawOfShape(b *testing.B) {
	spec := []byte(`{"replicas":3,"image":"registry.example.com/team/app:v1.2.3","args":["--listen=:8080","--verbose","--config=/etc/app/config.yaml"],"selector":{"app":"app-00001","tier":"backend"}}`)
	key, _ := AppendShapeKey(nil, spec)
	shape, _ := NewShape(key)
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(spec)
		if _, ok := r.RawOfShape(shape); !ok {
			b.Fatal("not of its shape")
		}
	}
}

// ChangedScalarsOfShape gives ChangedScalarsTo's answer whenever it
// answers, and answers for a change of one of the shape's scalars to
// another that is valid and not null. The values are random: a text with
// a shape key, and that text with one of the key's scalars replaced (valid
// or not), cut short, with a byte changed or inserted, or another text.
func TestChangedScalarsOfShapeIsChangedScalarsTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(57, 44))
	scalars := []string{"1", "12", "true", "false", `"x"`, `"xy"`, "2.5", "null", `"\u00e9\n"`, "-0", "1e400", `"a\"b"`, `""`, "-12.5e-3", "01", `"\q"`, "tru", "1.", "{}", "[]", `"x`, `1,"z":2`}
	var answered, oneChange int
	// Paths of more keys than a Changes holds (32), and of as many.
	deep := func(n int, v string) string {
		return strings.Repeat(`{"a":`, n) + v + strings.Repeat("}", n)
	}
	fixed := []string{deep(31, "1"), deep(31, "2"), deep(40, "1"), deep(40, "2")}
	for i := range 6000 + len(fixed) {
		var s string
		if i < len(fixed) {
			s = fixed[i]
		} else {
			s = randomStoredJSON(rng, 0)
		}
		key, ok := AppendShapeKey(nil, []byte(s))
		if !ok {
			continue
		}
		shape, ok := NewShape(key)
		require.True(t, ok)
		others := []string{s}
		if i < len(fixed) {
			others = append(others, fixed[i^1])
		}
		if n := len(shape.segs) - 1; n > 0 {
			// The text with its k'th scalar replaced.
			k := rng.IntN(n)
			var sb strings.Builder
			r := NewReader([]byte(s))
			p := &r.p
			for j, seg := range shape.segs {
				sb.WriteString(seg)
				p.i += len(seg)
				if j == n {
					break
				}
				start := p.i
				end := p.compactScalar(start, false)
				if end < 0 {
					break // not written as the key is (white space in a list)
				}
				p.i = end
				if j == k {
					sb.WriteString(scalars[rng.IntN(len(scalars))])
				} else {
					sb.WriteString(s[start:end])
				}
			}
			others = append(others, sb.String())
		}
		for range 3 {
			others = append(others, mutatedJSON(rng, s))
		}
		for _, o := range others {
			for _, max := range []int{0, 1, 16} {
				var got, want Changes
				got.n, want.n = 3, 3 // dropped
				ok, ans := ChangedScalarsOfShape(&got, shape, []byte(s), []byte(o), "spec", max)
				if !ans {
					require.Zero(t, got.n, "%s to %s: not answered, yet a path", s, o)
					continue
				}
				answered++
				wantOK := ChangedScalarsTo(&want, []byte(s), []byte(o), "spec", max, true)
				require.Equal(t, wantOK, ok, "%s to %s (max %d)", s, o, max)
				require.Equal(t, want.Len(), got.Len(), "%s to %s (max %d)", s, o, max)
				for i := range want.Len() {
					require.Equal(t, want.Path(i), got.Path(i), "%s to %s", s, o)
				}
				if got.Len() == 1 {
					oneChange++
				}
			}
		}
	}
	require.Greater(t, answered, 2000)
	require.Greater(t, oneChange, 1000)
}

// FuzzShape holds RawOfShape to RawShape and ChangedScalarsOfShape to
// ChangedScalarsTo, for the shape of one text (the key AppendShapeKey
// gives it) and any other text: whenever they answer, they give what
// those give.
func FuzzShape(f *testing.F) {
	spec := `{"replicas":3,"image":"registry.example.com/team/app:v1.2.3","args":["--listen=:8080"],"selector":{"app":"a"}}`
	f.Add([]byte(spec), []byte(strings.Replace(spec, "3", "45", 1)))
	f.Add([]byte(spec), []byte(strings.Replace(spec, `"a"}`, `"b\u0063"}`, 1)))
	f.Add([]byte(`{"a":null,"b":{"c":1}}`), []byte(`{"a":1,"b":{"c":1}}`))
	f.Add([]byte(`{"a":1,"b":[1 ]}`), []byte(`{"a":1e400,"b":[1 ]}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		key, ok := AppendShapeKey(nil, a)
		if !ok {
			return
		}
		shape, ok := NewShape(key)
		require.True(t, ok, "%s: key %s", a, key)
		r1, r2 := NewReader(b), NewReader(b)
		if raw, ok := r1.RawOfShape(shape); ok {
			wantRaw, wantKey, keyed, wantOK := r2.RawShape(nil)
			require.True(t, wantOK && keyed, "%s against %s", b, key)
			require.Equal(t, string(wantRaw), string(raw))
			require.Equal(t, string(key), string(wantKey))
			require.Equal(t, r2.p.i, r1.p.i)
		} else {
			require.Zero(t, r1.p.i)
		}
		var got, want Changes
		if ok, answered := ChangedScalarsOfShape(&got, shape, a, b, "spec", 16); answered {
			require.Equal(t, ChangedScalarsTo(&want, a, b, "spec", 16, true), ok, "%s to %s", a, b)
			require.Equal(t, want.Len(), got.Len())
			for i := range want.Len() {
				require.Equal(t, want.Path(i), got.Path(i))
			}
		} else {
			require.Zero(t, got.Len())
		}
	})
}
