package shard_test

import (
	"cmp"
	"hash/fnv"
	"slices"
	"strconv"
)

// This file keeps Rebalance as it was before it stopped building every
// (member, free shard) pair, as the reference the current one must match
// for every input: replicas of different versions compute owners
// independently, so any difference would let two of them disagree.

func refScore(member string, shard int) uint64 {
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

func refRebalance(members, holders []string) []string {
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
	held := make([][]int, len(m))
	for i, h := range holders {
		if j, ok := index[h]; ok {
			held[j] = append(held[j], i)
		}
	}
	share := refShares(held, len(holders))
	load, free := refKeepHeld(m, held, share, out)
	for i, h := range holders {
		if _, ok := index[h]; !ok {
			free = append(free, i)
		}
	}
	refAssignFree(m, free, share, load, out)
	return out
}

func refShares(held [][]int, shards int) []int {
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
		return cmp.Compare(a, b)
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

func refKeepHeld(m []string, held [][]int, share []int, out []string) (load, free []int) {
	load = make([]int, len(m))
	for j, hs := range held {
		slices.SortFunc(hs, func(a, b int) int {
			if c := cmp.Compare(refScore(m[j], b), refScore(m[j], a)); c != 0 {
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

func refAssignFree(m []string, free, share, load []int, out []string) {
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
			pairs = append(pairs, pair{refScore(id, i), j, i})
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
