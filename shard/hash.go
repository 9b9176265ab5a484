package shard

import (
	"cmp"
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

// A member's rendezvous weight for a shard is FNV-1a 64 of the member, a
// zero byte and the shard in decimal, finished with a mixer (splitmix64's)
// so that members whose names differ only at the end still get independent
// weights: scoreAfter(prefix(member), shard). It is part of the assignment
// every replica computes, so it never changes.

// prefix is the FNV-1a 64 state after member and a zero byte: the part of
// member's weight that does not depend on the shard, computed once per
// member.
func prefix(member string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(member); i++ {
		h ^= uint64(member[i])
		h *= 1099511628211
	}
	return h * 1099511628211 // the zero byte: h ^ 0 is h
}

// scoreAfter returns a member's weight for shard from the member's prefix,
// with no allocation: Rebalance computes up to members × shards of them.
func scoreAfter(h uint64, shard int) uint64 {
	var digits [20]byte
	for _, c := range strconv.AppendInt(digits[:0], int64(shard), 10) {
		h ^= uint64(c)
		h *= 1099511628211
	}
	x := h
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
//
// Cost: memory O(N + S); time about N × (free shards) weights, each a
// short hash (65,536 shards among 100 fresh members: about 5 MB and a
// quarter of a second on one core).
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
	pre := make([]uint64, len(m))
	for j, id := range m {
		pre[j] = prefix(id)
	}
	share := shares(held, len(holders))
	load, free := keepHeld(pre, m, held, share, out)
	for i, h := range holders {
		if _, ok := index[h]; !ok {
			free = append(free, i)
		}
	}
	assignFree(pre, m, free, share, load, out)
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
// shards beyond their holder's share. pre holds the members' prefixes.
func keepHeld(pre []uint64, m []string, held [][]int, share []int, out []string) (load, free []int) {
	load = make([]int, len(m))
	for j, hs := range held {
		slices.SortFunc(hs, func(a, b int) int {
			if c := cmp.Compare(scoreAfter(pre[j], b), scoreAfter(pre[j], a)); c != 0 {
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

// assignFree assigns in out the free shards to the members whose load is
// below their share, as taking every (member, free shard) pair by
// decreasing score (then member, then shard) and giving the shard to the
// member unless the shard is taken or the member full would: the owners
// must stay exactly those, as replicas of other versions compute them too.
//
// Building those pairs costs members × free shards (6.5M pairs, 157 MB,
// for 65,536 shards among 100 members), so instead each free shard waits
// in a heap with its best pair among the members not yet full. The top
// of the heap is the next pair the sorted walk would take, unless its
// member has filled since the pair was computed: then the shard's best
// pair among the members still open is computed again and the shard goes
// back. That is exact because a member once full stays full and a shard
// once taken stays taken: a shard's pair computed earlier is never below
// its best valid one. Memory is O(members + free shards); time is
// members × free shards scores, plus members per shard whose best member
// filled before the shard's turn.
func assignFree(pre []uint64, m []string, free, share, load []int, out []string) {
	if len(free) == 0 {
		return
	}
	open := make([]int, 0, len(m)) // the members below their share, in order
	for j := range m {
		if load[j] < share[j] {
			open = append(open, j)
		}
	}
	// best returns shard's best pair among the open members: the highest
	// score, the first member on a tie, as the sorted walk meets them.
	best := func(shard int) (cand, bool) {
		c, ok := cand{}, false
		for _, j := range open {
			if s := scoreAfter(pre[j], shard); !ok || s > c.score {
				c, ok = cand{s, j, shard}, true
			}
		}
		return c, ok
	}
	h := make(cands, 0, len(free))
	for _, i := range free {
		if c, ok := best(i); ok {
			h = append(h, c)
		}
	}
	h.init()
	for len(h) > 0 {
		c := h[0]
		if load[c.member] >= share[c.member] {
			if c, ok := best(c.shard); ok {
				h[0] = c
				h.down(0)
			} else {
				h.pop()
			}
			continue
		}
		h.pop()
		out[c.shard] = m[c.member]
		if load[c.member]++; load[c.member] == share[c.member] {
			open = slices.DeleteFunc(open, func(j int) bool { return j == c.member })
		}
	}
}

// cand is a (member, shard) pair with the member's score for the shard.
type cand struct {
	score  uint64
	member int
	shard  int
}

// before reports whether a comes before b in the walk: a higher score,
// then a lower member, then a lower shard.
func (a cand) before(b cand) bool {
	switch {
	case a.score != b.score:
		return a.score > b.score
	case a.member != b.member:
		return a.member < b.member
	}
	return a.shard < b.shard
}

// cands is a binary heap of pairs, the first in the walk on top: a
// container/heap would box every pair it moves.
type cands []cand

func (h cands) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h cands) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && h[r].before(h[l]) {
			c = r
		}
		if !h[c].before(h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

func (h *cands) pop() {
	old := *h
	n := len(old) - 1
	old[0] = old[n]
	*h = old[:n]
	h.down(0)
}
