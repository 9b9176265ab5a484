package ownership

import (
	"runtime"
	"testing"

	"github.com/steady-go/steady/internal/race"
)

// Update's walk keeps its two builders between calls: a typed store's
// status write compares the whole object, and growing both from empty at
// every write was about a ninth of what the fleet example allocated at
// 20,000 groups. What is left is what the result holds (the two frozen
// sets, the new managed entries) and the set operations on them.
func TestUpdateReusesItsWalksScratch(t *testing.T) {
	first := applyOK(t, nil, podTree(t), "first", nil, WithSchema(podSchema))
	next := podTree(t)
	next["spec"].(map[string]any)["nodeName"] = "node-18"
	opt := WithSchema(podSchema)
	update := func() {
		if _, err := Update(first.Object, next, "editor", first.Managed, opt); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(50, update)
	t.Logf("%.0f allocations per Update", allocs)
	if allocs > 80 { // 71 without the race detector, whose sync.Pool drops a share of what it is given
		t.Errorf("%.0f allocations per Update, want at most 80 (92 when the walk was built afresh)", allocs)
	}
}

// Apply's walk takes its stacks from a pool and sizes the first applier's
// set small: a controller's first apply of one status field, the write of
// each pass of a controller over more objects than updates, allocated 5.2
// KB and 9 times when the walk took fresh stacks and a 64-node set each
// time; what is left is the result (the set, the record, the object's
// copied maps).
func TestApplyReusesItsWalksScratch(t *testing.T) {
	if race.Enabled {
		t.Skip("counts allocations (the race detector's sync.Pool drops a share of what it is given)")
	}
	sch := mustSchema(map[string]Strategy{".conditions": Keyed("type")})
	live := map[string]any{"status": map[string]any{"readyReplicas": int64(0)}}
	cfg := map[string]any{"status": map[string]any{"readyReplicas": int64(1)}}
	apply := func() {
		if _, err := Apply(live, cfg, "ctrl", nil, WithSchema(sch)); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(100, apply)
	const runs = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		apply()
	}
	runtime.ReadMemStats(&after)
	bytes := (after.TotalAlloc - before.TotalAlloc) / runs
	t.Logf("%d B and %.0f allocations per Apply", bytes, allocs)
	if allocs > 8 || bytes > 1536 {
		t.Errorf("%d B and %.0f allocations per Apply, want at most 1.5 KB and 8 (5.2 KB and 9 when the walk was built afresh)", bytes, allocs)
	}
}
