package shard

import (
	"cmp"
	"hash/fnv"
	"slices"
	"strconv"
)

// DefaultShards is the number of shards of a Sharder without WithShards.
const DefaultShards = 256

// Of returns key's shard among shards: FNV-1a 64 of key, modulo shards.
// It is stable across processes and versions: changing it would move
// every key. shards below 1 counts as one shard, so every key is shard 0.
func Of(key string, shards int) int {
	if shards < 1 {
		return 0
	}
	// FNV-1a 64, inline: no allocation on the Loop's hot path.
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	return int(h % uint64(shards))
}

// score is member's rendezvous weight for shard: FNV-1a 64 of the member and
// the shard, finished with a mixer (splitmix64's) so that members whose names
// differ only at the end still get independent weights.
func score(member string, shard int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(member))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, int64(shard), 10))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Assign returns the owner of each of shards shards among members when
// nobody holds any: Rebalance(members, make([]string, shards)). shards
// below 0 counts as none.
func Assign(members []string, shards int) []string {
	return Rebalance(members, make([]string, max(shards, 0)))
}

// Rebalance returns the owner of each shard among members, given who holds
// each now: holders[i] is shard i's live holder, or "" (a holder that is
// not among members counts as ""). An empty name in members is ignored. len(holders) is the number of shards S.
//
// Each member's share is floor(S/N) or ceil(S/N) shards: S mod N members
// get one more, first those that hold more than floor(S/N) now, then by
// name. A member keeps the
// shards it holds up to its share, those it scores highest first (the
// rendezvous score of the pair); the others and the free shards go, in
// order of decreasing score, to the members below their share. So a join
// moves only the shards the joiner gets (at most ceil(S/(N+1))), a leave
// only the leaver's, every member owns its share within one shard, and
// every replica that sees the same members and holders, in any order,
// computes the same owners; once the shards are held as computed, the
// computation gives the same owners again.
//
// Why not compute owners from the members alone: rendezvous hashing moves
// the fewest shards but leaves the busiest replica 1.2 to 1.6 times its
// share with S=256, and capping each member's load (rendezvous with bounded
// loads, which this package used before) moves many more shards than the
// joiner gets whenever the integer cap drops (beyond 10 replicas, most
// joins moved more than 1.2·S/N). The holders are what makes a change move
// only what it must.
func Rebalance(members, holders []string) []string {
	// "" is no member: as a holder it means nobody, so a member named ""
	// would keep free shards for nobody.
	m := slices.DeleteFunc(slices.Clone(members), func(id string) bool { return id == "" })
	slices.Sort(m)
	m = slices.Compact(m)
	out := make([]string, len(holders))
	if len(m) == 0 {
		return out
	}
	index := make(map[string]int, len(m))
	for j, id := range m {
		index[id] = j
	}
	// Each member's held shards.
	held := make([][]int, len(m))
	for i, h := range holders {
		if j, ok := index[h]; ok {
			held[j] = append(held[j], i)
		}
	}
	share := shares(held, len(holders))
	load, free := keepHeld(m, held, share, out)
	for i, h := range holders {
		if _, ok := index[h]; !ok {
			free = append(free, i)
		}
	}
	assignFree(m, free, share, load, out)
	return out
}

// shares returns each member's share of the shards: floor(S/N), one more
// for the first S mod N members, those already holding at least that many
// first, then by name. Ranking by the load itself would change the choice
// halfway through a handover, as loads move.
func shares(held [][]int, shards int) []int {
	n := len(held)
	floor := shards / n
	ranked := make([]int, n)
	for j := range ranked {
		ranked[j] = j
	}
	full := func(j int) bool { return len(held[j]) > floor }
	slices.SortStableFunc(ranked, func(a, b int) int {
		switch {
		case full(a) && !full(b):
			return -1
		case full(b) && !full(a):
			return 1
		}
		return cmp.Compare(a, b) // members are sorted: by name
	})
	share := make([]int, n)
	for rank, j := range ranked {
		share[j] = floor
		if rank < shards%n {
			share[j]++
		}
	}
	return share
}

// keepHeld assigns in out each member's held shards up to its share,
// highest-scoring first, and returns the members' loads and the held
// shards beyond their holder's share.
func keepHeld(m []string, held [][]int, share []int, out []string) (load, free []int) {
	load = make([]int, len(m))
	for j, hs := range held {
		slices.SortFunc(hs, func(a, b int) int {
			if c := cmp.Compare(score(m[j], b), score(m[j], a)); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		for k, i := range hs {
			if k < share[j] {
				out[i] = m[j]
				load[j]++
			} else {
				free = append(free, i)
			}
		}
	}
	return load, free
}

// assignFree assigns in out the free shards, by decreasing score, to the
// members whose load is below their share.
func assignFree(m []string, free, share, load []int, out []string) {
	if len(free) == 0 {
		return
	}
	type pair struct {
		score  uint64
		member int
		shard  int
	}
	pairs := make([]pair, 0, len(m)*len(free))
	for j, id := range m {
		if load[j] >= share[j] {
			continue
		}
		for _, i := range free {
			pairs = append(pairs, pair{score(id, i), j, i})
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		switch {
		case a.score != b.score:
			return cmp.Compare(b.score, a.score)
		case a.member != b.member:
			return cmp.Compare(a.member, b.member)
		}
		return cmp.Compare(a.shard, b.shard)
	})
	left := len(free)
	for _, p := range pairs {
		if out[p.shard] != "" || load[p.member] >= share[p.member] {
			continue
		}
		out[p.shard] = m[p.member]
		load[p.member]++
		if left--; left == 0 {
			return
		}
	}
}
