package ownership_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	"github.com/steady-go/steady/ownership"
)

// The re-apply shortcut (a re-apply that changes a few scalar leaves) must
// return exactly what the full walk returns. The full walk is reached from
// the public API by giving the record one extra entry with an empty Set
// (which the shortcut refuses, and which the full walk drops): the two
// results must then agree entry for entry once that entry is left out.

const probeEmpty = "probe-empty-entry"

func fullApply(live, cfg any, mgr string, managed ownership.Managed, opts ...ownership.Option) (ownership.Result, error) {
	m := append(append(ownership.Managed(nil), managed...), ownership.Entry{Manager: probeEmpty, Operation: ownership.OpUpdate, Set: &ownership.Set{}})
	r, err := ownership.Apply(live, cfg, mgr, m, opts...)
	if err != nil {
		return r, err
	}
	var out ownership.Managed
	for _, e := range r.Managed {
		if e.Manager != probeEmpty {
			out = append(out, e)
		}
	}
	r.Managed = out
	return r, nil
}

func probeSnap(m ownership.Managed) []string {
	var out []string
	for _, e := range m {
		out = append(out, e.Manager+"/"+string(e.Operation)+"="+e.Set.Encode())
	}
	return out
}

func probeJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("unencodable %#v", v)
	}
	return string(b)
}

func conflictText(err error) string {
	var ce *ownership.ConflictError
	if errors.As(err, &ce) {
		c := append([]ownership.Conflict(nil), ce.Conflicts...)
		s := fmt.Sprint(c)
		return "conflict " + s
	}
	if err != nil {
		return "error " + err.Error()
	}
	return ""
}

// agree applies cfg both ways and fails when they disagree.
func agree(t *testing.T, live map[string]any, cfg map[string]any, mgr string, managed ownership.Managed, opts ...ownership.Option) (ownership.Result, error) {
	t.Helper()
	liveJSON, cfgJSON, before := probeJSON(live), probeJSON(cfg), probeSnap(managed)
	quick, qerr := ownership.Apply(live, cfg, mgr, managed, opts...)
	full, ferr := fullApply(live, cfg, mgr, managed, opts...)
	ctx := fmt.Sprintf("\nlive   %s\nconfig %s\nby %s over %v", liveJSON, cfgJSON, mgr, before)
	if probeJSON(live) != liveJSON || probeJSON(cfg) != cfgJSON || !reflect.DeepEqual(probeSnap(managed), before) {
		t.Fatalf("Apply modified its input%s", ctx)
	}
	if (qerr == nil) != (ferr == nil) || conflictText(qerr) != conflictText(ferr) {
		t.Fatalf("errors differ: shortcut %v, full walk %v%s", qerr, ferr, ctx)
	}
	if qerr != nil {
		return quick, qerr
	}
	if q, f := probeJSON(quick.Object), probeJSON(full.Object); q != f {
		t.Fatalf("objects differ:\nshortcut %s\nfull     %s%s", q, f, ctx)
	}
	if q, f := probeSnap(quick.Managed), probeSnap(full.Managed); !reflect.DeepEqual(q, f) {
		t.Fatalf("records differ:\nshortcut %v\nfull     %v%s", q, f, ctx)
	}
	if quick.ObjectChanged != full.ObjectChanged {
		t.Fatalf("ObjectChanged differs: shortcut %v, full %v%s", quick.ObjectChanged, full.ObjectChanged, ctx)
	}
	// The full walk's Changed also counts the dropped empty entry.
	if quick.ObjectChanged && !quick.Changed {
		t.Fatalf("ObjectChanged without Changed%s", ctx)
	}
	return quick, nil
}

var probeKeys = []string{"a", "b", "a.b", "x/y", "ü", "", " ", "[0]", "\"q\"", "spec", "status"}

func probeScalar(r *rand.Rand) any {
	switch r.IntN(16) {
	case 0:
		return int64(1)
	case 1:
		return 1.0
	case 2:
		return json.Number("1")
	case 3:
		return ""
	case 4:
		return "1"
	case 5:
		return true
	case 6:
		return false
	case 7:
		return int64(math.MaxInt64)
	case 8:
		return uint64(math.MaxUint64)
	case 9:
		return float64(1 << 53)
	case 10:
		return int64(1<<53 + 1)
	case 11:
		return math.Copysign(0, -1)
	case 12:
		return int64(0)
	case 13:
		return 0.5
	case 14:
		return "ü"
	default:
		return nil
	}
}

func probeValue(r *rand.Rand, depth int) any {
	switch n := r.IntN(10); {
	case n < 6 || depth > 2:
		return probeScalar(r)
	case n < 8:
		return probeTree(r, depth+1)
	case n < 9:
		return map[string]any{}
	default:
		return []any{probeScalar(r)}
	}
}

func probeTree(r *rand.Rand, depth int) map[string]any {
	m := map[string]any{}
	for n := r.IntN(4) + 1; n > 0; n-- {
		m[probeKeys[r.IntN(len(probeKeys))]] = probeValue(r, depth)
	}
	if depth == 0 && r.IntN(2) == 0 {
		// A keyed list and a set (see probeSchema), whose items' fields the
		// shortcut leaves to the full walk.
		var items []any
		for _, name := range []string{"p", "q"} {
			if r.IntN(2) == 0 {
				items = append(items, map[string]any{"name": name, "v": probeScalar(r), "m": map[string]any{"x": probeScalar(r)}})
			}
		}
		if items != nil {
			m["l"] = items
		}
		if r.IntN(2) == 0 {
			m["s"] = []any{"x", int64(1)}[:1+r.IntN(2)]
		}
		if r.IntN(2) == 0 {
			m["at"] = map[string]any{"k": probeScalar(r)}
		}
	}
	return m
}

var probeSchema = func() *ownership.Schema {
	s, err := ownership.NewSchema(map[string]ownership.Strategy{
		".l":  ownership.Keyed("name"),
		".s":  ownership.AsSet(),
		".at": ownership.Atomic(),
	})
	if err != nil {
		panic(err)
	}
	return s
}()

// revalueProbe changes up to max scalar leaves outside lists of cfg: to
// other scalars, null, a map, a list or an empty map.
func revalueProbe(r *rand.Rand, cfg map[string]any, budget *int) map[string]any {
	out := make(map[string]any, len(cfg))
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := cfg[k]
		switch x := v.(type) {
		case map[string]any:
			out[k] = revalueProbe(r, x, budget)
			continue
		case []any:
			l := make([]any, len(x))
			for i, it := range x {
				if m, ok := it.(map[string]any); ok {
					name := m["name"]
					m = revalueProbe(r, m, budget)
					m["name"] = name // the key stays
					it = m
				}
				l[i] = it
			}
			out[k] = l
			continue
		}
		out[k] = v
		if *budget > 0 && r.IntN(3) == 0 {
			*budget--
			if r.IntN(5) == 0 {
				out[k] = probeValue(r, 2)
			} else {
				out[k] = probeScalar(r)
			}
		}
	}
	return out
}

func TestProbeReapplyShortcutAgreesWithFullWalk(t *testing.T) {
	managers := []string{"alpha", "beta", "gamma"}
	seeds := 3000
	if testing.Short() {
		seeds = 300
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 42))
		var live map[string]any
		var managed ownership.Managed
		lastCfg := map[string]map[string]any{}
		for step := 0; step < 12; step++ {
			mgr := managers[r.IntN(len(managers))]
			opts := []ownership.Option{ownership.WithSchema(probeSchema)}
			if r.IntN(4) == 0 {
				opts = append(opts, ownership.Force())
			}
			switch op := r.IntN(5); {
			case op < 2 || lastCfg[mgr] == nil:
				cfg := probeTree(r, 0)
				res, err := agree(t, live, cfg, mgr, managed, opts...)
				if err == nil {
					live, managed = res.Object, res.Managed
					lastCfg[mgr] = cfg
				}
			case op < 4:
				budget := r.IntN(5) + 1
				cfg := revalueProbe(r, lastCfg[mgr], &budget)
				res, err := agree(t, live, cfg, mgr, managed, opts...)
				if err == nil {
					live, managed = res.Object, res.Managed
					lastCfg[mgr] = cfg
				}
			default:
				next, _ := ownership.DeepCopy(live).(map[string]any)
				if next == nil {
					next = map[string]any{}
				}
				for k, v := range probeTree(r, 1) {
					if r.IntN(4) == 0 {
						delete(next, k)
					} else {
						next[k] = v
					}
				}
				res, err := ownership.Update(live, next, mgr, managed, ownership.WithSchema(probeSchema))
				if err != nil {
					t.Fatalf("seed %d: Update: %v", seed, err)
				}
				live, managed = res.Object, res.Managed
			}
		}
	}
}

// Apply keeps a uint64 above math.MaxInt64 as it is, and a re-apply of
// another such value changes the object.
func TestProbeApplyKeepsBigUint64(t *testing.T) {
	first, err := ownership.Apply(nil, map[string]any{"u": uint64(1<<63 + 1)}, "m", nil)
	if err != nil {
		t.Fatal(err)
	}
	if u, ok := first.Object["u"].(uint64); !ok || u != 1<<63+1 {
		t.Fatalf("stored %#v", first.Object["u"])
	}
	again, err := ownership.Apply(first.Object, map[string]any{"u": uint64(1<<63 + 2)}, "m", first.Managed)
	if err != nil {
		t.Fatal(err)
	}
	if !again.ObjectChanged {
		t.Fatalf("re-applying 1<<63+2 over 1<<63+1 changed nothing: %#v", again.Object)
	}
}
