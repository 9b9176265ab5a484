package backoff_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/queue"
)

func panickyRand() float64 { panic("Rand") }

// A Rand that panics (a test's scripted source that runs out, say) is
// replaced, for that draw, by math/rand/v2's: the delay stays within the
// policy's spread, and the goroutine computing it (a Loop's worker, the
// queue's caller with its lock held) does not panic.
func TestRandThatPanicsFallsBackToMathRand(t *testing.T) {
	p := backoff.DefaultPolicy()
	p.Rand = panickyRand
	for n := range 4 {
		d := p.Delay(n)
		want := float64(backoff.DefaultPolicy().Base) * float64(int(1)<<n)
		require.GreaterOrEqual(t, float64(d), want*0.8, "attempt %d", n)
		require.LessOrEqual(t, float64(d), want*1.2, "attempt %d", n)
	}

	l, err := backoff.NewPerKey[string](p)
	require.NoError(t, err)
	require.LessOrEqual(t, l.When("a"), 12*time.Millisecond)

	q := queue.New[string](queue.WithBackoff(p))
	defer q.ShutDown()
	q.AddRateLimited("a") // the queue's lock is held while it draws
	q.Add("b")
	require.Equal(t, 1, q.Len(), "a waits its backoff; the queue is not left locked")

	b, err := backoff.NewBucket[string](backoff.BucketConfig{Rate: 1, Burst: 1, Ceiling: time.Second, Rand: panickyRand})
	require.NoError(t, err)
	b.When("a")
	b.When("a")
	d := b.When("a") // over the ceiling: a spread capped delay
	require.GreaterOrEqual(t, d, 800*time.Millisecond)
	require.LessOrEqual(t, d, time.Second)
}
