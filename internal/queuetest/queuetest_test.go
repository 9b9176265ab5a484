package queuetest_test

import (
	"testing"
	"time"

	"github.com/steady-go/steady/internal/queuetest"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A snapshot is what was recorded when it was taken: later measurements
// do not show in it.
func TestSnapshotIsACopy(t *testing.T) {
	var r queuetest.Recorder
	r.Depth(1)
	r.QueueLatency(time.Second)
	r.WorkDuration(2 * time.Second)
	got := r.Snapshot()
	r.Depth(2)
	r.QueueLatency(3 * time.Second)
	r.WorkDuration(4 * time.Second)
	r.Unfinished(time.Second, time.Second)
	require.Equal(t, queuetest.Recorded{Depths: []int{1}, Latencies: []time.Duration{time.Second},
		Works: []time.Duration{2 * time.Second}}, got)
	require.Equal(t, 1, r.Snapshot().Reports)
}
