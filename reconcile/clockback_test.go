package reconcile

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
)

// wallClock is a wall clock that can be set back: synctest's time plus an
// offset, with no monotonic reading (as an injected clock has none).
// Timers run for their duration, whatever the offset.
type wallClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *wallClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset).Round(0)
}

func (c *wallClock) NewTimer(d time.Duration) clock.Timer { return clock.Real{}.NewTimer(d) }

func (c *wallClock) setBack(d time.Duration) {
	c.mu.Lock()
	c.offset -= d
	c.mu.Unlock()
}

// A Loop whose writes come at a steady pace that is no oscillation (3 a
// window, with NoProgress at 4), and whose clock is set back an hour part
// way: the writes from before the set-back used to stay within the window
// until the clock caught up with them, and the next write made a false
// NoProgress (the object Stalled=Oscillating and held). Now they do not
// count, and a detector left idle by the set-back is dropped at resync.
func TestClockSetBackIsNoOscillation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a", Labels: map[string]string{"n": "0"}}, Spec: appSpec{Replicas: 1}})
		var want, writes atomic.Int64
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			cached, _ := e.cache.Get(key)
			n := strconv.FormatInt(want.Load(), 10)
			if cached.Meta.Labels["n"] == n {
				return Result{}, nil
			}
			o := copyOf(cached)
			o.Meta.Labels["n"] = n
			_, err := e.st.As("app").Update(ctx, o)
			if err == nil {
				writes.Add(1)
			}
			return Result{}, err
		})
		clk := &wallClock{}
		m := NewMemMetrics()
		l := mustNew(t, r, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("app"), WithMetrics(m),
			WithClock(clk), WithResync(10*time.Minute, 0),
			WithOscillation(oscillation.Config{Window: time.Minute, NoProgressWrites: 4}))...)
		stop := start(t, l)
		synctest.Wait()
		for i := range 8 {
			if i == 3 {
				clk.setBack(time.Hour)
			}
			want.Add(1)
			l.Add("a")
			synctest.Wait()
			time.Sleep(25 * time.Second)
		}
		require.Equal(t, int64(8), writes.Load(), "every write was made: no hold")
		require.Zero(t, m.Oscillations("test", oscillation.NoProgress))
		require.False(t, conditions.IsTrue(e.get(t, "a").Conditions, conditions.Stalled))
		require.Nil(t, l.Inspect("a").Oscillation)

		// Set back again, and quiet: at the next resync the detector,
		// whose writes are all after the clock's time, is dropped.
		clk.setBack(time.Hour)
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		l.mu.Lock()
		detectors := l.detectors.len()
		l.mu.Unlock()
		require.Zero(t, detectors, "the idle detector was dropped")
		require.NoError(t, stop())
	})
}
