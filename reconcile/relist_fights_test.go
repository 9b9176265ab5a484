package reconcile

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// expiringWatches is a ListWatcher over a Store whose watches expire often:
// after an event, with probability p, the watch goes blind for up to lag
// (the events in between are lost) and then ends with ErrExpired, so the
// cache relists and sees the lost writes merged into one change per
// object, as after a real watch expiry.
type expiringWatches struct {
	st  *store.Store[appSpec, appStatus]
	p   float64
	lag time.Duration

	mu      sync.Mutex
	rnd     *rand.Rand
	expired atomic.Int64
}

func (w *expiringWatches) List(ctx context.Context, opts store.ListOptions) (*store.List[appSpec, appStatus], error) {
	return w.st.List(ctx, opts)
}

func (w *expiringWatches) roll() (expire bool, lag time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rnd.Float64() >= w.p {
		return false, 0
	}
	return true, time.Duration(w.rnd.Int64N(int64(w.lag))) + time.Millisecond
}

func (w *expiringWatches) Watch(ctx context.Context, from int64) (<-chan store.Event[appSpec, appStatus], error) {
	ctx, cancel := context.WithCancel(ctx)
	in, err := w.st.Watch(ctx, from)
	if err != nil {
		cancel()
		return nil, err
	}
	out := make(chan store.Event[appSpec, appStatus])
	go func() {
		defer close(out)
		defer func() {
			cancel()
			for range in {
			}
		}()
		for ev := range in {
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
			expire, lag := w.roll()
			if !expire {
				continue
			}
			blind := time.NewTimer(lag)
			for waiting := true; waiting; {
				select {
				case <-in: // lost: the relist will show it
				case <-blind.C:
					waiting = false
				case <-ctx.Done():
					blind.Stop()
					return
				}
			}
			w.expired.Add(1)
			select {
			case out <- store.Event[appSpec, appStatus]{Err: fmt.Errorf("relay: %w", store.ErrExpired)}:
			case <-ctx.Done():
			}
			return
		}
	}()
	return out, nil
}

// relistRun is one seeded run of the cooperating-managers scenario: a user
// ("user") keeps moving .spec.replicas of 20 objects, the Loop's
// reconciler ("app") applies .status.replicas to follow it, and the
// cache's watch expires often, so that relists merge the two managers'
// writes into one change. Nobody fights: every field has one writer.
type relistRun struct {
	fights, expired int
	converged       time.Duration // after the user stopped
}

func runRelistScenario(t *testing.T, seed uint64, osc bool) relistRun {
	var out relistRun
	synctest.Test(t, func(t *testing.T) {
		const objects = 20
		b := memstore.New()
		st, err := store.New[appSpec, appStatus](b, "App")
		require.NoError(t, err)
		src := &expiringWatches{st: st, p: 0.15, lag: 2 * time.Second, rnd: rand.New(rand.NewPCG(seed, 1))}
		c := cache.New[appSpec, appStatus](src, cache.WithRelistPeriod(0))
		ctx, cancel := context.WithCancel(context.Background())
		var bg sync.WaitGroup
		bg.Go(func() { _ = c.Run(ctx) })
		defer func() { cancel(); bg.Wait() }()
		for i := range objects {
			_, err := st.As("user").Create(ctx, &app{Meta: store.Meta{Name: fmt.Sprintf("o%02d", i)}, Spec: appSpec{Replicas: 1}})
			require.NoError(t, err)
		}

		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			o, ok := c.Get(key)
			if !ok || o.Status.Replicas == o.Spec.Replicas {
				return Result{}, nil
			}
			_, err := st.As("app").ApplyStatus(ctx, key, map[string]any{"replicas": o.Spec.Replicas}, nil, store.WithGeneration(o.Meta.Generation))
			if errors.Is(err, store.ErrConflict) {
				return Result{}, nil // the spec moved: its event is on its way
			}
			return Result{}, err
		})
		opts := append(fixedBackoff(), WithFieldManager("app"))
		m := NewMemMetrics()
		opts = append(opts, WithMetrics(m))
		if !osc {
			opts = append(opts, WithOscillation(oscillation.Config{FightWrites: 1 << 30, NoProgressWrites: 1 << 30, MaxWrites: 1 << 30}))
		}
		l := mustNew(t, r, FromStore(c, st, WithSortedKeys[appSpec, appStatus]()), opts...)
		stop := start(t, l)

		// The user moves one object every 50ms for half a minute.
		rnd := rand.New(rand.NewPCG(seed, 2))
		for i := range 600 {
			time.Sleep(50 * time.Millisecond)
			name := fmt.Sprintf("o%02d", rnd.IntN(objects))
			o, err := st.Get(ctx, name)
			require.NoError(t, err)
			o.Spec.Replicas = 2 + i%7
			_, err = st.As("user").Update(ctx, o)
			require.NoError(t, err)
		}
		stopped := time.Now()
		converged := func() bool {
			for i := range objects {
				o, err := st.Get(ctx, fmt.Sprintf("o%02d", i))
				require.NoError(t, err)
				if o.Status.Replicas != o.Spec.Replicas || conditions.IsTrue(o.Conditions, conditions.Stalled) {
					return false
				}
			}
			return true
		}
		for !converged() && time.Since(stopped) < 10*time.Minute {
			time.Sleep(100 * time.Millisecond)
		}
		out.converged = time.Since(stopped)
		out.fights = m.Oscillations("test", oscillation.Fight)
		out.expired = int(src.expired.Load())
		require.NoError(t, stop())
	})
	return out
}

// Two managers writing disjoint fields never fight, however their writes
// are merged: a relist that shows the user's spec and the Loop's status in
// one change is attributed path by path, from the field ownership after it,
// not all to the change's last writer. Over 20 seeds, with hundreds of
// expired watches, no Fight is reported and every run converges as fast as
// with detection off.
func TestRelistMergingTwoManagersWritesIsNoFight(t *testing.T) {
	if testing.Short() {
		t.Skip("20 seeded runs")
	}
	fights, runsWithFights, expired := 0, 0, 0
	var slowest time.Duration
	seeds := uint64(sweepSize(20))
	for seed := range seeds {
		r := runRelistScenario(t, seed, true)
		fights += r.fights
		expired += r.expired
		if r.fights > 0 {
			runsWithFights++
		}
		slowest = max(slowest, r.converged)
	}
	t.Logf("%d seeds: %d expired watches, %d fights in %d runs, slowest convergence %v after the user stopped", seeds, expired, fights, runsWithFights, slowest)
	require.Zero(t, fights, "false fights: %d in %d of %d runs", fights, runsWithFights, seeds)
	require.LessOrEqual(t, slowest, 10*time.Second, "convergence after the user stopped")
}
