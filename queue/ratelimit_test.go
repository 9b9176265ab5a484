package queue_test

import (
	"context"
	"math"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/queue"
)

// failAndWait records one failure of key and returns the delay it was
// given, then waits it out and processes key, so that the next failure's
// delay shows in State too.
func failAndWait(t *testing.T, q *queue.Queue[string], key string) time.Duration {
	t.Helper()
	q.AddRateLimited(key)
	var d time.Duration // 0 if the failure queued key at once
	if s := q.State(key); s.Delayed {
		d = time.Until(s.ReadyAt)
	}
	time.Sleep(d)
	k, ok := q.Get(context.Background())
	require.True(t, ok)
	require.Equal(t, key, k)
	q.Done(k)
	return d
}

// TestOwnBackoffDelaysArePolicyDelays checks the queue's own backoff, which
// computes a Factor-2 policy's delays itself, against Policy.Delay: for
// every failure count from the first until past the cap, with several
// random draws, the n-th failure waits exactly p.Delay(n), and the queue
// calls p.Rand exactly when Policy.Delay does.
func TestOwnBackoffDelaysArePolicyDelays(t *testing.T) {
	def := backoff.DefaultPolicy()
	for name, p := range map[string]backoff.Policy{
		"default":         def,
		"no jitter":       {Base: 5 * time.Millisecond, Factor: 2, Cap: time.Hour},
		"odd base":        {Base: 7777777, Factor: 2, Cap: 123456789012, Jitter: 0.37},
		"factor 1.5":      {Base: 10 * time.Millisecond, Factor: 1.5, Cap: time.Minute, Jitter: 0.2},
		"constant":        {Base: time.Second, Factor: 1, Cap: time.Second, Jitter: 0.5},
		"invalid: no cap": {Base: time.Second, Factor: 2, Jitter: 0.2},
	} {
		for _, u := range []float64{0, 0.3, 0.5, math.Nextafter(1, 0)} {
			synctest.Test(t, func(t *testing.T) {
				queueDraws, policyDraws := 0, 0
				p.Rand = func() float64 { queueDraws++; return u }
				q := queue.New[string](queue.WithBackoff(p))
				defer q.ShutDown()
				ref := p
				ref.Rand = func() float64 { policyDraws++; return u }
				for n := range 24 { // every policy here reaches its cap by failure 21
					want := ref.Delay(n)
					require.Equal(t, want, failAndWait(t, q, "a"), "%s, u=%v: failure %d", name, u, n)
					require.Equal(t, policyDraws, queueDraws, "%s, u=%v: draws after failure %d", name, u, n)
				}
			})
		}
	}
}

// TestOwnBackoffJitterSpreadsEvenlyWithinItsBounds checks the queue's own
// random source for jitter (DefaultPolicy has no Rand): 5000 keys failing
// once wait between 8ms and 12ms (10ms ± 20%), spread evenly over that
// range, and a key that keeps failing waits within ±20% of 10ms·2^n until
// that reaches the 2-minute cap, and exactly 2 minutes from then on.
func TestOwnBackoffJitterSpreadsEvenlyWithinItsBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string](queue.WithBackoff(backoff.DefaultPolicy()))
		defer q.ShutDown()
		const n, bins = 5000, 8
		var count [bins]int
		lo, hi := 8*time.Millisecond, 12*time.Millisecond
		for i := range n {
			k := strconv.Itoa(i)
			q.AddRateLimited(k)
			d := time.Until(q.State(k).ReadyAt)
			require.True(t, d >= lo && d <= hi, "first failure waits %v", d)
			count[min(int((d-lo)*bins/(hi-lo)), bins-1)]++
		}
		for b, c := range count {
			require.InDelta(t, n/bins, c, n/bins*0.2, "eighth %d of [8ms, 12ms]: %v", b, count)
		}
		q.ShutDown()

		q = queue.New[string](queue.WithBackoff(backoff.DefaultPolicy()))

		for f := range 17 {
			d := failAndWait(t, q, "a")
			base := 10 * time.Millisecond << f
			if float64(base)*0.8 >= float64(2*time.Minute) {
				require.Equal(t, 2*time.Minute, d, "failure %d", f)
				continue
			}
			require.True(t, float64(d) >= 0.8*float64(base) && float64(d) <= 1.2*float64(base) && d <= 2*time.Minute,
				"failure %d waits %v, base %v", f, d, base)
		}
	})
}
