package shard_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/shard"
)

// Rebalance computes, for every input, exactly the owners that the
// version building every (member, free shard) pair computed
// (refRebalance): replicas of different versions compute owners
// independently, so they must agree. The inputs are what a listing can
// hold: members repeated, "" (ignored), names that differ only at the end;
// holders that are members, "" or stale names no longer among them; fresh
// fleets, handovers half done and arbitrary mixes.
func TestRebalanceMatchesThePairwiseReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 50))
	pool := []string{"", "a", "b", "replica-1", "replica-2", "replica-10", "replica-11", "z", "zz", "node-\xff"}
	stale := []string{"gone", "replica-3", "old"}
	for c := range 4000 {
		n := rng.IntN(10)
		if c%200 == 0 {
			n = 20 + rng.IntN(40)
		}
		members := make([]string, n)
		for j := range members {
			if rng.IntN(4) == 0 {
				members[j] = pool[rng.IntN(len(pool))]
			} else {
				members[j] = fmt.Sprintf("m%d-%x", j, rng.Uint32()%64)
			}
		}
		S := rng.IntN(200)
		if c%100 == 0 {
			S = 1000 + rng.IntN(4000)
		}
		holders := make([]string, S)
		switch c % 3 {
		case 0: // fresh, or everything stale
			if rng.IntN(2) == 0 {
				for i := range holders {
					holders[i] = stale[rng.IntN(len(stale))]
				}
			}
		case 1: // any mix of members, "" and stale names
			for i := range holders {
				switch rng.IntN(4) {
				case 0:
				case 1:
					holders[i] = stale[rng.IntN(len(stale))]
				default:
					if n > 0 {
						holders[i] = members[rng.IntN(n)]
					}
				}
			}
		case 2: // a fleet's owners, then some members leave and some shards move
			holders = refRebalance(members, holders)
			if n > 0 {
				members = slices.Delete(slices.Clone(members), 0, rng.IntN(n))
			}
			members = append(members, fmt.Sprintf("joiner-%d", rng.IntN(3)))
			for i := range holders {
				if rng.IntN(5) == 0 {
					holders[i] = ""
				}
			}
		}
		want, got := refRebalance(members, holders), shard.Rebalance(members, holders)
		require.Len(t, got, S)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("case %d: members %q, %d shards: shard %d (held by %q) goes to %q, want %q",
					c, members, S, i, holders[i], got[i], want[i])
			}
		}
	}
}
