package metrics_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/metrics"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// counter implements only the hook it needs; NopLoop supplies the rest.
type counter struct {
	metrics.NopLoop
	done int
}

func (c *counter) ReconcileDone(string, string, time.Duration) { c.done++ }

func TestNopLoopCanBeEmbedded(t *testing.T) {
	c := &counter{}
	var m metrics.Loop = c
	m.ReconcileDone("app", "success", time.Second)
	m.ReconcileError("app", false)
	require.Nil(t, m.QueueMetrics("app"), "no queue hooks")
	require.Equal(t, 1, c.done)
}
