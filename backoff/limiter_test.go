package backoff_test

import (
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
)

// fakeLimiter returns a fixed delay and records what it was asked.
type fakeLimiter struct {
	delay    time.Duration
	requeues int
	whens    []string
	forgets  []string
}

func (f *fakeLimiter) When(k string) time.Duration { f.whens = append(f.whens, k); return f.delay }
func (f *fakeLimiter) Forget(k string)             { f.forgets = append(f.forgets, k) }
func (f *fakeLimiter) NumRequeues(string) int      { return f.requeues }

func TestMaxTakesTheLongestDelayAndCallsEveryLimiter(t *testing.T) {
	a := &fakeLimiter{delay: time.Second, requeues: 3}
	b := &fakeLimiter{delay: 5 * time.Second, requeues: 1}
	c := &fakeLimiter{delay: 2 * time.Second, requeues: 7}
	m := backoff.Max[string](a, nil, b, c)

	require.Equal(t, 5*time.Second, m.When("k"))
	for _, l := range []*fakeLimiter{a, b, c} {
		require.Equal(t, []string{"k"}, l.whens, "every limiter records the failure, not just the longest")
	}
	require.Equal(t, 7, m.NumRequeues("k"), "the largest count")

	m.Forget("k")
	for _, l := range []*fakeLimiter{a, b, c} {
		require.Equal(t, []string{"k"}, l.forgets)
	}

	empty := backoff.Max[string]()
	require.Zero(t, empty.When("k"))
	require.Zero(t, empty.NumRequeues("k"))
	empty.Forget("k")
}

func TestNewDefaultIsPerKeyMaxBucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := backoff.NewDefault[string]()

		// One failing key: the per-key policy decides, within ±20%.
		for attempt, nominal := range []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond} {
			d := l.When("a")
			require.GreaterOrEqual(t, d, nominal*8/10, "attempt %d", attempt)
			require.LessOrEqual(t, d, nominal*12/10, "attempt %d", attempt)
		}
		require.Equal(t, 3, l.NumRequeues("a"))
		l.Forget("a")
		require.Zero(t, l.NumRequeues("a"))

		// A storm of distinct keys: the bucket decides once its burst is gone.
		for i := range 96 { // 3 tokens went to "a" above, one more below
			l.When("storm-" + strconv.Itoa(i))
		}
		require.LessOrEqual(t, l.When("last-in-burst"), 12*time.Millisecond)
		require.Equal(t, 100*time.Millisecond, l.When("first-past-burst"), "10/s overall")
		var d time.Duration
		for i := range 1000 {
			d = l.When("storm2-" + strconv.Itoa(i))
		}
		require.GreaterOrEqual(t, d, backoff.DefaultCeiling*8/10)
		require.LessOrEqual(t, d, backoff.DefaultCeiling, "the bucket's ceiling holds in the combination")

		// Each call builds an independent limiter.
		require.Zero(t, backoff.NewDefault[string]().NumRequeues("storm-1"))
	})
}
