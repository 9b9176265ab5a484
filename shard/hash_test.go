package shard_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/shard"
)

// A key's shard never changes between processes or versions: a change
// would move every key of every running fleet at once during a rollout.
func TestOfIsStable(t *testing.T) {
	require.Equal(t, 0, shard.Of("anything", 1))
	got := []int{shard.Of("", 256), shard.Of("default/web", 256), shard.Of("ns/obj-1", 256), shard.Of("ns/obj-2", 7)}
	require.Equal(t, []int{37, 187, 210, 2}, got)
}

// Every replica computes the same assignment from the same members,
// whatever order it lists them in.
func TestAssignIgnoresMemberOrder(t *testing.T) {
	a := shard.Assign([]string{"a", "b", "c"}, 64)
	b := shard.Assign([]string{"c", "a", "b", "a"}, 64)
	require.Equal(t, a, b)
	require.Equal(t, make([]string, 3), shard.Assign(nil, 3), "no members, no owners")
}

// A join moves about S/(N+1) shards (those the joiner now owns, and a few
// more as the caps shift), leaves every member within 10% of its fair share,
// and stays within the 1.2·S/N per change in at least 85% of member
// sets up to N=10 (S=256; 98% up to N=9). A leave is the same change
// backwards.
func TestAssignMovesFewShardsAndBalances(t *testing.T) {
	const S = 256
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 10; n++ {
		total, over, sets := 0, 0, 200
		for range sets {
			members := make([]string, n)
			for i := range members {
				members[i] = fmt.Sprintf("replica-%x", rng.Uint64())
			}
			joiner := fmt.Sprintf("replica-%x", rng.Uint64())
			before := shard.Assign(members, S)
			after := shard.Assign(append(members, joiner), S)
			moved := 0
			load := map[string]int{}
			for i := range S {
				if before[i] != after[i] {
					moved++
				}
				load[after[i]]++
			}
			require.Len(t, load, n+1)
			for m, l := range load {
				require.LessOrEqual(t, l, int(math.Ceil(S*1.1/float64(n+1))), "%s owns %d of %d shards among %d", m, l, S, n+1)
			}
			total += moved
			if float64(moved) > 1.2*S/float64(n) {
				over++
			}
		}
		mean := float64(total) / float64(sets)
		require.LessOrEqual(t, mean, 1.2*S/float64(n+1), "n=%d: mean moved %v", n, mean)
		require.LessOrEqual(t, over, sets*15/100, "n=%d: %d of %d joins moved more than 1.2·S/N", n, over, sets)
		t.Logf("N=%d→%d: mean %.1f shards moved (S/(N+1)=%.1f, 1.2·S/N=%.1f), %d/%d over 1.2·S/N", n, n+1, mean,
			float64(S)/float64(n+1), 1.2*S/float64(n), over, sets)
	}
}

func BenchmarkOf(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		shard.Of("namespace-a.some-object-name", 256)
	}
}
