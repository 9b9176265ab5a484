package shard_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
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

// loads returns how many shards each owner owns.
func loads(owners []string) map[string]int {
	l := map[string]int{}
	for _, o := range owners {
		l[o]++
	}
	return l
}

func movedBetween(before, after []string) (moved int) {
	for i := range before {
		if before[i] != after[i] {
			moved++
		}
	}
	return moved
}

// requireBalanced requires every shard owned by one of members, each
// member owning floor(S/N) or ceil(S/N) shards.
func requireBalanced(t *testing.T, members, owners []string) {
	t.Helper()
	S, n := len(owners), len(members)
	l := loads(owners)
	require.Len(t, l, n, "every member owns shards, nobody else does: %v", l)
	for _, m := range members {
		require.GreaterOrEqual(t, l[m], S/n, "%s owns %d of %d shards among %d", m, l[m], S, n)
		require.LessOrEqual(t, l[m], (S+n-1)/n, "%s owns %d of %d shards among %d", m, l[m], S, n)
	}
}

// For every fleet size from 1 to 32 replicas (S=256), grown one join at a
// time as a fleet is: a join moves only the shards the joiner gets, at most
// ceil(S/(N+1)), within the 1.2·S/N; a leave moves only the
// leaver's; every member owns its share within one shard; and the owners
// computed from a handover half done (some shards released, some taken)
// are the handover's target, so replicas acting on listings taken at
// different moments of one handover agree on where it goes.
func TestRebalanceMovesOnlyWhatAJoinOrLeaveMust(t *testing.T) {
	const S = 256
	rng := rand.New(rand.NewPCG(1, 2))
	var members []string
	owners := make([]string, S)
	for n := 1; n <= 32; n++ {
		members = append(members, fmt.Sprintf("replica-%x", rng.Uint64()))
		before := owners
		owners = shard.Rebalance(members, before)
		joiner := members[n-1]
		moved := movedBetween(before, owners)
		requireBalanced(t, members, owners)
		require.Equal(t, loads(owners)[joiner], moved, "N=%d→%d: only the joiner's shards move", n-1, n)
		if n > 1 {
			require.LessOrEqual(t, float64(moved), 1.2*S/float64(n-1), "N=%d→%d", n-1, n)
		}
		require.Equal(t, owners, shard.Rebalance(members, owners), "N=%d: the owners, once held, stay", n)
		requireHalfDoneAgrees(t, rng, members, before, owners)

		// A leave, from this fleet: only the leaver's shards move.
		leaver := members[rng.IntN(n)]
		rest := slices.DeleteFunc(slices.Clone(members), func(m string) bool { return m == leaver })
		if len(rest) > 0 {
			left := shard.Rebalance(rest, owners)
			requireBalanced(t, rest, left)
			require.Equal(t, loads(owners)[leaver], movedBetween(owners, left), "N=%d→%d: only the leaver's shards move", n, n-1)
			gone := slices.Clone(owners) // or it crashed: its shards are free
			for i, o := range gone {
				if o == leaver {
					gone[i] = ""
				}
			}
			requireHalfDoneAgrees(t, rng, rest, gone, left)
		}
	}
}

// requireHalfDoneAgrees requires that every state between from and to
// (each moving shard released, taken, or not yet moved) leads to to.
func requireHalfDoneAgrees(t *testing.T, rng *rand.Rand, members, from, to []string) {
	t.Helper()
	for range 20 {
		mid := slices.Clone(from)
		for i := range mid {
			if from[i] != to[i] {
				switch rng.IntN(3) {
				case 0:
					mid[i] = ""
				case 1:
					mid[i] = to[i]
				}
			}
		}
		require.Equal(t, to, shard.Rebalance(members, mid), "N=%d: a half-done handover leads where it began to", len(members))
	}
}

func BenchmarkOf(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		shard.Of("namespace-a.some-object-name", 256)
	}
}

// Misuse: a shard count below 1 is no panic. Of counts it as one shard
// (every key is shard 0), and Assign below 0 as none.
func TestOfAndAssignTakeAnyShardCount(t *testing.T) {
	for _, n := range []int{0, -1, -256} {
		require.Equal(t, 0, shard.Of("ns/obj-1", n), "Of(key, %d)", n)
		require.Empty(t, shard.Assign([]string{"a", "b"}, n), "Assign(members, %d)", n)
	}
}

// Rebalance's cost for a fleet's first listing at the largest shard count
// the issue met: 65,536 shards, 100 fresh members, none held.
func BenchmarkRebalanceFresh65536x100(b *testing.B) {
	members := make([]string, 100)
	for j := range members {
		members[j] = fmt.Sprintf("replica-%03d", j)
	}
	holders := make([]string, 65536)
	b.ReportAllocs()
	for b.Loop() {
		shard.Rebalance(members, holders)
	}
}

// Rebalance's cost for a steadier fleet: 1,024 shards among 10 members,
// half of them held (by the first 5 members, in turn), so the rest are free.
func BenchmarkRebalanceHalfHeld1024x10(b *testing.B) {
	members := make([]string, 10)
	for j := range members {
		members[j] = fmt.Sprintf("replica-%03d", j)
	}
	holders := make([]string, 1024)
	for i := 0; i < len(holders); i += 2 {
		holders[i] = members[i/2%5]
	}
	b.ReportAllocs()
	for b.Loop() {
		shard.Rebalance(members, holders)
	}
}
