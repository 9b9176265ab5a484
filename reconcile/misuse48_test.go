package reconcile_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

type m48Spec struct {
	Image string `json:"image"`
}

type m48Status struct {
	Seen string `json:"seen,omitempty"`
}

type m48Obj = store.Object[m48Spec, m48Status]

// m48Run runs c and a Loop named "app" over st and c, with r, in the
// current synctest bubble until the test ends.
func m48Run(t *testing.T, st *store.Store[m48Spec, m48Status], c *cache.Cache[m48Spec, m48Status], r reconcile.Reconciler[string], opts ...reconcile.Option) *reconcile.Loop[string] {
	t.Helper()
	loop, err := reconcile.New("app", r, reconcile.FromStore(c, st), opts...)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.Run(ctx) })
	wg.Go(func() { _ = loop.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return loop
}

// A RequeueAfterWrite from a pass that wrote is progress: it resets the
// failure count (as the package's result table says), so four failures,
// a pass that writes and asks to run again once the cache shows it, and
// one more failure make one failure in a row, not five, and no Stalled.
func TestMisuseARequeueAfterWriteThatWroteResetsTheFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[m48Spec, m48Status](memstore.New(), "App")
		require.NoError(t, err)
		w := st.As("app")
		_, err = w.Create(ctx, &m48Obj{Meta: store.Meta{Name: "a"}})
		require.NoError(t, err)
		c := cache.New(st)
		var mu sync.Mutex
		passes := 0
		r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
			mu.Lock()
			passes++
			n := passes
			mu.Unlock()
			switch {
			case n == 5:
				obj, _ := c.Get(key)
				next := *obj
				next.Status.Seen = "step"
				_, err := w.UpdateStatus(ctx, &next)
				return reconcile.Result{RequeueAfterWrite: true}, err
			}
			return reconcile.Result{}, errors.New("not yet")
		})
		loop := m48Run(t, st, c, r, reconcile.WithStallAfter(5), reconcile.WithLogger(slog.New(slog.DiscardHandler)))
		for {
			mu.Lock()
			n := passes
			mu.Unlock()
			if n >= 6 {
				break
			}
			time.Sleep(time.Millisecond) // the next retry is 8ms away or more
		}
		synctest.Wait() // the sixth pass has returned
		info := loop.Inspect("a")
		require.Equal(t, 1, info.Failures)
		require.False(t, info.Stalled)
		obj, err := st.Get(ctx, "a")
		require.NoError(t, err)
		for _, cond := range obj.Conditions {
			require.NotEqual(t, "Stalled", cond.Type, "Stalled was written")
		}
	})
}

// A reconcile that ignores its ctx and blocks past the timeout (a client
// call without a ctx) still holds its key: hints for it meanwhile never
// start a second reconcile of it, other keys go on, and a Run stopped
// while it blocks returns after the drain timeout with ErrDrainTimeout
// naming the key. When it returns at last, nothing breaks and every
// goroutine ends.
func TestMisuseAReconcileBlockedPastItsDeadlineHoldsItsKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[m48Spec, m48Status](memstore.New(), "App")
		require.NoError(t, err)
		user := st.As("user")
		for _, name := range []string{"stuck", "ok"} {
			_, err = user.Create(ctx, &m48Obj{Meta: store.Meta{Name: name}, Spec: m48Spec{Image: "v0"}})
			require.NoError(t, err)
		}
		c := cache.New(st)
		release := make(chan struct{})
		var mu sync.Mutex
		running, most := map[string]int{}, 0
		ran := map[string][]string{}
		r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
			obj, _ := c.Get(key)
			mu.Lock()
			running[key]++
			most = max(most, running[key])
			ran[key] = append(ran[key], obj.Spec.Image)
			first := key == "stuck" && len(ran[key]) == 1
			mu.Unlock()
			defer func() {
				mu.Lock()
				running[key]--
				mu.Unlock()
			}()
			if first {
				<-release // ignores ctx
				return reconcile.Result{}, ctx.Err()
			}
			return reconcile.Result{}, nil
		})
		loop, err := reconcile.New("app", r, reconcile.FromStore(c, st),
			reconcile.WithWorkers(2), reconcile.WithTimeout(time.Second),
			reconcile.WithDrainTimeout(5*time.Second), reconcile.WithLogger(slog.New(slog.DiscardHandler)))
		require.NoError(t, err)
		runCtx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { _ = c.Run(runCtx) })
		done := make(chan error, 1)
		go func() { done <- loop.Run(runCtx) }()
		time.Sleep(time.Second)
		synctest.Wait()

		for i := 1; i <= 3; i++ {
			for _, name := range []string{"stuck", "ok"} {
				obj, err := st.Get(ctx, name)
				require.NoError(t, err)
				obj.Spec.Image = "v" + string(rune('0'+i))
				_, err = user.Update(ctx, obj)
				require.NoError(t, err)
			}
			time.Sleep(10 * time.Second) // ten times the timeout
			synctest.Wait()
		}
		mu.Lock()
		require.Equal(t, 1, most, "two reconciles of one key at once")
		require.Equal(t, []string{"v0"}, ran["stuck"])
		require.Equal(t, "v3", ran["ok"][len(ran["ok"])-1])
		mu.Unlock()
		require.Equal(t, reconcile.Phase("running"), loop.Inspect("stuck").Phase)

		stop()
		var runErr error
		select {
		case runErr = <-done:
		case <-time.After(time.Minute):
			t.Fatal("Run did not return after its drain timeout")
		}
		require.ErrorIs(t, runErr, reconcile.ErrDrainTimeout)
		require.ErrorContains(t, runErr, "stuck")
		close(release)
		wg.Wait()
		synctest.Wait()
		mu.Lock()
		require.Equal(t, []string{"v0"}, ran["stuck"], "the stuck key ran again after Run returned")
		mu.Unlock()
	})
}
