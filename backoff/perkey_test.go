package backoff_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
)

func newPerKey(t *testing.T, p backoff.Policy) *backoff.PerKey[string] {
	t.Helper()
	l, err := backoff.NewPerKey[string](p)
	require.NoError(t, err)
	return l
}

func TestPerKeyCountsFailuresPerKeyUntilForget(t *testing.T) {
	l := newPerKey(t, noJitter())
	var _ backoff.Limiter[string] = l

	require.Zero(t, l.NumRequeues("a"), "a key never seen has no failures")
	require.Equal(t, 10*time.Millisecond, l.When("a"))
	require.Equal(t, 20*time.Millisecond, l.When("a"))
	require.Equal(t, 40*time.Millisecond, l.When("a"))
	require.Equal(t, 3, l.NumRequeues("a"))

	require.Equal(t, 10*time.Millisecond, l.When("b"), "keys do not affect each other")
	require.Equal(t, 1, l.NumRequeues("b"))
	require.Equal(t, 2, l.Len())

	l.Forget("a")
	require.Zero(t, l.NumRequeues("a"))
	require.Equal(t, 10*time.Millisecond, l.When("a"), "a forgotten key starts again at Base")
	require.Equal(t, 1, l.NumRequeues("b"), "forgetting a does not reset b")

	l.Forget("never-seen")
	require.Equal(t, 2, l.Len(), "forgetting an unknown key changes nothing")
	l.Forget("a")
	l.Forget("b")
	require.Zero(t, l.Len(), "forgotten keys are not retained")
	require.Equal(t, noJitter().Base, l.Policy().Base)
}

func TestPerKeyReachesTheCapAndStaysThere(t *testing.T) {
	l := newPerKey(t, backoff.DefaultPolicy())
	var d time.Duration
	for range 10_000 {
		d = l.When("k")
		require.Positive(t, d)
	}
	require.Equal(t, 2*time.Minute, d)
	require.Equal(t, 10_000, l.NumRequeues("k"))
}

func TestPerKeyJitterComesFromRandOrItsOwnSource(t *testing.T) {
	p := backoff.DefaultPolicy()
	p.Rand = fixed(0)
	l := newPerKey(t, p)
	require.Equal(t, 8*time.Millisecond, l.When("k"), "an injected Rand is used: u=0 is −20%")
	require.Equal(t, 16*time.Millisecond, l.When("k"))

	l = newPerKey(t, backoff.DefaultPolicy()) // nil Rand: the limiter's own generator
	seen := map[time.Duration]bool{}
	var sum time.Duration
	const n = 2000
	for i := range n {
		k := "k" + strconv.Itoa(i)
		d := l.When(k)
		require.GreaterOrEqual(t, d, 8*time.Millisecond)
		require.LessOrEqual(t, d, 12*time.Millisecond)
		seen[d] = true
		sum += d
	}
	require.Greater(t, len(seen), n/2, "delays are spread, not repeated")
	require.InDelta(t, float64(10*time.Millisecond), float64(sum/n), float64(200*time.Microsecond), "centred on the nominal delay")
}

func TestPerKeyIsSafeForConcurrentUse(t *testing.T) {
	l := newPerKey(t, backoff.DefaultPolicy())
	const workers, perWorker = 8, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			own := "own-" + strconv.Itoa(w)
			for i := range perWorker {
				require.LessOrEqual(t, l.When("shared"), 2*time.Minute)
				l.When(own)
				_ = l.NumRequeues("shared")
				if i%2 == 1 {
					l.Forget("churn-" + strconv.Itoa(w))
				} else {
					l.When("churn-" + strconv.Itoa(w))
				}
			}
		})
	}
	wg.Wait()
	require.Equal(t, workers*perWorker, l.NumRequeues("shared"), "no failure is lost")
	for w := range workers {
		require.Equal(t, perWorker, l.NumRequeues("own-"+strconv.Itoa(w)))
		require.Zero(t, l.NumRequeues("churn-"+strconv.Itoa(w)), "the last operation was Forget")
	}
	require.Equal(t, 1+workers, l.Len())
}

func TestPerKeyAllocatesNothingForAKeyAlreadySeen(t *testing.T) {
	l := newPerKey(t, backoff.DefaultPolicy())
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "object-" + strconv.Itoa(i)
		l.When(keys[i])
	}
	i := 0
	allocs := testing.AllocsPerRun(5000, func() {
		k := keys[i%len(keys)]
		i++
		l.When(k)
		l.NumRequeues(k)
	})
	require.Zero(t, allocs, "When and NumRequeues on held keys")

	// Forget and a fresh failure reuse the map's room.
	allocs = testing.AllocsPerRun(5000, func() {
		k := keys[i%len(keys)]
		i++
		l.Forget(k)
		l.When(k)
	})
	require.Zero(t, allocs, "Forget then When on a key held before")
}

// TestPerKeyDelaysArePolicyDelays checks PerKey's delays, which it computes
// itself for a Factor-2 policy, against Policy.Delay: for every failure
// count from the first until past the cap, with several random draws, the
// n-th failure waits exactly p.Delay(n), and PerKey calls p.Rand exactly
// when Policy.Delay does.
func TestPerKeyDelaysArePolicyDelays(t *testing.T) {
	for name, p := range map[string]backoff.Policy{
		"default":    backoff.DefaultPolicy(),
		"no jitter":  {Base: 5 * time.Millisecond, Factor: 2, Cap: time.Hour},
		"odd base":   {Base: 7777777, Factor: 2, Cap: 12345678901, Jitter: 0.37},
		"factor 1.5": {Base: 10 * time.Millisecond, Factor: 1.5, Cap: time.Minute, Jitter: 0.2},
	} {
		for _, u := range []float64{0, 0.3, 0.5, 0.999999} {
			limiterDraws, policyDraws := 0, 0
			p.Rand = func() float64 { limiterDraws++; return u }
			l := newPerKey(t, p)
			ref := p
			ref.Rand = func() float64 { policyDraws++; return u }
			for n := range 24 { // every policy here reaches its cap by failure 21
				require.Equal(t, ref.Delay(n), l.When("k"), "%s, u=%v: failure %d", name, u, n)
				require.Equal(t, policyDraws, limiterDraws, "%s, u=%v: draws after failure %d", name, u, n)
			}
		}
	}
}
