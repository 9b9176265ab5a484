package reconcile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestConvergence(t *testing.T) {
	var c convergence[string]
	// First seen converged: nothing to report, nothing tracked.
	_, ok := c.observe("a", 1, 1, t0)
	require.False(t, ok)
	require.Zero(t, c.unconverged())

	// A new generation starts the clock.
	_, ok = c.observe("a", 2, 1, t0)
	require.False(t, ok)
	require.Equal(t, 1, c.unconverged())
	// Later observations of the same generation do not restart it.
	_, ok = c.observe("a", 2, 1, t0.Add(time.Second))
	require.False(t, ok)
	// Ready at a stale generation is not convergence.
	_, ok = c.observe("a", 2, 0, t0.Add(2*time.Second))
	require.False(t, ok)
	d, ok := c.observe("a", 2, 2, t0.Add(5*time.Second))
	require.True(t, ok)
	require.Equal(t, 5*time.Second, d)
	require.Zero(t, c.unconverged())

	// A generation change while unconverged restarts at the new generation.
	c.observe("b", 1, 0, t0)
	c.observe("b", 2, 0, t0.Add(time.Minute))
	d, ok = c.observe("b", 2, 3, t0.Add(time.Minute+time.Second))
	require.True(t, ok, "Ready at a later generation also converges")
	require.Equal(t, time.Second, d)

	// Deletion forgets.
	c.observe("c", 1, 0, t0)
	require.Equal(t, 1, c.unconverged())
	c.forget("c")
	require.Zero(t, c.unconverged())
}
