package oscillation_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/reconcile/oscillation"
)

// Status that follows the world is not an oscillation of desired state:
// status-only writes by self spend a budget of their own, MaxStatusWrites
// (default 120 a window), and beyond it are Throttled, not TooManyWrites.
// A write that touches anything else spends MaxWrites, as before.
func TestStatusOnlyWritesSpendTheStatusBudget(t *testing.T) {
	status := diff.MustParsePath(".status.running")
	label := diff.MustParsePath(`.metadata.labels["x"]`)
	d := oscillation.New(oscillation.Config{})
	at := time.Unix(0, 0)
	for i := range oscillation.DefaultMaxStatusWrites {
		at = at.Add(400 * time.Millisecond)
		require.Empty(t, d.Observe(oscillation.Write{Time: at, Self: true, Owned: []diff.Path{status}}), "status write %d", i+1)
	}
	at = at.Add(400 * time.Millisecond)
	got := d.Observe(oscillation.Write{Time: at, Self: true, Owned: []diff.Path{status}})
	require.Len(t, got, 1)
	require.Equal(t, oscillation.Throttled, got[0].Kind)
	require.Equal(t, "Throttled", got[0].Kind.String())
	require.Equal(t, []diff.Path{status}, got[0].Paths)
	require.Contains(t, got[0].Message(), "throttled: 121 status writes within 1m0s")

	// A write that changes more than the status side (here with a
	// field another manager owns) keeps the budget of 30.
	d = oscillation.New(oscillation.Config{})
	mixed := oscillation.Write{Self: true, Owned: []diff.Path{status}, Foreign: []diff.Path{label}}
	for range oscillation.DefaultMaxWrites {
		at = at.Add(time.Second)
		mixed.Time = at
		require.Empty(t, d.Observe(mixed))
	}
	at = at.Add(time.Second)
	mixed.Time = at
	got = d.Observe(mixed)
	require.Len(t, got, 1)
	require.Equal(t, oscillation.TooManyWrites, got[0].Kind)
}

// The Loop's own report (Report) spends MaxWrites even though it is a
// condition: a Stalled that flips at every reconcile follows the Loop.
func TestTheLoopsReportSpendsTheWriteBudget(t *testing.T) {
	stalled := diff.MustParsePath(`.conditions[type="Stalled"]`)
	d := oscillation.New(oscillation.Config{})
	at := time.Unix(0, 0)
	var got []oscillation.Report
	for range oscillation.DefaultMaxWrites + 1 {
		at = at.Add(time.Second)
		got = d.Observe(oscillation.Write{Time: at, Self: true, Owned: []diff.Path{stalled}, Report: true})
	}
	require.Len(t, got, 1)
	require.Equal(t, oscillation.TooManyWrites, got[0].Kind)
}
