package clock_test

// Black-box tests of the documented contract.

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/clock"
)

// received reports whether c holds a value now, taking it.
func received(c <-chan time.Time) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Real is the wall clock, virtual inside a synctest bubble, and its Timer
// behaves as *time.Timer's: it fires once after d (at once for d ≤ 0),
// its channel delivers at most one value per Reset, Stop and Reset report
// whether it was active, and a stopped timer never fires.
func TestBlackbox49RealTimerIsATimeTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c clock.Clock = clock.Real{}
		start := c.Now()
		require.Equal(t, time.Now(), start, "virtual time in the bubble")

		tm := c.NewTimer(time.Second)
		time.Sleep(999 * time.Millisecond)
		synctest.Wait()
		require.False(t, received(tm.C()), "not before d")
		time.Sleep(time.Millisecond)
		synctest.Wait()
		require.True(t, received(tm.C()), "at d")
		time.Sleep(time.Hour)
		synctest.Wait()
		require.False(t, received(tm.C()), "once")
		require.False(t, tm.Stop(), "a timer that fired is not active")

		require.False(t, tm.Reset(time.Minute), "Reset of a fired timer")
		require.True(t, tm.Stop(), "a reset timer is active")
		time.Sleep(time.Hour)
		synctest.Wait()
		require.False(t, received(tm.C()), "a stopped timer never fires")

		for _, d := range []time.Duration{0, -time.Hour} {
			now := c.NewTimer(d)
			synctest.Wait()
			require.True(t, received(now.C()), "d=%v fires at once", d)
			require.True(t, c.Now().Equal(time.Now()))
		}
		require.Equal(t, 2*time.Hour+time.Second, c.Now().Sub(start))
	})
}
