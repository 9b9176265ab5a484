package reconcile_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
	"github.com/stretchr/testify/require"
)

// Black-box misuse cases: a user porting controller-runtime habits, seen
// from the public API only. Each case must be safe, bounded and loud.

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func misuseLogger(b *syncBuf) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) inc(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[k]++
	return c.n[k]
}

func (c *counter) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

func fixedKeys(keys ...string) reconcile.Source[string] {
	return reconcile.Keys(func() iter.Seq[string] { return slices.Values(keys) })
}

func runLoop(t *testing.T, l *reconcile.Loop[string]) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			err = <-done
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// A RequeueAfter near math.MaxInt64, with or without an error, is a very
// long wait: it must neither overflow into "now" (a spin) nor panic.
func TestMisuseHugeRequeueAfterIsALongWaitNotASpin(t *testing.T) {
	for _, tc := range []struct {
		d       time.Duration
		withErr bool
	}{{time.Hour * 2, false}, {100 * 365 * 24 * time.Hour, false}, {time.Duration(math.MaxInt64), false}, {time.Duration(math.MaxInt64), true}} {
		withErr, d := tc.withErr, tc.d
		t.Run(fmt.Sprint(d, " error=", withErr), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var c counter
				var logs syncBuf
				r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
					c.inc(key)
					if key == "ok" {
						return reconcile.Result{}, nil
					}
					var err error
					if withErr {
						err = errors.New("not yet")
					}
					return reconcile.Result{RequeueAfter: d}, err
				})
				l, err := reconcile.New("huge", r, fixedKeys("huge", "ok"), reconcile.WithLogger(misuseLogger(&logs)))
				require.NoError(t, err)
				stop := runLoop(t, l)
				time.Sleep(time.Hour)
				synctest.Wait()
				require.GreaterOrEqual(t, c.get("ok"), 5, "resync runs the healthy key")
				// Resync (10m ±10%) adds listed keys at low priority; a key
				// waiting for its RequeueAfter keeps waiting, so one run.
				require.Equal(t, 1, c.get("huge"), "a huge RequeueAfter ran the key again")
				info := l.Inspect("huge")
				require.True(t, info.Until.After(time.Now()), "until %v (%s %s)", info.Until, info.Phase, info.Why)
				// A hint still runs it at once: level-triggered.
				l.Add("huge")
				synctest.Wait()
				require.Equal(t, 2, c.get("huge"))
				require.NoError(t, stop())
			})
		})
	}
}

// A reconciler that fails at once, forever, on many keys: the Loop backs
// off; over an hour of simulated time each key runs a bounded number of
// times, and a healthy key added meanwhile converges at once.
func TestMisuseFastErrorsForeverAreBoundedAndOthersConverge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c counter
		var logs syncBuf
		keys := make([]string, 200)
		for i := range keys {
			keys[i] = fmt.Sprintf("bad-%03d", i)
		}
		r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
			c.inc(key)
			if strings.HasPrefix(key, "bad-") {
				return reconcile.Result{}, errors.New("boom")
			}
			return reconcile.Result{}, nil
		})
		l, err := reconcile.New("fast", r, fixedKeys(keys...), reconcile.WithLogger(misuseLogger(&logs)), reconcile.WithWorkers(4))
		require.NoError(t, err)
		stop := runLoop(t, l)
		time.Sleep(30 * time.Minute)
		synctest.Wait()
		l.Add("good")
		synctest.Wait()
		require.Equal(t, 1, c.get("good"), "a healthy key waits behind failing ones")
		time.Sleep(30 * time.Minute)
		synctest.Wait()
		total := 0
		for _, k := range keys {
			n := c.get(k)
			// 10ms doubling to 2m: ~14 runs to reach the cap, then one
			// every 2m (30 in an hour).
			require.LessOrEqual(t, n, 60, "key %s ran %d times in an hour", k, n)
			require.GreaterOrEqual(t, n, 5, "key %s was given up on", k)
			total += n
		}
		t.Logf("%d reconciles of %d failing keys in 1h", total, len(keys))
		require.Contains(t, logs.String(), "boom")
		lines := strings.Count(logs.String(), "\n")
		require.Less(t, lines, 400, "the failure log is not bounded: %d lines", lines)
		require.NoError(t, stop())
	})
}

// controller-runtime habit: return Result{Requeue: true} together with an
// error. The error's row applies (backoff), and the Loop warns.
func TestMisuseRequeueWithErrorFollowsTheErrorAndWarns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c counter
		var logs syncBuf
		r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
			c.inc(key)
			return reconcile.Result{Requeue: true, RequeueAfter: -time.Hour}, errors.New("both")
		})
		l, err := reconcile.New("both", r, fixedKeys("a"), reconcile.WithLogger(misuseLogger(&logs)))
		require.NoError(t, err)
		stop := runLoop(t, l)
		time.Sleep(time.Minute)
		synctest.Wait()
		n := c.get("a")
		require.LessOrEqual(t, n, 15, "ran %d times in a minute", n)
		require.GreaterOrEqual(t, n, 5)
		require.Contains(t, logs.String(), "level=WARN")
		require.Contains(t, logs.String(), "both")
		require.GreaterOrEqual(t, l.Inspect("a").Failures, 5, "a Requeue with an error is a failure")
		require.NoError(t, stop())
	})
}

// An error that wraps Terminal several layers down is terminal: not retried.
func TestMisuseWrappedTerminalIsNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c counter
		r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
			c.inc(key)
			err := fmt.Errorf("outer: %w", fmt.Errorf("mid: %w", reconcile.Terminal(errors.New("bad spec"))))
			return reconcile.Result{}, errors.Join(errors.New("other"), err)
		})
		var logs syncBuf
		l, err := reconcile.New("term", r, fixedKeys("a"), reconcile.WithLogger(misuseLogger(&logs)))
		require.NoError(t, err)
		stop := runLoop(t, l)
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		require.Equal(t, 1, c.get("a"))
		require.Contains(t, logs.String(), "bad spec")
		require.NoError(t, stop())
	})
}

// Run with a ctx already cancelled returns at once without reconciling,
// and the Loop cannot be run again.
func TestMisuseRunWithCancelledCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c counter
		r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
			c.inc(key)
			return reconcile.Result{}, nil
		})
		l, err := reconcile.New("dead", r, fixedKeys("a"))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.NoError(t, l.Run(ctx))
		require.Equal(t, 0, c.get("a"))
		require.ErrorIs(t, l.Run(context.Background()), reconcile.ErrAlreadyRunning)
		// Adding to a Loop that has stopped is harmless.
		l.Add("a")
		l.AddAfter("a", -time.Second)
		l.AddLow("a")
		synctest.Wait()
		require.Equal(t, 0, c.get("a"))
	})
}

// Two Runs at once: one works, the other is refused at once.
func TestMisuseConcurrentRunIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c counter
		r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
			c.inc(key)
			return reconcile.Result{}, nil
		})
		l, err := reconcile.New("twice", r, fixedKeys("a"))
		require.NoError(t, err)
		stop := runLoop(t, l)
		synctest.Wait()
		require.ErrorIs(t, l.Run(context.Background()), reconcile.ErrAlreadyRunning)
		require.Equal(t, 1, c.get("a"))
		require.NoError(t, stop())
	})
}

// Options given twice: the last wins; contradicting options are refused
// or resolved, never a panic.
func TestMisuseOptionsTwiceLastWins(t *testing.T) {
	r := reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) { return reconcile.Result{}, nil })
	l, err := reconcile.New("opts", r, nil, reconcile.WithWorkers(2), reconcile.WithWorkers(5), reconcile.WithFieldManager("a"), reconcile.WithFieldManager("b"))
	require.NoError(t, err)
	require.Equal(t, "b", l.Info().FieldManager)
	_, err = reconcile.New("opts", r, nil, reconcile.WithWorkers(2), reconcile.WithWorkers(-1))
	require.ErrorIs(t, err, reconcile.ErrInvalidOption)
	_, err = reconcile.New("opts", r, nil, reconcile.WithResync(time.Duration(math.MaxInt64), 0.99))
	require.NoError(t, err, "a huge resync period is valid")
	_, err = reconcile.New("opts", r, nil, reconcile.WithTimeout(time.Duration(math.MaxInt64)))
	require.NoError(t, err)
}

type widget struct{ N int }

// client-go habit: build the informer, forget to start it. A Loop over a
// Cache nobody runs warns while it waits, and when its ctx ends its error
// says the Cache's Run has not been called; it reconciles nothing.
func TestMisuseLoopOverACacheNobodyRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := store.New[widget, widget](memstore.New(), "Widget")
		require.NoError(t, err)
		_, err = st.As("user").Create(t.Context(), &store.Object[widget, widget]{Meta: store.Meta{Name: "a"}})
		require.NoError(t, err)
		c := cache.New(st) // no c.Run
		var n counter
		var logs syncBuf
		r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
			n.inc(key)
			return reconcile.Result{}, nil
		})
		l, err := reconcile.New("widgets", r, reconcile.FromStore(c, st), reconcile.WithLogger(misuseLogger(&logs)))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		err = l.Run(ctx)
		require.ErrorIs(t, err, reconcile.ErrNotSynced)
		require.ErrorIs(t, err, cache.ErrNotRunning)
		require.Contains(t, err.Error(), "Run has not been called")
		require.Contains(t, logs.String(), "waiting for a source to sync")
		// The warning every 30 seconds says why, not lastError=<nil>.
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "waiting for a source to sync") {
				require.Contains(t, line, "Run has not been called", line)
			}
		}
		t.Log(err)
		require.Equal(t, 0, n.get("a"))
	})
}

// A Cache whose Run already returned before it synced will never sync: the
// Loop fails at once with an error that says so, rather than waiting for
// its ctx.
func TestMisuseLoopOverACacheThatStoppedUnsyncedFailsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := store.New[widget, widget](memstore.New(), "Widget")
		require.NoError(t, err)
		c := cache.New(st)
		dead, cancelDead := context.WithCancel(t.Context())
		cancelDead()
		require.NoError(t, c.Run(dead))
		r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) { return reconcile.Result{}, nil })
		l, err := reconcile.New("widgets", r, reconcile.FromStore(c, st))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		start := time.Now()
		err = l.Run(ctx)
		require.ErrorIs(t, err, cache.ErrNotRunning)
		require.NotErrorIs(t, err, context.DeadlineExceeded)
		require.Zero(t, time.Since(start), "the Loop waited for a Cache that will never sync")
	})
}

// Bad data already in a store, written behind the Store's back (another
// tool, an old version, a hand edit): none of it stops the rest. Every
// good object converges, the bad values are quarantined and logged, and no
// bad key makes the Loop spin.
func TestMisuseBadDataInTheStoreDoesNotStopTheRest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		b := memstore.New()
		st, err := store.New[widget, widget](b, "Widget")
		require.NoError(t, err)
		raw := func(key, v string) {
			_, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(v)})
			require.NoError(t, err, key)
		}
		raw("Widget/garbage", "not json")
		raw("Widget/empty", "")
		raw("Widget/null", "null")
		raw("Widget/shape", `{"metadata":{"kind":"Widget","name":"shape"},"spec":"a string, not an object"}`)
		raw("Widget/number", `{"metadata":{"kind":"Widget","name":"number"},"spec":{"N":"seven"}}`)
		raw("Widget/Bad_Name", `{"metadata":{"kind":"Widget","name":"Bad_Name"},"spec":{"N":1}}`)
		raw("Widget/otherkind", `{"metadata":{"kind":"Gadget","name":"otherkind"},"spec":{"N":1}}`)
		raw("Widget/huge", `{"metadata":{"kind":"Widget","name":"huge","uid":"u-huge","generation":1},"spec":{"N":1,"x":"`+strings.Repeat("x", 1<<19)+`"}}`)
		raw("Widget/nested/deeper", `{"metadata":{"kind":"Widget","name":"deeper"},"spec":{"N":1}}`)
		const good = 20
		for i := range good {
			_, err := st.As("user").Create(ctx, &store.Object[widget, widget]{Meta: store.Meta{Name: fmt.Sprintf("good-%02d", i)}, Spec: widget{N: i}})
			require.NoError(t, err)
		}
		var logs syncBuf
		log := misuseLogger(&logs)
		c := cache.New(st, cache.WithLogger(log))
		go func() { _ = c.Run(ctx) }()
		var n counter
		r := reconcile.Func[string](func(ctx context.Context, name string) (reconcile.Result, error) {
			n.inc(name)
			o, ok := c.Get(name)
			if !ok {
				return reconcile.Result{}, nil
			}
			if o.Status.N == o.Spec.N {
				return reconcile.Result{}, nil
			}
			cp := *o
			cp.Status.N = o.Spec.N
			_, err := st.As("widgets").UpdateStatus(ctx, &cp, store.WithObserved(o.Meta))
			return reconcile.Result{}, err
		})
		l, err := reconcile.New("widgets", r, reconcile.FromStore(c, st), reconcile.WithLogger(log), reconcile.WithWorkers(2))
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- l.Run(ctx) }()
		time.Sleep(30 * time.Minute)
		synctest.Wait()
		for i := range good {
			name := fmt.Sprintf("good-%02d", i)
			o, err := st.Get(ctx, name)
			require.NoError(t, err)
			require.Equal(t, i, o.Status.N, "%s did not converge", name)
		}
		total := 0
		// A huge value that decodes is an object like any other.
		o, err := st.Get(ctx, "huge")
		require.NoError(t, err)
		require.Equal(t, 1, o.Status.N)
		for _, k := range []string{"garbage", "empty", "null", "shape", "number", "Bad_Name", "otherkind", "deeper", "nested/deeper"} {
			require.LessOrEqual(t, n.get(k), 10, "bad key %s ran %d times in 30m", k, n.get(k))
			total += n.get(k)
		}
		t.Logf("bad keys: %d reconciles; quarantined %d; undecodable %d", total, len(c.Quarantined()), c.Undecodable())
		require.GreaterOrEqual(t, len(c.Quarantined()), 6)
		require.Contains(t, logs.String(), "quarantined")
		cancel()
		require.NoError(t, <-done)
	})
}

// A user who wants "no resync" passes the largest period there is. That is
// valid, and must mean "practically never": the jittered period must not
// overflow into a negative wait that resyncs at once. Each Loop draws its
// jitter at random, about half the draws above the period, so 32 Loops
// miss an overflow with odds of 2^-32.
func TestMisuseHugeResyncPeriodIsNeverAnImmediateResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n counter
		r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
			n.inc(key)
			return reconcile.Result{}, nil
		})
		jitters := []float64{0.1, 0.5, 0.99, 0}
		for i := range 32 {
			l, err := reconcile.New(fmt.Sprint("never-", i), r, fixedKeys(fmt.Sprint("k", i)),
				reconcile.WithResync(time.Duration(math.MaxInt64), jitters[i%len(jitters)]))
			require.NoError(t, err)
			runLoop(t, l)
		}
		time.Sleep(24 * time.Hour)
		synctest.Wait()
		for i := range 32 {
			k := fmt.Sprint("k", i)
			require.Equal(t, 1, n.get(k), "loop %d (jitter %v) resynced %d times in a day", i, jitters[i%len(jitters)], n.get(k)-1)
		}
	})
}

// FromStore's cache and store must be over the same objects: the Loop
// reconciles the cache's names and writes Stalled through the store. A
// cache of another kind, prefix or backend is refused by New, naming both,
// rather than reconciling names that do not exist and writing Stalled
// nowhere.
func TestMisuseFromStoreWithACacheOfOtherObjectsIsRefused(t *testing.T) {
	r := reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) { return reconcile.Result{}, nil })
	b := memstore.New()
	widgets, err := store.New[widget, widget](b, "Widget")
	require.NoError(t, err)
	gadgets, err := store.New[widget, widget](b, "Gadget")
	require.NoError(t, err)
	teamWidgets, err := store.New[widget, widget](b, "Widget", store.WithKeyPrefix("team-a"))
	require.NoError(t, err)
	elsewhere, err := store.New[widget, widget](memstore.New(), "Widget")
	require.NoError(t, err)
	for name, c := range map[string]*cache.Cache[widget, widget]{
		"kind":    cache.New(gadgets),
		"prefix":  cache.New(teamWidgets),
		"backend": cache.New(elsewhere),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := reconcile.New("widgets", r, reconcile.FromStore(c, widgets))
			require.ErrorIs(t, err, reconcile.ErrInvalidOption)
			require.Contains(t, err.Error(), "FromStore")
		})
	}
	_, err = reconcile.New("widgets", r, reconcile.FromStore(cache.New(widgets), widgets))
	require.NoError(t, err, "the same store is fine")
	same, err := store.New[widget, widget](b, "Widget")
	require.NoError(t, err)
	_, err = reconcile.New("widgets", r, reconcile.FromStore(cache.New(same), widgets))
	require.NoError(t, err, "another Store value over the same objects is fine")
}

// Misuse: a cache source over a nil cache or store, or given a nil
// predicate, is refused by New (and by AddSource), naming what is nil, not
// found only when Run starts.
func TestMisuseNilPartsOfASourceAreRefusedByNew(t *testing.T) {
	r := reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) { return reconcile.Result{}, nil })
	widgets, err := store.New[widget, widget](memstore.New(), "Widget")
	require.NoError(t, err)
	c := cache.New(widgets)
	var nilCache *cache.Cache[widget, widget]
	var nilStore *store.Store[widget, widget]
	children := func(*store.Object[widget, widget]) []string { return nil }
	for name, tc := range map[string]struct {
		src  reconcile.Source[string]
		says string
		add  bool // AddSource takes it (not FromStore: it carries the ConditionWriter)
	}{
		"FromStore nil cache":       {reconcile.FromStore(nilCache, widgets), "nil cache", false},
		"FromStore nil store":       {reconcile.FromStore(c, nilStore), "nil store", false},
		"FromStore nil predicate":   {reconcile.FromStore(c, widgets, reconcile.WithPredicate[widget, widget](nil)), "nil predicate", false},
		"FromOwned nil cache":       {reconcile.FromOwned(nilCache, "Widget"), "nil cache", true},
		"FromOwned nil predicate":   {reconcile.FromOwned(c, "Widget", reconcile.WithPredicate[widget, widget](nil)), "nil predicate", true},
		"FromCacheMapped nil cache": {reconcile.FromCacheMapped(nilCache, children), "nil cache", true},
		"joined":                    {reconcile.Sources(reconcile.FromOwned(c, "Widget"), reconcile.FromOwned(nilCache, "Widget")), "nil cache", true},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := reconcile.New("widgets", r, tc.src)
			require.ErrorIs(t, err, reconcile.ErrInvalidOption)
			require.ErrorContains(t, err, tc.says)
			if !tc.add {
				return
			}
			l, err := reconcile.New("widgets", r, reconcile.FromStore(c, widgets))
			require.NoError(t, err)
			_, err = l.AddSource(tc.src)
			require.ErrorIs(t, err, reconcile.ErrInvalidOption, "AddSource refuses it too")
			require.ErrorContains(t, err, tc.says)
		})
	}
}

// myErr is a user's error type whose Error dereferences its receiver: a nil
// *myErr returned as an error is the classic typed-nil mistake.
type myErr struct{ msg string }

func (e *myErr) Error() string { return e.msg }

// panicErr is an error whose Error panics.
type panicErr struct{}

func (panicErr) Error() string { panic("Error() exploded") }

// Broken errors from a reconciler: a typed nil (non-nil interface, nil
// pointer whose Error panics), an error whose Error panics, panic(nil), and
// a panic with an error value that is a typed nil. Each is a failure of
// that key, logged, retried with backoff; the Loop survives and other
// keys converge.
func TestMisuseBrokenErrorsAndPanicsAreFailuresNotCrashes(t *testing.T) {
	cases := map[string]func() (reconcile.Result, error){
		"typed nil error": func() (reconcile.Result, error) {
			var e *myErr
			return reconcile.Result{}, e
		},
		"error whose Error panics": func() (reconcile.Result, error) { return reconcile.Result{}, panicErr{} },
		"panic(nil)": func() (reconcile.Result, error) {
			panic(nil)
		},
		"panic with a typed nil error": func() (reconcile.Result, error) {
			var e *myErr
			panic(e)
		},
		"panic with an error whose Error panics": func() (reconcile.Result, error) {
			panic(panicErr{})
		},
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n counter
				var logs syncBuf
				r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
					n.inc(key)
					if key == "bad" {
						return bad()
					}
					return reconcile.Result{}, nil
				})
				l, err := reconcile.New("broken", r, fixedKeys("bad", "good"), reconcile.WithLogger(misuseLogger(&logs)))
				require.NoError(t, err)
				stop := runLoop(t, l)
				time.Sleep(10 * time.Minute)
				synctest.Wait()
				require.GreaterOrEqual(t, n.get("good"), 1)
				bad := n.get("bad")
				require.GreaterOrEqual(t, bad, 3, "the bad key was not retried")
				require.LessOrEqual(t, bad, 30, "the bad key ran %d times in 10m", bad)
				info := l.Inspect("bad")
				require.GreaterOrEqual(t, info.Failures, 3)
				require.NotEmpty(t, info.LastError)
				require.Contains(t, logs.String(), "level=WARN")
				require.NoError(t, stop())
			})
		})
	}
}

// WithWorkers(math.MaxInt), "as many as you like", is refused by New: a
// worker is a goroutine and a slot, and Run would try to make them all.
func TestMisuseAbsurdWorkerCountIsRefused(t *testing.T) {
	r := reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) { return reconcile.Result{}, nil })
	for _, n := range []int{math.MaxInt, 1 << 40, 1<<16 + 1} {
		_, err := reconcile.New("many", r, nil, reconcile.WithWorkers(n))
		require.ErrorIs(t, err, reconcile.ErrInvalidOption, "workers %d", n)
		require.Contains(t, err.Error(), "at most")
	}
	_, err := reconcile.New("many", r, nil, reconcile.WithWorkers(1<<16))
	require.NoError(t, err)
}

// An empty key (a name read from an empty field, Add("")) that fails is a
// failing key like any other: the minute's summary names its reason as the
// reconciler gave it. Taking "the key's text" out of the reason must not
// take out "" between every two letters.
func TestMisuseEmptyKeyFailingKeepsTheSummaryReadable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs syncBuf
		r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
			return reconcile.Result{}, errors.New("name is required")
		})
		l, err := reconcile.New("empty", r, nil, reconcile.WithLogger(misuseLogger(&logs)))
		require.NoError(t, err)
		stop := runLoop(t, l)
		synctest.Wait()
		l.Add("")
		time.Sleep(90 * time.Second)
		synctest.Wait()
		require.NoError(t, stop())
		var summary string
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "keys failing") {
				summary = line
			}
		}
		require.NotEmpty(t, summary, "no summary line:\n%s", logs.String())
		require.Contains(t, summary, "name is required")
		require.NotContains(t, summary, "<key>n<key>")
	})
}

// A reconciler that hints its own key from inside Reconcile on every pass
// (l.Add(key), as if it were controller-runtime's Requeue) would rerun it at
// once forever: a hint while a key runs is one immediate rerun. The Loop
// paces such a key: from the 20th pass in a row that ended with a rerun due,
// each rerun waits a backoff delay, logged at Warn once per run of them,
// and the key is back to normal after one pass that ends with none.
func TestMisuseReconcilerThatAddsItsOwnKeyIsPaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c counter
		var logs syncBuf
		var l *reconcile.Loop[string]
		var stopAdding sync.Once
		adding := make(chan struct{})
		r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
			n := c.inc(key)
			select {
			case <-adding:
			default:
				// Bounded so that the test ends without pacing too.
				if key == "self" && n < 10_000 {
					l.Add(key)
				}
			}
			return reconcile.Result{}, nil
		})
		var err error
		l, err = reconcile.New("selfadd", r, fixedKeys("self", "ok"), reconcile.WithLogger(misuseLogger(&logs)), reconcile.WithResync(24*time.Hour, 0))
		require.NoError(t, err)
		stop := runLoop(t, l)
		time.Sleep(time.Minute)
		synctest.Wait()
		n := c.get("self")
		t.Logf("a key that hints itself every pass: %d runs in a minute", n)
		require.LessOrEqual(t, n, 100, "a key that hints itself every pass ran %d times in a minute", n)
		require.GreaterOrEqual(t, n, 20)
		require.Equal(t, 1, c.get("ok"))
		require.Equal(t, 1, strings.Count(logs.String(), "added again during each of its last passes"), logs.String())

		stopAdding.Do(func() { close(adding) })
		time.Sleep(5 * time.Minute) // the last paced rerun, which adds nothing
		synctest.Wait()
		before := c.get("self")
		l.Add("self")
		synctest.Wait()
		require.Equal(t, before+1, c.get("self"), "after a pass with no rerun, a hint runs the key at once")
		require.NoError(t, stop())
	})
}

// A huge key (100 KB) is the user's value, but the Loop's log lines about
// it stay small: each names the key by its first bytes and its length, the
// reconcile's own Logger too, so an hour of failures costs a bounded log.
func TestMisuseHugeKeyIsLoggedByItsStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := "huge-" + strings.Repeat("é", 50_000) // 100,005 bytes, cut on a rune boundary
		var logs syncBuf
		r := reconcile.Func[string](func(ctx context.Context, k string) (reconcile.Result, error) {
			reconcile.Logger(ctx).Info("reconciling")
			return reconcile.Result{}, errors.New("not yet")
		})
		l, err := reconcile.New("hugekey", r, fixedKeys(key), reconcile.WithLogger(misuseLogger(&logs)))
		require.NoError(t, err)
		stop := runLoop(t, l)
		time.Sleep(time.Hour)
		synctest.Wait()
		require.NoError(t, stop())
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		require.Greater(t, len(lines), 10)
		for _, line := range lines {
			require.Less(t, len(line), 1024, "a log line of %d bytes: %.200s", len(line), line)
			if strings.Contains(line, "key=") {
				require.Contains(t, line, "(100005 bytes)", line)
				require.True(t, utf8.ValidString(line))
			}
		}
	})
}

// Misuse: StoreConditions over a nil cache or store, given as the Loop's
// ConditionWriter, is refused by New, not found at the first Stalled write.
func TestMisuseStoreConditionsOverNothingIsRefused(t *testing.T) {
	r := reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) { return reconcile.Result{}, nil })
	widgets, err := store.New[widget, widget](memstore.New(), "Widget")
	require.NoError(t, err)
	c := cache.New(widgets)
	for name, w := range map[string]reconcile.ConditionWriter[string]{
		"nil cache": reconcile.StoreConditions[widget, widget](nil, widgets),
		"nil store": reconcile.StoreConditions[widget, widget](c, nil),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := reconcile.New("widgets", r, reconcile.WithConditionWriter(reconcile.FromChannel(make(chan string)), w))
			require.ErrorIs(t, err, reconcile.ErrInvalidOption)
			require.ErrorContains(t, err, name)
		})
	}
	_, err = reconcile.New("widgets", r, reconcile.WithConditionWriter(reconcile.FromChannel(make(chan string)), reconcile.StoreConditions(c, widgets)))
	require.NoError(t, err)
}

// Misuse: SectionChanges called with a nil side (a creation or deletion,
// which sources never judge) reports nothing changed, not a panic.
func TestMisuseSectionChangesOfANilSide(t *testing.T) {
	obj := &store.Object[widget, widget]{Meta: store.Meta{Name: "a", Generation: 1}}
	for _, pair := range [][2]*store.Object[widget, widget]{{nil, obj}, {obj, nil}, {nil, nil}} {
		owned, foreign := reconcile.SectionChanges(pair[0], pair[1], "m")
		require.Empty(t, owned)
		require.Empty(t, foreign)
	}
}
