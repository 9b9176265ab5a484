package bench

import (
	"strconv"
	"testing"
)

// TestEventReplicasWidth: the replica count BenchmarkEventToReconcile
// writes keeps its width at any op number (split.sh's differences compare
// ops N to 2N with 2N to 3N), and each op changes its object's count.
func TestEventReplicasWidth(t *testing.T) {
	for i := range 200_000 {
		r := eventReplicas(i)
		if len(strconv.Itoa(r)) != 5 {
			t.Fatalf("op %d writes %d replicas: not five digits", i, r)
		}
		if r <= eventPriorUpdates {
			t.Fatalf("op %d writes %d replicas, a count the set-up wrote", i, r)
		}
		if i >= eventObjects && r == eventReplicas(i-eventObjects) {
			t.Fatalf("op %d writes %d replicas, as its object's previous op did", i, r)
		}
	}
}
