package oscillation

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
)

// findChanged finds a path by address first (the same copy), then by
// search: it answers as slices.BinarySearchFunc with diff.Path.Compare
// does, for the held copies, equal copies, shorter paths sharing a held
// one's array (its prefixes, not equal to it) and paths not held, at any
// number held (past the paths it compares by address too).
func TestFindChangedAnswersAsTheSearch(t *testing.T) {
	all := ps(".conditions[type=\"Ready\"].status", ".metadata.labels.app", ".spec", ".spec.args", ".spec.replicas",
		".spec.template.image", ".status", ".status.phase", ".status.replicas", ".status.ready.count", ".a", ".z.y.x")
	slices.SortFunc(all, diff.Path.Compare)
	for n := range len(all) + 1 {
		var d Detector
		for i := 0; i < len(all); i += max(1, len(all)/(n+1)) {
			d.changedByOther = append(d.changedByOther, all[i])
		}
		var queries []diff.Path
		for _, p := range all {
			queries = append(queries, p, slices.Clone(p), p[:len(p)-1], diff.Path{}, p.Field("more"))
		}
		for _, q := range queries {
			wi, wfound := slices.BinarySearchFunc(d.changedByOther, q, diff.Path.Compare)
			i, found := d.findChanged(q)
			require.Equal(t, wfound, found, "%d held: %s", len(d.changedByOther), q)
			require.Equal(t, wi, i, "%d held: %s", len(d.changedByOther), q)
		}
	}
}
