package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// Spec and Status are encoded with encoding/json: whatever their shape,
// what a Get returns is what encoding/json's round trip of the written
// value gives, and the stored spec is the bytes json.Marshal writes.

type probeInner struct {
	A string `json:"a"`
	B int    `json:"b,omitempty"`
}

type ProbeEmbedded struct {
	E1 string `json:"e1"`
	X  int    `json:"x"`
}

type probeLower struct {
	L string `json:"l"`
}

// probeMarshaler has a custom encoding with a value receiver.
type probeMarshaler struct{ v string }

func (m probeMarshaler) MarshalJSON() ([]byte, error) { return json.Marshal("m:" + m.v) }
func (m *probeMarshaler) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	m.v = strings.TrimPrefix(s, "m:")
	return nil
}

type probeText string

func (t probeText) MarshalText() ([]byte, error) { return []byte("t:" + string(t)), nil }
func (t *probeText) UnmarshalText(b []byte) error {
	*t = probeText(strings.TrimPrefix(string(b), "t:"))
	return nil
}

type probeSpec struct {
	ProbeEmbedded
	probeLower
	X          string            `json:"x"` // shadows the embedded X
	Skip       string            `json:"-"`
	Dash       string            `json:"-,"`
	Str        int64             `json:",string"`
	BoolStr    bool              `json:"bs,string"`
	OptPtr     *int              `json:"optPtr,omitempty"`
	ZeroStruct probeInner        `json:"zs,omitempty"`
	EmptyMap   map[string]int    `json:"em,omitempty"`
	NilMap     map[string]int    `json:"nm"`
	OmitZero   probeInner        `json:"oz,omitzero"`
	When       time.Time         `json:"when"`
	WhenPtr    *time.Time        `json:"whenPtr,omitempty"`
	Raw        json.RawMessage   `json:"raw"`
	Any        any               `json:"any"`
	IntKeys    map[int]string    `json:"intKeys"`
	TextKeys   map[probeText]int `json:"textKeys"`
	Custom     probeMarshaler    `json:"custom"`
	CustomPtr  *probeMarshaler   `json:"customPtr"`
	Floats     []float64         `json:"floats"`
	F32        float32           `json:"f32"`
	Bytes      []byte            `json:"bytes"`
	Arr        [2]int            `json:"arr"`
	Big        uint64            `json:"big"`
	Small      int64             `json:"small"`
	HTML       string            `json:"html"`
	Unicode    string            `json:"ü"`
	unexported string
	Nested     []map[string]*probeInner `json:"nested"`
}

type probeStatus struct {
	ProbeEmbedded `json:"emb"`
	Phase         string          `json:"phase,omitempty"`
	Count         *int64          `json:"count,omitempty"`
	Items         []probeInner    `json:"items"`
	Text          probeText       `json:"text"`
	Raw           json.RawMessage `json:"raw,omitempty"`
}

func probeSpecValue(i int) probeSpec {
	n := 7 + i
	when := time.Date(2026, 12, 2, 17, 0, 0, 123456789, time.FixedZone("X", 3600))
	return probeSpec{
		ProbeEmbedded: ProbeEmbedded{E1: "e", X: 9},
		probeLower:    probeLower{L: "promoted"},
		X:             "outer",
		Skip:          "never stored",
		Dash:          "dash",
		Str:           math.MaxInt64 - int64(i),
		BoolStr:       true,
		OptPtr:        &n,
		EmptyMap:      map[string]int{},
		When:          when,
		WhenPtr:       &when,
		Raw:           json.RawMessage(`{"z":1,"a":[true,null]}`),
		Any:           map[string]any{"k": []any{1.5, "s", nil}},
		IntKeys:       map[int]string{10: "ten", -2: "minus", 3: "three"},
		TextKeys:      map[probeText]int{"a": 1, "b": 2},
		Custom:        probeMarshaler{v: "c"},
		CustomPtr:     &probeMarshaler{v: "p"},
		Floats:        []float64{0.1, 1e21, 1e-7, -0.0, 123456789.123},
		F32:           0.1,
		Bytes:         []byte{0, 1, 2, 255},
		Arr:           [2]int{1, 2},
		Big:           math.MaxUint64,
		Small:         math.MinInt64,
		HTML:          "<a href=\"x\">&amp;</a>\u2028\u2029\x00\xff",
		Unicode:       "ünï€ode 😀",
		unexported:    "not stored",
		Nested:        []map[string]*probeInner{{"p": {A: "x", B: 1}, "nil": nil}, nil},
	}
}

// jsonRoundTrip is what encoding/json makes of v written and read back.
func jsonRoundTrip[V any](t *testing.T, v V) V {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out V
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func probeSame[V any](t *testing.T, what string, got, want V) {
	t.Helper()
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if !bytes.Equal(gb, wb) || !reflect.DeepEqual(jsonRoundTrip(t, got), jsonRoundTrip(t, want)) {
		t.Fatalf("%s differs from encoding/json's round trip:\ngot  %s\nwant %s", what, gb, wb)
	}
}

// storedPart returns the raw JSON of part ("spec" or "status") of the
// stored value of name.
func storedPart(t *testing.T, mem *memstore.Store, s interface{ Prefix() string }, name, part string) []byte {
	t.Helper()
	kvv, err := mem.Get(context.Background(), s.Prefix()+name)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(kvv.Value, &doc); err != nil {
		t.Fatal(err)
	}
	return doc[part]
}

func TestProbeExoticShapesRoundTripAsEncodingJSON(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	s, err := store.New[probeSpec, probeStatus](mem, "Probe")
	if err != nil {
		t.Fatal(err)
	}
	w := s.As("probe")
	spec := probeSpecValue(0)
	cnt := int64(3)
	status := probeStatus{ProbeEmbedded: ProbeEmbedded{E1: "s", X: 1}, Count: &cnt, Items: []probeInner{{A: "<>"}}, Text: "hi", Raw: json.RawMessage(`[1, 2]`)}
	obj := &store.Object[probeSpec, probeStatus]{Meta: store.Meta{Name: "a"}, Spec: spec, Status: status}
	if _, err := w.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	check := func(step string, spec probeSpec, status probeStatus) {
		t.Helper()
		got, err := s.Get(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		probeSame(t, step+": Get's spec", got.Spec, jsonRoundTrip(t, spec))
		probeSame(t, step+": Get's status", got.Status, jsonRoundTrip(t, status))
		want, _ := json.Marshal(spec)
		var compact bytes.Buffer
		_ = json.Compact(&compact, want)
		if raw := storedPart(t, mem, s, "a", "spec"); !bytes.Equal(raw, compact.Bytes()) {
			t.Fatalf("%s: stored spec differs from json.Marshal's:\ngot  %s\nwant %s", step, raw, compact.Bytes())
		}
	}
	check("Create", spec, status)

	got, _ := s.Get(ctx, "a")
	got.Spec = probeSpecValue(1)
	if _, err := w.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	check("Update", probeSpecValue(1), status)

	got, _ = s.Get(ctx, "a")
	status.Phase = "Ready"
	got.Status = status
	if _, err := w.UpdateStatus(ctx, got); err != nil {
		t.Fatal(err)
	}
	check("UpdateStatus", probeSpecValue(1), status)

	status.Phase = "Applied"
	status.Items = append(status.Items, probeInner{A: "b", B: 2})
	if _, err := w.ApplyStatus(ctx, "a", status, nil); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Get(ctx, "a")
	if got.Status.Phase != "Applied" || len(got.Status.Items) != 2 || got.Status.Text != "hi" {
		b, _ := json.Marshal(got.Status)
		t.Fatalf("ApplyStatus: status %s", b)
	}
	probeSame(t, "ApplyStatus: Get's spec", got.Spec, jsonRoundTrip(t, probeSpecValue(1)))
}

// probePtrMarshaler encodes itself with pointer receivers, a common way to
// write a custom encoding: encoding/json calls MarshalJSON on an
// addressable value, as a field of an Object written through a pointer is.
type probePtrMarshaler struct{ V int }

func (m *probePtrMarshaler) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf(`{"custom":%d}`, m.V)), nil
}

func (m *probePtrMarshaler) UnmarshalJSON(b []byte) error {
	var c struct{ Custom *int }
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	if c.Custom == nil {
		return fmt.Errorf("no custom field in %s", b)
	}
	m.V = *c.Custom
	return nil
}

type probePtrSpec struct {
	Field probePtrMarshaler `json:"field"`
}

// A type whose MarshalJSON and UnmarshalJSON have pointer receivers
// round-trips through the store as through json.Marshal(&obj) and
// json.Unmarshal: its own encoding is written, and read back.
func TestProbePointerReceiverMarshalerRoundTrips(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, mem *memstore.Store)
	}{
		{"top level", func(t *testing.T, mem *memstore.Store) {
			s, err := store.New[probePtrMarshaler, probePtrMarshaler](mem, "PtrTop")
			if err != nil {
				t.Fatal(err)
			}
			obj := &store.Object[probePtrMarshaler, probePtrMarshaler]{Meta: store.Meta{Name: "a"}, Spec: probePtrMarshaler{V: 5}, Status: probePtrMarshaler{V: 6}}
			if _, err := s.As("m").Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
			if raw := storedPart(t, mem, s, "a", "spec"); string(raw) != `{"custom":5}` {
				t.Errorf("stored spec %s, want json.Marshal(&obj)'s {\"custom\":5}", raw)
			}
			got, err := s.Get(ctx, "a")
			if err != nil {
				t.Fatalf("Get of what Create wrote: %v", err)
			}
			if got.Spec.V != 5 || got.Status.V != 6 {
				t.Fatalf("Get: %+v %+v", got.Spec, got.Status)
			}
		}},
		{"field", func(t *testing.T, mem *memstore.Store) {
			s, err := store.New[probePtrSpec, probePtrSpec](mem, "PtrField")
			if err != nil {
				t.Fatal(err)
			}
			obj := &store.Object[probePtrSpec, probePtrSpec]{Meta: store.Meta{Name: "a"}, Spec: probePtrSpec{probePtrMarshaler{V: 5}}}
			if _, err := s.As("m").Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
			if raw := storedPart(t, mem, s, "a", "spec"); string(raw) != `{"field":{"custom":5}}` {
				t.Errorf("stored spec %s, want json.Marshal(&obj)'s {\"field\":{\"custom\":5}}", raw)
			}
			got, err := s.Get(ctx, "a")
			if err != nil {
				t.Fatalf("Get of what Create wrote: %v", err)
			}
			if got.Spec.Field.V != 5 {
				t.Fatalf("Get: %+v", got.Spec)
			}
			if _, err := s.As("m").ApplyStatus(ctx, "a", probePtrSpec{probePtrMarshaler{V: 7}}, nil); err != nil {
				t.Fatalf("ApplyStatus: %v", err)
			}
			if raw := storedPart(t, mem, s, "a", "status"); string(raw) != `{"field":{"custom":7}}` {
				t.Errorf("applied status %s, want {\"field\":{\"custom\":7}}", raw)
			}
			if got, err := s.Get(ctx, "a"); err != nil || got.Status.Field.V != 7 {
				t.Fatalf("Get after ApplyStatus: %v", err)
			}
			if _, err := s.As("m").Apply(ctx, "a", probePtrSpec{probePtrMarshaler{V: 9}}); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if raw := storedPart(t, mem, s, "a", "spec"); string(raw) != `{"field":{"custom":9}}` {
				t.Errorf("applied spec %s, want {\"field\":{\"custom\":9}}", raw)
			}
		}},
		{"versioned", func(t *testing.T, mem *memstore.Store) {
			vs, err := store.NewVersions("v1", store.VersionOf("v1", store.Conversion[probePtrSpec, probePtrSpec, probePtrSpec, probePtrSpec]{}))
			if err != nil {
				t.Fatal(err)
			}
			s, err := store.New[probePtrSpec, probePtrSpec](mem, "PtrVersioned", store.WithVersion("v1", vs))
			if err != nil {
				t.Fatal(err)
			}
			obj := &store.Object[probePtrSpec, probePtrSpec]{Meta: store.Meta{Name: "a"}, Spec: probePtrSpec{probePtrMarshaler{V: 5}}}
			if _, err := s.As("m").Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
			if raw := storedPart(t, mem, s, "a", "spec"); string(raw) != `{"field":{"custom":5}}` {
				t.Errorf("stored spec %s, want json.Marshal(&obj)'s {\"field\":{\"custom\":5}}", raw)
			}
			got, err := s.Get(ctx, "a")
			if err != nil {
				t.Fatalf("Get of what Create wrote: %v", err)
			}
			if got.Spec.Field.V != 5 {
				t.Fatalf("Get: %+v", got.Spec)
			}
		}},
		{"converted", func(t *testing.T, mem *memstore.Store) {
			type hub struct{ V int }
			v1 := store.VersionOf("v1", store.Conversion[probePtrSpec, probePtrSpec, hub, hub]{
				ToHub: func(s, st probePtrSpec) (hub, hub, error) { return hub{s.Field.V}, hub{st.Field.V}, nil },
				FromHub: func(s, st hub) (probePtrSpec, probePtrSpec, error) {
					return probePtrSpec{probePtrMarshaler{s.V}}, probePtrSpec{probePtrMarshaler{st.V}}, nil
				},
			})
			v2 := store.VersionOf("v2", store.Conversion[hub, hub, hub, hub]{})
			vs, err := store.NewVersions("v1", v1, v2)
			if err != nil {
				t.Fatal(err)
			}
			s2, err := store.New[hub, hub](mem, "PtrConverted", store.WithVersion("v2", vs))
			if err != nil {
				t.Fatal(err)
			}
			s1, err := store.New[probePtrSpec, probePtrSpec](mem, "PtrConverted", store.WithVersion("v1", vs))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s2.As("m").Create(ctx, &store.Object[hub, hub]{Meta: store.Meta{Name: "a"}, Spec: hub{5}}); err != nil {
				t.Fatal(err)
			}
			if raw := storedPart(t, mem, s1, "a", "spec"); string(raw) != `{"field":{"custom":5}}` {
				t.Errorf("stored spec %s, want {\"field\":{\"custom\":5}}", raw)
			}
			for _, get := range []func() (int, error){
				func() (int, error) {
					o, err := s1.Get(ctx, "a")
					if err != nil {
						return 0, err
					}
					return o.Spec.Field.V, nil
				},
				func() (int, error) {
					o, err := s2.Get(ctx, "a")
					if err != nil {
						return 0, err
					}
					return o.Spec.V, nil
				},
			} {
				if v, err := get(); err != nil || v != 5 {
					t.Fatalf("Get of what Create wrote: %d, %v", v, err)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, memstore.New()) })
	}
}

type probeName string

type probeTree struct {
	Name string       `json:"name"`
	Kids []*probeTree `json:"kids,omitempty"`
}

// probeSideSpec holds only what the compiled encoder and decoder handle
// themselves, with edge-case values.
type probeSideSpec struct {
	Unicode   string                  `json:"unicode"`
	Plain     string                  `json:""`
	Dash      string                  `json:"-,"`
	Skip      string                  `json:"-"`
	Dotted    string                  `json:"a.b-c_d"`
	Named     probeName               `json:"named,omitempty"`
	NamedKeys map[probeName]probeName `json:"namedKeys"`
	PP        **int                   `json:"pp"`
	ZeroPtr   *int                    `json:"zeroPtr,omitempty"`
	NilSlice  []string                `json:"nilSlice"`
	Empty     []string                `json:"empty"`
	EmptyOmit []string                `json:"emptyOmit,omitempty"`
	MapOmit   map[string]string       `json:"mapOmit,omitempty"`
	I8        int8                    `json:"i8"`
	U16       uint16                  `json:"u16"`
	U         uint64                  `json:"u"`
	I         int64                   `json:"i"`
	B         bool                    `json:"b,omitempty"`
	Tree      probeTree               `json:"tree"`
	Strs      map[string][]string     `json:"strs"`
	NilInMap  map[string]*probeTree   `json:"nilInMap"`
	private   int
}

func probeSideValue(i int) probeSideSpec {
	one, zero := 1+i, 0
	p := &one
	v := probeSideSpec{
		Unicode:   "ü <>&\u2028\u2029 \x7f \x01 \xff\xfe \"q\" \\",
		Plain:     "plain",
		Dash:      "dash",
		Skip:      "skipped",
		Dotted:    "dotted",
		Named:     "n",
		NamedKeys: map[probeName]probeName{"z": "1", "<a>": "2", "ä": "3", "": "4"},
		PP:        &p,
		ZeroPtr:   &zero,
		Empty:     []string{},
		EmptyOmit: []string{},
		MapOmit:   map[string]string{},
		I8:        -128,
		U16:       65535,
		U:         math.MaxUint64 - uint64(i),
		I:         math.MinInt64 + int64(i),
		Tree:      probeTree{Name: "root", Kids: []*probeTree{{Name: "a"}, nil, {Name: "b", Kids: []*probeTree{{Name: "c"}}}}},
		Strs:      map[string][]string{"b": nil, "a": {"x", ""}, "\u00e9": {}},
		NilInMap:  map[string]*probeTree{"nil": nil, "t": {Name: "t"}},
		private:   5,
	}
	if i%2 == 0 {
		// ASCII keys only, which the compiled decoder reads itself
		// (it leaves other keys to encoding/json).
		delete(v.NamedKeys, "ä")
		delete(v.NamedKeys, "<a>")
		v.U = math.MaxInt64 // above, encoding/json reads it
		delete(v.Strs, "\u00e9")
		v.Strs["e"] = []string{}
		v.Unicode = "ünï€ode 😀 plain"
	}
	return v
}

func TestProbeSideEncodedShapesMatchEncodingJSON(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	s, err := store.New[probeSideSpec, probeSideSpec](mem, "ProbeSide")
	if err != nil {
		t.Fatal(err)
	}
	w := s.As("probe")
	obj := &store.Object[probeSideSpec, probeSideSpec]{Meta: store.Meta{Name: "a"}, Spec: probeSideValue(0), Status: probeSideValue(1)}
	if _, err := w.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	check := func(step string, spec, status probeSideSpec) {
		t.Helper()
		for part, v := range map[string]probeSideSpec{"spec": spec, "status": status} {
			want, _ := json.Marshal(v)
			if raw := storedPart(t, mem, s, "a", part); !bytes.Equal(raw, want) {
				t.Fatalf("%s: stored %s differs from json.Marshal's:\ngot  %s\nwant %s", step, part, raw, want)
			}
		}
		got, err := s.Get(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if want := jsonRoundTrip(t, spec); !reflect.DeepEqual(got.Spec, want) {
			t.Fatalf("%s: Get's spec differs from encoding/json's round trip:\ngot  %#v\nwant %#v", step, got.Spec, want)
		}
		if want := jsonRoundTrip(t, status); !reflect.DeepEqual(got.Status, want) {
			t.Fatalf("%s: Get's status differs from encoding/json's round trip:\ngot  %#v\nwant %#v", step, got.Status, want)
		}
	}
	check("Create", probeSideValue(0), probeSideValue(1))
	got, _ := s.Get(ctx, "a")
	got.Spec = probeSideValue(2)
	if _, err := w.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	check("Update", probeSideValue(2), probeSideValue(1))
	got, _ = s.Get(ctx, "a")
	got.Status = probeSideValue(3)
	if _, err := w.UpdateStatus(ctx, got); err != nil {
		t.Fatal(err)
	}
	check("UpdateStatus", probeSideValue(2), probeSideValue(3))
	applied := probeSideValue(4)
	applied.U = math.MaxInt64 // see TestProbeApplyStatusKeepsBigUint64
	if _, err := w.ApplyStatus(ctx, "a", applied, nil); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Get(ctx, "a")
	if want := jsonRoundTrip(t, applied); got.Status.U != want.U || got.Status.I != want.I || !reflect.DeepEqual(got.Status.Tree, want.Tree) {
		t.Fatalf("ApplyStatus: got %#v", got.Status)
	}
	probeSame(t, "ApplyStatus: spec", got.Spec, jsonRoundTrip(t, probeSideValue(2)))
}

type probeBig struct {
	U uint64 `json:"u"`
	S string `json:"s,omitempty"`
}

// An applied status of type T keeps a uint64 above math.MaxInt64 exactly,
// as encoding/json does, whether or not it covers every field of the
// stored status.
func TestProbeApplyStatusKeepsBigUint64(t *testing.T) {
	ctx := context.Background()
	for _, u := range []uint64{math.MaxInt64, 1<<63 + 1, math.MaxUint64} {
		for _, covers := range []bool{true, false} {
			s, err := store.New[probeBig, probeBig](memstore.New(), "ProbeBig")
			if err != nil {
				t.Fatal(err)
			}
			w := s.As("probe")
			if _, err := w.Create(ctx, &store.Object[probeBig, probeBig]{Meta: store.Meta{Name: "a"}, Status: probeBig{S: "kept"}}); err != nil {
				t.Fatal(err)
			}
			applied := probeBig{U: u}
			if covers {
				applied.S = "applied"
			}
			if _, err := w.ApplyStatus(ctx, "a", applied, nil); err != nil {
				t.Fatalf("ApplyStatus of %+v: %v", applied, err)
			}
			got, err := s.Get(ctx, "a")
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.U != u {
				t.Fatalf("ApplyStatus of %+v stored %d", applied, got.Status.U)
			}
		}
	}
}
