package reconcile

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/reconcile/conditions"
)

// TestOnlyStalled: a change is the Loops' report alone when it changed
// something and every path is Stalled or below it, on either side.
func TestOnlyStalled(t *testing.T) {
	stalledStatus := stalledPath.Field("status")
	ready := conditionPath(conditions.Ready)
	spec := diff.Path{}.Field("spec")
	for _, c := range []struct {
		a, b []diff.Path
		want bool
	}{
		{nil, nil, false},
		{[]diff.Path{stalledPath}, nil, true},
		{nil, []diff.Path{stalledStatus}, true},
		{[]diff.Path{stalledPath}, []diff.Path{stalledStatus}, true},
		{[]diff.Path{stalledPath, ready}, nil, false},
		{[]diff.Path{stalledPath}, []diff.Path{spec}, false},
		{[]diff.Path{conditionPath("StalledX")}, nil, false},
	} {
		require.Equal(t, c.want, onlyStalled(c.a, c.b), "%v %v", c.a, c.b)
	}
}
