package oscillation

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/objpath"
)

// sidesOf answers, in one pass over the first elements, what the
// definitions answer: a path in the spec has objpath.Spec as a prefix, one
// on the status side is objpath.StatusSide; for every list of up to two
// of these paths.
func TestSidesOfIsSpecChangedAndStatusOnly(t *testing.T) {
	all := []diff.Path{{}, {{Kind: diff.IndexElem, Index: 0}}, {{Kind: diff.ValueElem, Name: "status"}}, {{Kind: diff.KeyElem, Keys: []diff.KeyField{{Name: "spec"}}}}}
	for _, s := range []string{".spec", ".spec.replicas", ".specx", ".status", ".status.phase", ".statusx",
		".conditions", `.conditions[type="Ready"].status`, ".metadata.labels.spec", ".metadata.labels.status", ".a"} {
		all = append(all, diff.MustParsePath(s))
	}
	lists := [][]diff.Path{nil}
	for _, p := range all {
		lists = append(lists, []diff.Path{p})
		for _, q := range all {
			lists = append(lists, []diff.Path{p, q})
		}
	}
	for _, ps := range lists {
		spec, only := sidesOf(ps)
		require.Equal(t, slices.ContainsFunc(ps, func(p diff.Path) bool { return p.HasPrefix(objpath.Spec) }), spec, "%v", ps)
		require.Equal(t, !slices.ContainsFunc(ps, func(p diff.Path) bool { return !objpath.StatusSide(p) }), only, "%v", ps)
	}
}

// heldChanged finds what findChanged finds, at every number of paths held
// (by comparing them one by one up to sameScan, by search past it), for
// the held copies, equal copies, prefixes sharing a held one's array, and
// paths not held.
func TestHeldChangedIsFindChangedWhenFound(t *testing.T) {
	all := ps(".conditions[type=\"Ready\"].status", ".metadata.labels.app", ".spec", ".spec.args", ".spec.replicas",
		".spec.template.image", ".status", ".status.phase", ".status.replicas", ".status.ready.count", ".a", ".z.y.x")
	slices.SortFunc(all, diff.Path.Compare)
	for n := range len(all) + 1 {
		var d Detector
		d.changedByOther = slices.Clone(all[:n])
		for _, p := range all {
			for _, q := range []diff.Path{p, slices.Clone(p), p[:len(p)-1], {}, p.Field("more")} {
				wi, wfound := d.findChanged(q)
				i, found := d.heldChanged(q)
				require.Equal(t, wfound, found, "%d held: %s", n, q)
				if found {
					require.Equal(t, wi, i, "%d held: %s", n, q)
				}
			}
		}
	}
}
