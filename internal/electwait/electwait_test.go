package electwait_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/electwait"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type waiter func()

func (w waiter) Wait() { w() }

func TestWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ok, p := electwait.Wait(struct{}{}, clock.Real{})
		require.True(t, ok, "an elector without Wait has nothing to wait for")
		require.Nil(t, p)

		began := time.Now()
		ok, p = electwait.Wait(waiter(func() { time.Sleep(time.Second) }), clock.Real{})
		require.True(t, ok)
		require.Nil(t, p)
		require.Equal(t, time.Second, time.Since(began), "waits for Wait to return")

		release := make(chan struct{})
		began = time.Now()
		ok, p = electwait.Wait(waiter(func() { <-release }), clock.Real{})
		require.False(t, ok)
		require.Nil(t, p)
		require.Equal(t, electwait.Limit, time.Since(began), "gives up after Limit")
		close(release)

		ok, p = electwait.Wait(waiter(func() { panic("boom") }), clock.Real{})
		require.True(t, ok)
		require.NotNil(t, p)
		require.Equal(t, "boom", p.Value)
	})
}
