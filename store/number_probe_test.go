package store_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// probeNums holds a number of every field type encoding/json writes
// integers for.
type probeNums struct {
	U uint64          `json:"u,omitempty"`
	I int64           `json:"i,omitempty"`
	F *float64        `json:"f,omitempty"`
	N json.Number     `json:"n,omitempty"`
	R json.RawMessage `json:"r,omitempty"`
	S string          `json:"s,omitempty"`
}

func float(f float64) *float64 { return &f }

// probeNumCases are values of probeNums a float64 tree would lose or
// respell, each with a neighbour it would take for it.
var probeNumCases = []struct {
	name   string
	v, and probeNums
}{
	{"uint64 2^63+1", probeNums{U: 1<<63 + 1}, probeNums{U: 1<<63 + 2}},
	{"uint64 max", probeNums{U: math.MaxUint64}, probeNums{U: math.MaxUint64 - 1}},
	{"int64 min", probeNums{I: math.MinInt64}, probeNums{I: math.MinInt64 + 1}},
	{"float -0", probeNums{F: float(math.Copysign(0, -1))}, probeNums{F: float(1)}},
	{"float 2^63+2048", probeNums{F: float(1<<63 + 2048)}, probeNums{F: float(1<<63 + 4096)}},
	{"float 1e21", probeNums{F: float(1e21)}, probeNums{F: float(1e21 + 1<<17)}},
	{"float 1e300", probeNums{F: float(1e300)}, probeNums{F: float(-1e300)}},
	{"number 1e3", probeNums{N: "1e3"}, probeNums{N: "1001"}},
	{"number -0", probeNums{N: "-0"}, probeNums{N: "0.5"}},
	{"number big", probeNums{N: "123456789012345678901234567890"}, probeNums{N: "1.3e29"}},
	{"raw", probeNums{R: json.RawMessage(`[1e3,-0,18446744073709551615,1.0]`)}, probeNums{R: json.RawMessage(`[1e3,-0,18446744073709551614,1.0]`)}},
}

// Every number of a probeNums survives, as encoding/json writes it and to
// the byte, an Apply and an ApplyStatus that leave a stored field alone
// (so merge through ownership's trees) or cover every field, another
// manager's apply that leaves it alone, and a re-apply; the neighbour
// replaces it, and FieldChanges reports that.
func TestProbeNumbersSurviveApplies(t *testing.T) {
	ctx := context.Background()
	for _, c := range probeNumCases {
		for _, covers := range []bool{false, true} {
			name := c.name
			if covers {
				name += "/covering"
			}
			t.Run(name, func(t *testing.T) {
				s, err := store.New[probeNums, probeNums](memstore.New(), "ProbeNums")
				if err != nil {
					t.Fatal(err)
				}
				user, ctrl, other := s.As("user"), s.As("ctrl"), s.As("other")
				kept := probeNums{S: "kept"}
				if _, err := user.Create(ctx, &store.Object[probeNums, probeNums]{Meta: store.Meta{Name: "a"}, Spec: kept, Status: kept}); err != nil {
					t.Fatal(err)
				}
				want, next := c.v, c.and
				want.S, next.S = "kept", "kept"
				applied, moved := c.v, c.and
				if covers {
					applied.S, moved.S = "kept", "kept"
				}
				check := func(step string, want probeNums) {
					t.Helper()
					got, err := s.Get(ctx, "a")
					if err != nil {
						t.Fatal(err)
					}
					for side, v := range map[string]probeNums{"spec": got.Spec, "status": got.Status} {
						if g, w := mustText(t, v), mustText(t, want); g != w {
							t.Fatalf("%s: stored %s %s, want %s", step, side, g, w)
						}
					}
				}
				if _, err := ctrl.Apply(ctx, "a", applied); err != nil {
					t.Fatalf("Apply of %s: %v", mustText(t, applied), err)
				}
				if _, err := ctrl.ApplyStatus(ctx, "a", applied, nil); err != nil {
					t.Fatalf("ApplyStatus of %s: %v", mustText(t, applied), err)
				}
				check("Apply, ApplyStatus", want)
				before, _ := s.Get(ctx, "a")
				for _, op := range []string{"Apply", "ApplyStatus"} {
					var res store.ApplyResult
					if op == "Apply" {
						res, err = ctrl.Apply(ctx, "a", applied)
					} else {
						res, err = ctrl.ApplyStatus(ctx, "a", applied, nil)
					}
					if err != nil || res.Changed {
						t.Fatalf("re-%s: changed %v, %v", op, res.Changed, err)
					}
				}
				if _, err := other.Apply(ctx, "a", map[string]any{"s": "kept"}); err != nil {
					t.Fatal(err)
				}
				if _, err := other.ApplyStatus(ctx, "a", map[string]any{"s": "kept"}, nil); err != nil {
					t.Fatal(err)
				}
				check("another manager's apply", want)
				if _, err := ctrl.Apply(ctx, "a", moved); err != nil {
					t.Fatal(err)
				}
				if _, err := ctrl.ApplyStatus(ctx, "a", moved, nil); err != nil {
					t.Fatal(err)
				}
				check("the neighbour's apply", next)
				after, _ := s.Get(ctx, "a")
				owned, foreign := s.FieldChanges(before, after, "ctrl")
				if len(owned) != 2 || len(foreign) != 0 {
					t.Fatalf("FieldChanges: owned %v, foreign %v; want one path on each side, owned", owned, foreign)
				}
				if got := pathStrings(owned); got[0] == got[1] || len(got[0]) < 6 {
					t.Fatalf("FieldChanges: %v", got)
				}
			})
		}
	}
}

func mustText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// numberSpec has only fields the store encodes without encoding/json,
// and a json.Number, which is a string type written as a number.
type numberSpec struct {
	Name  string        `json:"name"`
	N     json.Number   `json:"n"`
	Ns    []json.Number `json:"ns"`
	Count int           `json:"count"`
}

// TestJSONNumberIsStoredAsANumber: a json.Number in a Spec is stored as
// json.Marshal writes it (a number, not a quoted string), and reads back
// as the same text.
func TestJSONNumberIsStoredAsANumber(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	st, err := store.New[numberSpec, struct{}](mem, "Num")
	if err != nil {
		t.Fatal(err)
	}
	spec := numberSpec{Name: "a", N: "12.5e3", Ns: []json.Number{"1", "-2"}, Count: 3}
	if _, err := st.As("u").Create(ctx, &store.Object[numberSpec, struct{}]{Meta: store.Meta{Name: "a"}, Spec: spec}); err != nil {
		t.Fatal(err)
	}
	kv, err := mem.Get(ctx, "Num/a")
	if err != nil {
		t.Fatal(err)
	}
	var stored struct {
		Spec json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(kv.Value, &stored); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(spec)
	if string(stored.Spec) != string(want) {
		t.Errorf("stored spec %s, want %s", stored.Spec, want)
	}
	got, err := st.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.N != spec.N || len(got.Spec.Ns) != 2 || got.Spec.Ns[1] != "-2" {
		t.Errorf("read back %+v, want %+v", got.Spec, spec)
	}
}
