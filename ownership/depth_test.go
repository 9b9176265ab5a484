package ownership_test

// Trees too deep, or holding themselves, given to Apply, Update and
// NewCodec directly (trees from JSON never are): an error, or for NewCodec
// a codec that ends at MaxDepth, never a stack overflow, which no recover
// catches and which would end the whole process.

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/ownership"
)

// nestedMaps returns n maps, each the field "a" of the one before; the
// innermost holds "leaf": "x".
func nestedMaps(n int) map[string]any {
	m := map[string]any{"leaf": "x"}
	for range n - 1 {
		m = map[string]any{"a": m}
	}
	return m
}

// wideMaps is nestedMaps(n) with an empty map "_" beside every "a": no
// deeper, but a walk that does not uncount a map it leaves counts more.
func wideMaps(n int) map[string]any {
	m := map[string]any{"leaf": "x"}
	for range n - 1 {
		m = map[string]any{"a": m, "_": map[string]any{}} // "_" sorts before "a"
	}
	return m
}

// nestedLists returns a map whose field "a" holds n-1 lists, each the
// only item of the one before, the innermost holding "x": n maps and
// lists in all.
func nestedLists(n int) map[string]any {
	var v any = "x"
	for range n - 1 {
		v = []any{v}
	}
	return map[string]any{"a": v}
}

// leafPath is the path of nestedMaps(n)'s leaf.
func leafPath(n int) diff.Path {
	p := make(diff.Path, 0, n)
	for range n - 1 {
		p = append(p, diff.Element{Kind: diff.FieldElem, Name: "a"})
	}
	return append(p, diff.Element{Kind: diff.FieldElem, Name: "leaf"})
}

// mapsWithSet returns n-1 nested maps as nestedMaps does, the innermost
// also holding the set "l" (n maps and lists in all), and their schema.
func mapsWithSet(t *testing.T, n int) (map[string]any, ownership.Option) {
	m := nestedMaps(n - 1)
	inner := m
	for range n - 2 {
		inner = inner["a"].(map[string]any)
	}
	inner["l"] = []any{"x", "y"}
	sch, err := ownership.NewSchema(map[string]ownership.Strategy{strings.Repeat(".a", n-2) + ".l": ownership.AsSet()})
	require.NoError(t, err)
	return m, ownership.WithSchema(sch)
}

// mapsWithKeyed returns n-2 nested maps as nestedMaps does, the
// innermost also holding the keyed list "items" with one item (n maps and
// lists in all), and their schema.
func mapsWithKeyed(t *testing.T, n int) (map[string]any, ownership.Option) {
	m := nestedMaps(n - 2)
	inner := m
	for range n - 3 {
		inner = inner["a"].(map[string]any)
	}
	inner["items"] = []any{map[string]any{"name": "x"}}
	sch, err := ownership.NewSchema(map[string]ownership.Strategy{strings.Repeat(".a", n-3) + ".items": ownership.Keyed("name")})
	require.NoError(t, err)
	return m, ownership.WithSchema(sch)
}

// selfMap returns a map whose field "self" is the map itself.
// cycleCases returns the schemas the cycle tests apply with (.items a
// keyed list, .m an atomic map) and a keyed item that holds itself.
func cycleCases(t *testing.T) (keyed, atomic *ownership.Schema, item map[string]any) {
	t.Helper()
	keyed, err := ownership.NewSchema(map[string]ownership.Strategy{".items": ownership.Keyed("name")})
	require.NoError(t, err)
	atomic, err = ownership.NewSchema(map[string]ownership.Strategy{".m": ownership.Atomic()})
	require.NoError(t, err)
	item = map[string]any{"name": "x"}
	item["self"] = item
	return keyed, atomic, item
}

func selfMap() map[string]any {
	m := map[string]any{"k": "v"}
	m["self"] = m
	return m
}

// selfList returns a list whose only item is the list itself.
func selfList() []any {
	l := []any{nil}
	l[0] = l
	return l
}

// mapListCycle returns a map whose field "l" is a list holding the map.
func mapListCycle() map[string]any {
	m := map[string]any{"k": "v"}
	m["l"] = []any{m}
	return m
}

// requireTooDeep checks err is the error for a tree too deep, naming the
// path where it tripped by its start (want).
func requireTooDeep(t *testing.T, err error, want string) {
	t.Helper()
	require.Error(t, err)
	require.True(t, errors.Is(err, ownership.ErrTooDeep), "%v", err)
	require.Contains(t, err.Error(), "ownership: "+want)
	require.Contains(t, err.Error(), "10000")
}

// JSON carries MaxDepth maps and lists and no more: the trees of the
// tests below that must be accepted are ones encoding/json reads.
func TestMaxDepthIsWhatJSONCarries(t *testing.T) {
	for _, c := range []struct {
		name string
		tree func(int) map[string]any
	}{{"maps", nestedMaps}, {"lists", nestedLists}} {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.tree(ownership.MaxDepth))
			require.NoError(t, err)
			var v any
			require.NoError(t, json.Unmarshal(b, &v))
			b, err = json.Marshal(c.tree(ownership.MaxDepth + 1))
			require.NoError(t, err)
			require.ErrorContains(t, json.Unmarshal(b, &v), "exceeded max depth")
		})
	}
}

func TestApplyRefusesATreeThatHoldsItself(t *testing.T) {
	keyed, atomic, item := cycleCases(t)
	before := ownership.Managed{{Manager: "other", Operation: ownership.OpApply, Set: ownership.MustNewSet(diff.MustParsePath(".k"))}}
	beforeText := before[0].Set.Encode()
	for _, c := range []struct {
		name   string
		config map[string]any
		opts   []ownership.Option
		want   string // the start of the path where it trips
	}{
		{"a map holding itself", selfMap(), nil, ".self.self.self"},
		{"a list holding itself", map[string]any{"l": selfList()}, nil, ".l[0][0][0]"},
		{"a map holding a list holding it", mapListCycle(), nil, ".l[0].l[0]"},
		{"a keyed item holding itself", map[string]any{"items": []any{item}}, []ownership.Option{ownership.WithSchema(keyed)}, `.items[name="x"].self.self`},
		{"an atomic map holding itself", map[string]any{"m": selfMap()}, []ownership.Option{ownership.WithSchema(atomic)}, ".m.self.self.self"},
	} {
		t.Run(c.name, func(t *testing.T) {
			live := map[string]any{"k": "v"}
			r, err := ownership.Apply(live, c.config, "m", before, c.opts...)
			requireTooDeep(t, err, c.want)
			require.Zero(t, r, "nothing is applied")
			require.Equal(t, map[string]any{"k": "v"}, live)
			require.Len(t, before, 1)
			require.Equal(t, beforeText, before[0].Set.Encode())

			// The same tree as the live object, applied again.
			r, err = ownership.Apply(c.config, c.config, "m", nil, c.opts...)
			requireTooDeep(t, err, c.want)
			require.Zero(t, r)
		})
	}
}

func TestApplyRefusesATreeDeeperThanMaxDepth(t *testing.T) {
	for _, c := range []struct {
		name string
		tree func(int) map[string]any
		want string
	}{
		{"maps", nestedMaps, ".a.a.a.a.a.a.a.a ...(9984 more elements)... .a.a.a.a.a.a.a.a"},
		{"lists (atomic)", nestedLists, ".a[0][0][0][0][0][0][0] ...(9984 more elements)... [0][0][0][0][0][0][0][0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ownership.Apply(nil, c.tree(ownership.MaxDepth+1), "m", nil)
			requireTooDeep(t, err, c.want)

			// One level less: applied, and re-applied as a no-op.
			cfg := c.tree(ownership.MaxDepth)
			r, err := ownership.Apply(nil, cfg, "m", nil)
			require.NoError(t, err)
			require.True(t, r.Changed)
			require.True(t, reflect.DeepEqual(cfg, r.Object))
			again, err := ownership.Apply(r.Object, c.tree(ownership.MaxDepth), "m", r.Managed)
			require.NoError(t, err)
			require.False(t, again.Changed)
			require.True(t, reflect.DeepEqual(r.Object, again.Object))
		})
	}
	r, err := ownership.Apply(nil, nestedMaps(ownership.MaxDepth), "m", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"m"}, r.Managed.Owners(leafPath(ownership.MaxDepth)))
}

// A set is one of the maps and lists counted: as the 10,001st it is
// refused, as the 10,000th applied and re-applied.
func TestApplyCountsASetAtTheBottom(t *testing.T) {
	cfg, sch := mapsWithSet(t, ownership.MaxDepth+1)
	_, err := ownership.Apply(nil, cfg, "m", nil, sch)
	requireTooDeep(t, err, ".a.a.a.a.a.a.a.a ...(9984 more elements)... .a.a.a.a.a.a.a.l")

	cfg, sch = mapsWithSet(t, ownership.MaxDepth)
	r, err := ownership.Apply(nil, cfg, "m", nil, sch)
	require.NoError(t, err)
	require.True(t, reflect.DeepEqual(cfg, r.Object))
	cfg, _ = mapsWithSet(t, ownership.MaxDepth)
	again, err := ownership.Apply(r.Object, cfg, "m", r.Managed, sch)
	require.NoError(t, err)
	require.False(t, again.Changed)
}

// The re-apply of a config its manager's last set already holds whole
// (its no-op path) refuses too deep a tree as a changing apply does: with
// a set built by hand as deep as the tree, and with an atomic value equal
// to live's that holds itself.
func TestReapplyRefusesATreeTooDeep(t *testing.T) {
	n := ownership.MaxDepth + 1
	deep := nestedMaps(n)
	managed := ownership.Managed{{Manager: "m", Operation: ownership.OpApply, Set: ownership.MustNewSet(leafPath(n))}}
	r, err := ownership.Apply(deep, nestedMaps(n), "m", managed)
	requireTooDeep(t, err, ".a.a.a")
	require.Zero(t, r)

	// An atomic value too deep, equal to live's, the manager owning it.
	managed = ownership.Managed{{Manager: "m", Operation: ownership.OpApply, Set: ownership.MustNewSet(diff.MustParsePath(".a"))}}
	r, err = ownership.Apply(nestedLists(n), nestedLists(n), "m", managed)
	requireTooDeep(t, err, ".a[0][0]")
	require.Zero(t, r)

	// A set too deep, in live as in config, the manager owning it all.
	cfg, sch := mapsWithSet(t, n)
	last := leafPath(n - 1)
	last = append(last[:len(last)-1:len(last)-1], diff.Element{Kind: diff.FieldElem, Name: "l"})
	x, y := last.Value("x"), last.Value("y")
	managed = ownership.Managed{{Manager: "m", Operation: ownership.OpApply, Set: ownership.MustNewSet(leafPath(n-1), x, y)}}
	live, _ := mapsWithSet(t, n)
	r, err = ownership.Apply(live, cfg, "m", managed, sch)
	requireTooDeep(t, err, ".a.a.a")
	require.Zero(t, r)

	// A keyed list's item too deep, likewise.
	cfg, sch = mapsWithKeyed(t, n)
	items := leafPath(n - 2)
	items = append(items[:len(items)-1:len(items)-1], diff.Element{Kind: diff.FieldElem, Name: "items"})
	it := items.Key(diff.KeyField{Name: "name", Value: "x"})
	managed = ownership.Managed{{Manager: "m", Operation: ownership.OpApply, Set: ownership.MustNewSet(leafPath(n-2), it, it.Field("name"))}}
	live, _ = mapsWithKeyed(t, n)
	r, err = ownership.Apply(live, cfg, "m", managed, sch)
	requireTooDeep(t, err, ".a.a.a")
	require.Zero(t, r)
	cfg, sch = mapsWithKeyed(t, n-1)
	first, err := ownership.Apply(nil, cfg, "m", nil, sch)
	require.NoError(t, err)
	cfg, _ = mapsWithKeyed(t, n-1)
	r, err = ownership.Apply(first.Object, cfg, "m", first.Managed, sch)
	require.NoError(t, err)
	require.False(t, r.Changed)

	self := selfList()
	live = map[string]any{"l": self, "k": "v"}
	managed = ownership.Managed{{Manager: "m", Operation: ownership.OpApply, Set: ownership.MustNewSet(diff.MustParsePath(".l"), diff.MustParsePath(".k"))}}
	r, err = ownership.Apply(live, map[string]any{"l": self, "k": "v"}, "m", managed)
	requireTooDeep(t, err, ".l[0][0][0]")
	require.Zero(t, r)
}

// Pruning reads the live object where the last applied set leads, and
// then whether what it leaves of a map holds nothing but maps: a map of
// live that holds itself there is kept, as any map holding a value is.
func TestApplyPrunesBesideALiveMapThatHoldsItself(t *testing.T) {
	first, err := ownership.Apply(nil, map[string]any{"a": map[string]any{"b": "x"}}, "m", nil)
	require.NoError(t, err)
	loop := map[string]any{}
	loop["loop"] = loop
	live := map[string]any{"a": map[string]any{"b": "x", "c": loop}}
	r, err := ownership.Apply(live, map[string]any{"z": "y"}, "m", first.Managed)
	require.NoError(t, err)
	a := r.Object["a"].(map[string]any)
	require.NotContains(t, a, "b", "pruned")
	require.Contains(t, a, "c", "kept")
	require.Equal(t, "y", r.Object["z"])
}

func TestUpdateRefusesATreeThatHoldsItself(t *testing.T) {
	keyed, atomic, item := cycleCases(t)
	before := ownership.Managed{{Manager: "other", Operation: ownership.OpUpdate, Set: ownership.MustNewSet(diff.MustParsePath(".k"))}}
	beforeText := before[0].Set.Encode()
	for _, c := range []struct {
		name string
		new  map[string]any
		opts []ownership.Option
		want string
	}{
		{"a map holding itself", selfMap(), nil, ".self.self.self"},
		{"a list holding itself", map[string]any{"l": selfList()}, nil, ".l[0][0][0]"},
		{"a map holding a list holding it", mapListCycle(), nil, ".l[0].l[0]"},
		{"a keyed item holding itself", map[string]any{"items": []any{item}}, []ownership.Option{ownership.WithSchema(keyed)}, `.items[name="x"].self.self`},
		{"an atomic map holding itself", map[string]any{"m": selfMap()}, []ownership.Option{ownership.WithSchema(atomic)}, ".m.self.self.self"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A create, a change from a tree without it, and the same tree
			// as old and new.
			for _, old := range []map[string]any{nil, {"k": "v", "l": []any{"y"}, "self": "y", "items": []any{}, "m": map[string]any{}}, c.new} {
				r, err := ownership.Update(old, c.new, "m", before, c.opts...)
				requireTooDeep(t, err, c.want)
				require.Zero(t, r, "nothing is recorded")
				require.Len(t, before, 1)
				require.Equal(t, beforeText, before[0].Set.Encode())
			}
		})
	}
}

func TestUpdateRefusesATreeDeeperThanMaxDepth(t *testing.T) {
	for _, c := range []struct {
		name string
		tree func(int) map[string]any
		want string
	}{
		{"maps", nestedMaps, ".a.a.a.a.a.a.a.a ...(9984 more elements)... .a.a.a.a.a.a.a.a"},
		{"lists (atomic)", nestedLists, ".a[0][0][0][0][0][0][0] ...(9984 more elements)... [0][0][0][0][0][0][0][0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, old := range []map[string]any{nil, {"b": "y"}, c.tree(ownership.MaxDepth + 1)} {
				_, err := ownership.Update(old, c.tree(ownership.MaxDepth+1), "m", nil)
				requireTooDeep(t, err, c.want)
			}
			r, err := ownership.Update(nil, c.tree(ownership.MaxDepth), "m", nil)
			require.NoError(t, err)
			require.True(t, r.Changed)
			again, err := ownership.Update(r.Object, c.tree(ownership.MaxDepth), "m", r.Managed)
			require.NoError(t, err)
			require.False(t, again.Changed)
		})
	}
	r, err := ownership.Update(nil, nestedMaps(ownership.MaxDepth), "m", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"m"}, r.Managed.Owners(leafPath(ownership.MaxDepth)))

	// Maps beside the path count only while the walk is in them.
	for _, old := range []map[string]any{nil, wideMaps(ownership.MaxDepth)} {
		_, err := ownership.Update(old, wideMaps(ownership.MaxDepth), "m", nil)
		require.NoError(t, err)
	}
}

func TestUpdateCountsASetAtTheBottom(t *testing.T) {
	for _, n := range []int{ownership.MaxDepth + 1, ownership.MaxDepth} {
		newTree, sch := mapsWithSet(t, n)
		for _, old := range []map[string]any{nil, nestedMaps(n - 1)} {
			r, err := ownership.Update(old, newTree, "m", nil, sch)
			if n > ownership.MaxDepth {
				requireTooDeep(t, err, ".a.a.a.a.a.a.a.a ...(9984 more elements)... .a.a.a.a.a.a.a.l")
				continue
			}
			require.NoError(t, err)
			require.True(t, r.Changed)
		}
		if n > ownership.MaxDepth {
			old, _ := mapsWithSet(t, n)
			_, err := ownership.Update(old, newTree, "m", nil, sch)
			requireTooDeep(t, err, ".a.a.a")
		}
	}
}

// NewCodec cannot return an error: the codec of a tree that holds itself
// ends at MaxDepth, and a tree JSON carries has every node.
func TestNewCodecOfATreeTooDeep(t *testing.T) {
	keyed, err := ownership.NewSchema(map[string]ownership.Strategy{".l": ownership.Keyed("k")})
	require.NoError(t, err)
	for name, tree := range map[string]map[string]any{
		"a map holding itself":       selfMap(),
		"a map holding a keyed list": mapListCycle(),
		"maps too deep":              nestedMaps(ownership.MaxDepth + 1),
	} {
		t.Run(name, func(t *testing.T) {
			c := ownership.NewCodec(tree, keyed)
			s := ownership.MustNewSet(diff.MustParsePath(".k"))
			got, err := c.Decode(c.Encode(s))
			require.NoError(t, err)
			require.True(t, s.Equal(got))
		})
	}

	r, err := ownership.Apply(nil, wideMaps(ownership.MaxDepth), "m", nil)
	require.NoError(t, err)
	c := ownership.NewCodec(r.Object, nil)
	text := c.Encode(r.Managed[0].Set)
	require.False(t, strings.Contains(text, "|"), "every path is a node of the codec's object")
	got, err := c.Decode(text)
	require.NoError(t, err)
	require.True(t, r.Managed[0].Set.Equal(got))
}
