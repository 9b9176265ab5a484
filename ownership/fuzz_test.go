package ownership

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
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
	switch g.next() % 7 {
	case 0:
		return int64(1)
	case 1:
		return 1.0 // equal to int64(1)
	case 2:
		return int64(2)
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
	for _, v := range []any{"s", "t", int64(3)} {
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

func runOwnership(t *testing.T, data []byte) {
	g := &gen{data: data}
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
			checkFirstAgrees(t, live, cfg, mgr, managed, fuzzSchema)
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
