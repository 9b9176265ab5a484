package shard

import (
	"cmp"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
)

// DefaultShards is the number of shards of a Sharder without WithShards.
const DefaultShards = 256

// Of returns key's shard among shards (shards ≥ 1): FNV-1a 64 of key,
// modulo shards. It is stable across processes and versions: changing it
// would move every key.
func Of(key string, shards int) int {
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

// Assign returns the owner of each of shards shards among members, by
// rendezvous hashing with bounded loads: every (member, shard) pair has a
// score, and in order of decreasing score each shard goes to the member of
// its pair unless the shard is taken or the member already holds its cap,
// ceil(1.1·shards/members). Plain rendezvous (each shard to its
// highest-scoring member) moves the fewest shards but, with 256 shards,
// leaves the busiest replica 1.2 to 1.6 times its fair share, and the Loop
// is as fast as its busiest replica; the cap keeps every replica within
// 10% of it for a few more shards moved per change. Every replica that sees
// the same members, in any order, computes the same assignment. It returns
// empty owners for no members.
func Assign(members []string, shards int) []string {
	m := slices.Clone(members)
	slices.Sort(m)
	m = slices.Compact(m)
	out := make([]string, shards)
	if len(m) == 0 {
		return out
	}
	type pair struct {
		score  uint64
		member int
		shard  int
	}
	pairs := make([]pair, 0, len(m)*shards)
	for j, id := range m {
		for i := range shards {
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
	limit := int(math.Ceil(float64(shards) * 1.1 / float64(len(m))))
	load := make([]int, len(m))
	left := shards
	for _, p := range pairs {
		if out[p.shard] != "" || load[p.member] >= limit {
			continue
		}
		out[p.shard] = m[p.member]
		load[p.member]++
		if left--; left == 0 {
			break
		}
	}
	return out
}
