package ownership

import "testing"

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
