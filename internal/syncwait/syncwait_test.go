package syncwait_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/syncwait"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A wait reports every Every until it returns; a wait that panics returns
// the panic as its error.
func TestWaitReportsAndRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reports []time.Duration
		err := syncwait.Wait(t.Context(), clock.Real{}, func(ctx context.Context) error {
			time.Sleep(65 * time.Second)
			return nil
		}, func(waited time.Duration) { reports = append(reports, waited) })
		require.NoError(t, err)
		require.Equal(t, []time.Duration{30 * time.Second, 60 * time.Second}, reports)

		err = syncwait.Wait(t.Context(), clock.Real{}, func(context.Context) error { panic("boom") }, func(time.Duration) {})
		require.ErrorContains(t, err, "boom")
	})
}

func TestNotSyncedNamesWhatAndWhy(t *testing.T) {
	errNot := errors.New("not synced")
	err := syncwait.NotSynced(errNot, "cache 0", 1500*time.Millisecond, errors.New("down"))
	require.ErrorIs(t, err, errNot)
	require.EqualError(t, err, "not synced: cache 0, after 1.5s; last error: down")
}
