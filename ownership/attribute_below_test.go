package ownership

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
)

// hasBelowByPaths is the definition hasBelow keeps: some member of s lies
// strictly below p.
func hasBelowByPaths(s *Set, p diff.Path) bool {
	for _, q := range s.Paths() {
		if len(q) > len(p) && q.HasPrefix(p) {
			return true
		}
	}
	return false
}

// hasBelow answers as the members' paths do, for random sets and for paths
// that are members, their prefixes, their extensions and strangers, and it
// answers without listing the members: Attribute asks it of every changed
// path against every manager's set, and a fleet's status writes spent a
// fifth of their allocations building those lists.
func TestHasBelowAgreesWithTheMembersPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	elems := []string{".a", ".b", ".spec", `[name="x"]`, `[name="y",port=80]`, `[="v"]`, "[=3]", ".conditions", `[type="Ready"]`, ".status"}
	randPath := func() diff.Path {
		s := ""
		for range 1 + rng.IntN(4) {
			s += elems[rng.IntN(len(elems))]
		}
		if s[0] == '[' {
			s = ".f" + s
		}
		p, err := diff.ParsePath(s)
		require.NoError(t, err, s)
		return p
	}
	checked, below := 0, 0
	for range 300 {
		var members []diff.Path
		for range rng.IntN(8) {
			members = append(members, randPath())
		}
		s, err := NewSet(members...)
		if err != nil {
			continue
		}
		probes := []diff.Path{nil, {}, diff.MustParsePath(".zz"), diff.MustParsePath(".a[3]")}
		for _, m := range s.Paths() {
			probes = append(probes, m, m[:len(m)-1], append(m[:len(m):len(m)], diff.Element{Kind: diff.FieldElem, Name: "below"}))
		}
		for range 5 {
			probes = append(probes, randPath())
		}
		for _, p := range probes {
			want := hasBelowByPaths(s, p)
			require.Equal(t, want, hasBelow(s, p), "set %s, path %s", s, p)
			checked++
			if want {
				below++
			}
		}
	}
	require.Greater(t, checked, 1000)
	require.Greater(t, below, checked/10, "members below in some cases")
	require.Less(t, below, checked*9/10, "and not in others")
	require.False(t, hasBelow(nil, diff.MustParsePath(".a")), "the empty set")

	s := MustNewSet(diff.MustParsePath(`.conditions[type="Ready"].status`), diff.MustParsePath(".status.running"))
	p := diff.MustParsePath(`.conditions[type="Reconciling"]`)
	allocs := testing.AllocsPerRun(100, func() { hasBelow(s, p) })
	require.LessOrEqual(t, allocs, 1.0, "hasBelow lists no members (%v allocations)", allocs)
}
