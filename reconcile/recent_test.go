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
// and went idle; while it fails, its KeyStatus says when it last failed.
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
		ks := l.KeyStatuses()
		require.Len(t, ks, 1)
		require.True(t, first.Equal(ks[0].LastFailure), "when the key last failed")
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Empty(t, l.KeyStatuses(), "recovered: idle")
		rf := l.Status().RecentFailures
		require.Len(t, rf, 3)
		require.Equal(t, "a", rf[0].Key)
		require.Equal(t, "attempt 2: boom", rf[0].Error, "newest first")
		require.Equal(t, "attempt 0: boom", rf[2].Error)
		require.True(t, first.Equal(rf[2].Time))
		require.True(t, rf[0].Time.After(rf[1].Time))
		require.NotEmpty(t, rf[0].ReconcileID)
		require.NoError(t, stop())
	})
}

// The ring keeps the newest 20.
func TestFailureRingKeepsTheNewest(t *testing.T) {
	var r failureRing
	for i := range 25 {
		r.add(RecentFailure{Key: fmt.Sprint(i)})
	}
	got := r.list()
	require.Len(t, got, recentFailures)
	require.Equal(t, "24", got[0].Key)
	require.Equal(t, "5", got[19].Key)
}
