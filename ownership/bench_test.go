package ownership

import (
	"maps"
	"slices"
	"testing"
)

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

// secondConfig is the Pod as a second manager applies it: every field with
// the first manager's value (now shared), plus new labels, annotations and
// one new env var in each container.
func secondConfig(t testing.TB) map[string]any {
	c := podTree(t)
	md := c["metadata"].(map[string]any)
	md["labels"].(map[string]any)["owner"] = "second"
	md["annotations"].(map[string]any)["second/seen"] = "yes"
	for _, it := range c["spec"].(map[string]any)["containers"].([]any) {
		ct := it.(map[string]any)
		ct["env"] = append(ct["env"].([]any), map[string]any{"name": "SECOND", "value": "1"})
	}
	return c
}

func countLeaves(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := 0
		for _, e := range x {
			n += countLeaves(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range x {
			n += countLeaves(e)
		}
		return n
	}
	return 1
}

// BenchmarkApplySecondManager: a second manager applies a Pod-sized config
// (about 100 leaves) over a Pod the first manager applied. Target: ≤ 30µs
// and ≤ 200 allocs.
func BenchmarkApplySecondManager(b *testing.B) {
	first := applyOK(b, nil, podTree(b), "first", nil, WithSchema(podSchema))
	cfg := secondConfig(b)
	b.ReportMetric(float64(countLeaves(cfg)), "leaves")
	opt := WithSchema(podSchema)
	b.ReportAllocs()
	for b.Loop() {
		r, err := Apply(first.Object, cfg, "second", first.Managed, opt)
		if err != nil || !r.ObjectChanged {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyNoop: the first manager re-applies its config. Target: ≤ 10µs.
func BenchmarkApplyNoop(b *testing.B) {
	cfg := podTree(b)
	first := applyOK(b, nil, cfg, "first", nil, WithSchema(podSchema))
	opt := WithSchema(podSchema)
	b.ReportAllocs()
	for b.Loop() {
		r, err := Apply(first.Object, cfg, "first", first.Managed, opt)
		if err != nil || r.Changed {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyOwnFieldChanged: a controller re-applies the one status
// field it owns with a new value, beside a field and a condition other
// managers own, as a Loop's reconciler does on every pass (the fast path
// of applyChanges). Target: ≤ 5 allocs (copies of the object's two maps
// on the path, two each, and of the record).
func BenchmarkApplyOwnFieldChanged(b *testing.B) {
	sch := mustSchema(map[string]Strategy{".conditions": Keyed("type")})
	live := map[string]any{
		"status":     map[string]any{"readyReplicas": int64(1), "observed": int64(3)},
		"conditions": []any{map[string]any{"type": "Reconciling", "status": "False", "reason": "Reconciled"}},
	}
	loop := applyOK(b, live, map[string]any{"conditions": live["conditions"]}, "loop", nil, WithSchema(sch))
	other := applyOK(b, loop.Object, map[string]any{"status": map[string]any{"observed": int64(3)}}, "other", loop.Managed, WithSchema(sch))
	ctrl := applyOK(b, other.Object, map[string]any{"status": map[string]any{"readyReplicas": int64(1)}}, "ctrl", other.Managed, WithSchema(sch))
	cfgs := [2]map[string]any{
		{"status": map[string]any{"readyReplicas": int64(2)}},
		{"status": map[string]any{"readyReplicas": int64(3)}},
	}
	opt := WithSchema(sch)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r, err := Apply(ctrl.Object, cfgs[i%2], "ctrl", ctrl.Managed, opt)
		if err != nil || !r.ObjectChanged {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkApplyFirstStatusField: a controller's first apply of its one
// status field, on an object whose status nobody owns yet, as its first
// reconcile of each object writes (every pass of a controller over more
// objects than updates is one). Target: ≤ 1.5 KB (5.2 KB while the walk
// took fresh stacks and a 64-node set each time).
func BenchmarkApplyFirstStatusField(b *testing.B) {
	sch := mustSchema(map[string]Strategy{".conditions": Keyed("type")})
	live := map[string]any{"status": map[string]any{"readyReplicas": int64(0)}}
	cfg := map[string]any{"status": map[string]any{"readyReplicas": int64(1)}}
	opt := WithSchema(sch)
	b.ReportAllocs()
	for b.Loop() {
		r, err := Apply(live, cfg, "ctrl", nil, opt)
		if err != nil || !r.ObjectChanged {
			b.Fatal(err)
		}
	}
}

// threeManagers applies the Pod split leaf by leaf among three managers.
func threeManagers(t testing.TB) Result {
	var r Result
	for i, cfg := range splitLeaves(podTree(t), podSchema.top(), 3) {
		r = applyOK(t, r.Object, cfg, []string{"a", "b", "c"}[i], r.Managed, WithSchema(podSchema))
	}
	return r
}

func encodedSize(c *Codec, m Managed) int {
	n := 0
	for _, e := range m {
		n += len(c.Encode(e.Set))
	}
	return n
}

// BenchmarkEncodeThreeManagers builds the Pod's Codec and encodes the sets of three managers owning
// interleaved fields of a Pod, and reports their total size as a percentage
// of the Pod's JSON size. Target: ≤ 35%.
func BenchmarkEncodeThreeManagers(b *testing.B) {
	r := threeManagers(b)
	b.ReportAllocs()
	for b.Loop() {
		c := NewCodec(r.Object, podSchema)
		for _, e := range r.Managed {
			_ = c.Encode(e.Set)
		}
	}
	c := NewCodec(r.Object, podSchema)
	b.ReportMetric(100*float64(encodedSize(c, r.Managed))/float64(podJSONSize(b)), "%-of-json")
}

// BenchmarkDecodeThreeManagers builds the Pod's Codec and decodes the three
// encoded sets, as a store reading the object does.
func BenchmarkDecodeThreeManagers(b *testing.B) {
	r := threeManagers(b)
	c := NewCodec(r.Object, podSchema)
	var enc []string
	for _, e := range r.Managed {
		enc = append(enc, c.Encode(e.Set))
	}
	b.ReportAllocs()
	for b.Loop() {
		c := NewCodec(r.Object, podSchema)
		for _, s := range enc {
			if _, err := c.Decode(s); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkUpdatePod: a non-apply update changing two fields of the Pod.
func BenchmarkUpdatePod(b *testing.B) {
	first := applyOK(b, nil, podTree(b), "first", nil, WithSchema(podSchema))
	next := podTree(b)
	next["spec"].(map[string]any)["nodeName"] = "node-18"
	next["metadata"].(map[string]any)["labels"].(map[string]any)["team"] = "core"
	opt := WithSchema(podSchema)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Update(first.Object, next, "editor", first.Managed, opt); err != nil {
			b.Fatal(err)
		}
	}
}
