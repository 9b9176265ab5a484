package ownership

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/jsonscan"
)

var fuzzSchema = mustSchema(map[string]Strategy{
	".items":   Keyed("name"),
	".m.items": Keyed("name"),
	".tags":    AsSet(),
	".m.tags":  AsSet(),
	".sel":     Atomic(),
})

// gen turns fuzz bytes into operations and trees over a small vocabulary,
// so that managers collide often.
type gen struct {
	data []byte
	i    int
	// nums, when set, replaces the integers 1 and 2 of scalar, and numTags
	// the items of tags (see FuzzOwnershipNumbers).
	nums, numTags []any
}

func (g *gen) next() int {
	if g.i >= len(g.data) {
		return 0
	}
	b := g.data[g.i]
	g.i++
	return int(b)
}

func (g *gen) done() bool { return g.i >= len(g.data) }

func (g *gen) scalar() any {
	switch k := g.next() % 7; k {
	case 0, 2:
		if g.nums != nil {
			return g.nums[g.next()%len(g.nums)]
		}
		return int64(k/2 + 1)
	case 1:
		return 1.0 // equal to int64(1)
	case 3:
		return "x"
	case 4:
		return "y"
	case 5:
		return true
	default:
		return nil // not applied
	}
}

func (g *gen) tree(depth int) map[string]any {
	m := map[string]any{}
	for n := g.next() % 5; n > 0; n-- {
		switch k := g.next() % 9; k {
		case 0, 1, 2:
			m[[]string{"a", "b", "c"}[k]] = g.scalar()
		case 3:
			if depth < 2 {
				m["m"] = g.tree(depth + 1)
			} else {
				m["m"] = g.scalar()
			}
		case 4:
			m["items"] = g.items()
		case 5:
			m["tags"] = g.tags()
		case 6:
			m["args"] = []any{g.scalar(), g.scalar()}
		case 7:
			m["sel"] = map[string]any{"k": g.scalar()}
		case 8:
			m["n"] = g.scalar() // sometimes a map elsewhere: type changes
			if g.next()%2 == 0 {
				m["n"] = map[string]any{"z": g.scalar()}
			}
		}
	}
	return m
}

func (g *gen) items() []any {
	var out []any
	for _, name := range []string{"p", "q", "r"} {
		if g.next()%2 == 0 {
			continue
		}
		it := map[string]any{"name": name}
		if g.next()%2 == 0 {
			it["v"] = g.scalar()
		}
		if g.next()%3 == 0 {
			it["w"] = map[string]any{"deep": g.scalar()}
		}
		out = append(out, it)
	}
	return out
}

func (g *gen) tags() []any {
	var out []any
	vocab := []any{"s", "t", int64(3)}
	if g.numTags != nil {
		vocab = g.numTags
	}
	for _, v := range vocab {
		if g.next()%2 == 1 {
			out = append(out, v)
		}
	}
	return out
}

// revalue returns a copy of config with some scalar values outside lists
// replaced (by other values, or null), as a controller re-applies its
// fields with new values.
func (g *gen) revalue(config map[string]any) map[string]any {
	out := make(map[string]any, len(config))
	for _, k := range sortedKeys(config) {
		switch v := config[k].(type) {
		case map[string]any:
			out[k] = g.revalue(v)
		case []any:
			out[k] = v
		default:
			out[k] = v
			if g.next()%2 == 0 {
				out[k] = g.scalar()
			}
		}
	}
	return out
}

// mutate returns a changed copy of live for an update.
func (g *gen) mutate(live map[string]any) map[string]any {
	next := DeepCopy(live).(map[string]any)
	if next == nil || g.next()%4 == 0 {
		return g.tree(0)
	}
	for n := g.next()%3 + 1; n > 0; n-- {
		keys := sortedKeys(next)
		if len(keys) > 0 && g.next()%3 == 0 {
			delete(next, keys[g.next()%len(keys)])
			continue
		}
		for k, v := range g.tree(0) {
			if v != nil {
				next[k] = v
			}
		}
	}
	return next
}

func snapshot(m Managed) []string {
	var out []string
	for _, e := range m {
		out = append(out, e.Manager+"/"+string(e.Operation)+"="+e.Set.Encode())
	}
	return out
}

func runOwnership(t *testing.T, data []byte) { runOwnershipOf(t, &gen{data: data}) }

func runOwnershipOf(t *testing.T, g *gen) {
	var live map[string]any
	var managed Managed
	managers := []string{"alpha", "beta", "gamma"}
	opt := WithSchema(fuzzSchema)
	for steps := 0; !g.done() && steps < 40; steps++ {
		mgr := managers[g.next()%3]
		beforeObj, beforeManaged := mustJSON(live), snapshot(managed)
		switch op := g.next() % 4; op {
		case 0, 1, 2:
			cfg := g.tree(0)
			cfgJSON := mustJSON(cfg)
			opts := []Option{opt}
			if op == 2 {
				opts = append(opts, Force())
			}
			checkNoopAgrees(t, live, cfg, mgr, managed)
			r, err := Apply(live, cfg, mgr, managed, opts...)
			require.Equal(t, beforeObj, mustJSON(live), "Apply modified live")
			require.Equal(t, beforeManaged, snapshot(managed), "Apply modified managed")
			require.Equal(t, cfgJSON, mustJSON(cfg), "Apply modified config")
			if err != nil {
				var ce *ConflictError
				require.True(t, errors.As(err, &ce), "unexpected error: %v", err)
				require.NotEqual(t, 2, op, "forced apply conflicted")
				require.NotEmpty(t, ce.Conflicts)
				continue
			}
			checkInvariants(t, r, fuzzSchema)
			if g.nums != nil {
				checkAppliedTexts(t, cfg, live, r.Object)
				r.Object = storedForm(t, r.Object)
			}
			require.Equal(t, []string(nil), r.Managed.Owners(nil), "the root is never owned")
			checkNoopAgrees(t, r.Object, cfg, mgr, r.Managed)
			checkNoopAgrees(t, r.Object, g.revalue(cfg), mgr, r.Managed)
			again, err := Apply(r.Object, cfg, mgr, r.Managed, opt)
			require.NoError(t, err, "re-applying the last config")
			require.False(t, again.Changed, "re-applying the last config changed something:\nconfig %s\nlive %s\nafter %s\n%v\n%v", mustJSON(cfg), mustJSON(r.Object), mustJSON(again.Object), snapshot(r.Managed), snapshot(again.Managed))
			live, managed = r.Object, r.Managed
		case 3:
			next := g.mutate(live)
			r, err := Update(live, next, mgr, managed, opt)
			require.NoError(t, err)
			require.Equal(t, beforeObj, mustJSON(live), "Update modified live")
			require.Equal(t, beforeManaged, snapshot(managed), "Update modified managed")
			checkInvariants(t, r, fuzzSchema)
			if g.nums != nil {
				require.Equal(t, mustJSON(next), mustJSON(r.Object), "Update writes the new object as it is")
				r.Object = storedForm(t, r.Object)
			}
			live, managed = r.Object, r.Managed
		}
		codec := NewCodec(live, fuzzSchema)
		if live != nil {
			fromJSON, err := NewCodecJSON([]byte(mustJSON(live)), fuzzSchema)
			require.NoError(t, err)
			requireSameCodec(t, codec, fromJSON, mustJSON(live))
		}
		for _, e := range managed {
			back, err := codec.Decode(codec.Encode(e.Set))
			require.NoError(t, err)
			require.True(t, back.Equal(e.Set), "codec round trip:\n%s\n%s\n%s\nobject %s", e.Set.Encode(), back.Encode(), codec.Encode(e.Set), mustJSON(live))
			plain, err := DecodeSet(e.Set.Encode())
			require.NoError(t, err)
			require.True(t, plain.Equal(e.Set), "plain round trip")
		}
	}
}

// FuzzOwnership runs random apply, force and update sequences by three
// managers and checks that nothing panics, a conflict changes nothing,
// re-applying the last config is a no-op, and every owned path exists.
func FuzzOwnership(f *testing.F) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		b := make([]byte, 64+r.IntN(400))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		f.Add(b)
	}
	f.Fuzz(runOwnership)
}

// FuzzOwnershipNumbers is FuzzOwnership over integers a float64 loses or
// respells (beyond int64, -0, 1e3, big literals) and values equal to them in
// another form, each step starting from the stored form of the last
// (encoded, then decoded as the store decodes it). Besides FuzzOwnership's
// checks: every applied value is stored as the config or the live object
// wrote it, an Update writes its object as it is, and the object's JSON
// decodes to a tree that encodes to the same text.
func FuzzOwnershipNumbers(f *testing.F) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 11))
		b := make([]byte, 64+r.IntN(400))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		runOwnershipOf(t, &gen{data: data, nums: edgeNumbers, numTags: []any{
			"s", uint64(1<<63 + 1), uint64(1<<63 + 2), json.Number("18446744073709551615"), json.Number("-0"), json.Number("1e3"),
		}})
	})
}

// edgeNumbers are integers a float64 loses or respells, and some equal to
// them in another form.
var edgeNumbers = []any{
	uint64(1<<63 + 1), uint64(1<<63 + 2), json.Number("9223372036854775809"), // = 1<<63+1
	uint64(math.MaxUint64), json.Number("18446744073709551616"), int64(math.MaxInt64),
	json.Number("-0"), math.Copysign(0, -1), int64(0),
	json.Number("1e3"), int64(1000), json.Number("1.0"), int64(1),
	float64(1 << 63), json.Number("9223372036854776000"), // = float64(1<<63), as written
	json.Number("123456789012345678901234567890"), int64(math.MinInt64),
}

// checkAppliedTexts requires each scalar cfg applied outside lists to be
// stored in after as the config or live (before the apply) wrote it, and
// equal to the config's.
func checkAppliedTexts(t *testing.T, cfg, live, after map[string]any) {
	t.Helper()
	for k, c := range cfg {
		a, ok := after[k]
		if !ok {
			continue // null, or an empty set
		}
		l := live[k]
		switch c := c.(type) {
		case map[string]any:
			am, _ := a.(map[string]any)
			lm, _ := l.(map[string]any)
			if am != nil {
				checkAppliedTexts(t, c, lm, am)
			}
		case []any, nil:
		default:
			require.True(t, scalarEqual(c, a), "applied %s=%s, stored %s", k, mustJSON(c), mustJSON(a))
			if mustJSON(a) != mustJSON(c) {
				require.Equal(t, mustJSON(l), mustJSON(a), "applied %s=%s over %s, stored %s", k, mustJSON(c), mustJSON(l), mustJSON(a))
			}
		}
	}
}

// storedForm is obj as the store reads it back: its JSON decoded by
// jsonscan.Decode, which must encode to the same text.
func storedForm(t *testing.T, obj map[string]any) map[string]any {
	t.Helper()
	if obj == nil {
		return nil
	}
	text := mustJSON(obj)
	v, err := jsonscan.Decode([]byte(text))
	require.NoError(t, err)
	require.Equal(t, text, mustJSON(v), "the stored object decodes to another text")
	return v.(map[string]any)
}
