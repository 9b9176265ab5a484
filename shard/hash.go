package shard

import (
	"hash/fnv"
	"slices"
	"strconv"
)

// DefaultShards is the number of shards of a Sharder without WithShards.
const DefaultShards = 256

// Of returns key's shard among shards (shards ≥ 1): FNV-1a 64 of key,
// modulo shards. It is stable across processes and versions: changing it
// would move every key.
func Of(key string, shards int) int {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int(h.Sum64() % uint64(shards))
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

// Owner returns the member that owns shard among members, by rendezvous
// hashing: the one with the highest score, ties going to the smaller name.
// It returns "" for no members.
func Owner(members []string, shard int) string {
	best, bestScore := "", uint64(0)
	for _, m := range members {
		s := score(m, shard)
		if best == "" || s > bestScore || (s == bestScore && m < best) {
			best, bestScore = m, s
		}
	}
	return best
}

// Assign returns the owner of each of shards shards among members (see
// Owner). Every replica that sees the same members, in any order, computes
// the same assignment.
func Assign(members []string, shards int) []string {
	m := slices.Clone(members)
	slices.Sort(m)
	m = slices.Compact(m)
	out := make([]string, shards)
	for i := range out {
		out[i] = Owner(m, i)
	}
	return out
}
