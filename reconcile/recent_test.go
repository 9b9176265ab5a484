package reconcile

import (
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// A Loop keeps its last failures, with their time, after the key recovered
// and went idle; while it fails, its KeyInfo says when it last failed.
func TestRecentFailuresOutliveTheKeysFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(func(key string, n int) (Result, error) {
			if key == "a" && n < 3 {
				return Result{}, fmt.Errorf("attempt %d: %w", n, errors.New("boom"))
			}
			return Result{}, nil
		})
		l := mustNew(t, s, keySet("a", "b"), fixedBackoff()...)
		stop := start(t, l)
		synctest.Wait()
		first := time.Now()
		ks := l.InspectAll()
		require.Len(t, ks, 1)
		require.True(t, first.Equal(ks[0].LastFailure), "when the key last failed")
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Empty(t, l.InspectAll(), "recovered: idle")
		rf := l.Info().RecentFailures
		require.Len(t, rf, 1, "one per key")
		require.Equal(t, "a", rf[0].Key)
		require.Equal(t, "attempt 2: boom", rf[0].Error, "the last")
		require.Equal(t, 3, rf[0].Attempt)
		require.True(t, first.Add(3*time.Second).Equal(rf[0].Time), "after 1s and 2s of backoff")
		require.NotEmpty(t, rf[0].ReconcileID)
		require.NoError(t, stop())
	})
}

// The ring keeps the last failure of the 20 keys that failed last: a key
// that fails again moves to the front and does not push others out.
func TestFailureRingKeepsTheNewestKeys(t *testing.T) {
	var r failureRing
	for i := range 25 {
		r.add(RecentFailure{Key: fmt.Sprint(i)})
	}
	for range 100 {
		r.add(RecentFailure{Key: "hot"})
	}
	r.add(RecentFailure{Key: "10", Attempt: 2})
	got := r.list()
	require.Len(t, got, recentFailures)
	require.Equal(t, RecentFailure{Key: "10", Attempt: 2}, got[0])
	require.Equal(t, "hot", got[1].Key)
	require.Equal(t, "24", got[2].Key)
	require.Equal(t, "6", got[19].Key)
}
