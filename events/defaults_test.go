package events_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/events"
	"github.com/steady-go/steady/store/memstore"
)

// The README's defaults: an object's history holds at most 20 events, and
// an event not seen for an hour goes.
func TestDefaultBoundsAreTwentyPerObjectAndAnHour(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := events.New(memstore.New())
		require.NoError(t, err)
		run(t, r)
		for i := range 25 {
			r.Record(ev("web", fmt.Sprintf("Reason%d", i)))
			time.Sleep(time.Second)
			synctest.Wait()
		}
		got, err := r.For(t.Context(), "App", "web")
		require.NoError(t, err)
		require.Len(t, got, 20, "per object")
		require.Equal(t, "Reason5", got[0].Reason, "the oldest went first")

		time.Sleep(59 * time.Minute)
		synctest.Wait()
		got, err = r.For(t.Context(), "App", "web")
		require.NoError(t, err)
		require.NotEmpty(t, got, "seen within the hour")
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		got, err = r.For(t.Context(), "App", "web")
		require.NoError(t, err)
		require.Empty(t, got, "expired after an hour")
	})
}
