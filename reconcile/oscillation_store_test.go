package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"

	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store"
)

// The essay's three oscillation patterns, end to end over a store.

// Pattern 1: two controllers claim one field with whole-object updates.
// Each detects the fight, reports it as Stalled/Oscillating naming the path,
// and is held back, so the flapping slows to the hold's pace.
func TestFightBetweenTwoControllersIsDetected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		var writes atomic.Int64
		defaulter := func(manager string, replicas int) Reconciler[string] {
			return Func[string](func(ctx context.Context, key string) (Result, error) {
				cached, ok := e.cache.Get(key)
				if !ok || cached.Spec.Replicas == replicas {
					return Result{}, nil
				}
				o := copyOf(cached)
				o.Spec.Replicas = replicas
				_, err := e.st.As(manager).Update(ctx, o)
				if err == nil {
					writes.Add(1)
				}
				// A conflict is returned, so the Loop retries it: the write
				// that beat this one may be the other Loop's Reconciling
				// condition, which is no hint, so no later event would.
				return Result{}, store.IgnoreNotFound(err)
			})
		}
		ma, mb := NewMemMetrics(), NewMemMetrics()
		la := mustNew(t, defaulter("three", 3), FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("three"), WithMetrics(ma))...)
		lb, err := New("b", defaulter("two", 2), FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("two"), WithMetrics(mb))...)
		require.NoError(t, err)
		stopA, stopB := start(t, la), start(t, lb)
		time.Sleep(time.Minute)
		synctest.Wait()

		require.GreaterOrEqual(t, ma.Oscillations("test", oscillation.Fight)+mb.Oscillations("b", oscillation.Fight), 1)
		o := e.get(t, "a")
		c, ok := conditions.Get(o.Conditions, conditions.Stalled)
		require.True(t, ok)
		require.Equal(t, conditions.ReasonOscillating, c.Reason)
		require.Contains(t, c.Message, "fight: re-set .spec.replicas ", "the report names the flipping field")
		// Either side may be the one whose detector fired last: one of them
		// must still report the fight.
		info := la.Inspect("a")
		if info.Oscillation == nil {
			info = lb.Inspect("a")
		}
		require.NotNil(t, info.Oscillation, "neither loop reports the fight")
		require.Equal(t, oscillation.Fight, info.Oscillation.Kind)
		require.Equal(t, []diff.Path{diff.MustParsePath(".spec.replicas")}, info.Oscillation.Paths)
		// Without the hold both would flip the field as fast as events
		// arrive; held, they write a bounded number of times a minute.
		require.Less(t, writes.Load(), int64(30), "flapping is backed off")
		require.NoError(t, stopA())
		require.NoError(t, stopB())
	})
}

func ignoreConflict(err error) error {
	if errors.Is(err, store.ErrConflict) {
		return nil
	}
	return err
}

// labelHash hashes the spec and the labels, leaving out the labels in skip.
func labelHash(o *app, skip ...string) string {
	labels := maps.Clone(o.Meta.Labels)
	for _, k := range skip {
		delete(labels, k)
	}
	b, _ := json.Marshal([]any{o.Spec, labels})
	h := fnv.New64a()
	h.Write(b)
	return strconv.FormatUint(h.Sum64(), 16)
}

// Pattern 2: a label holding the hash of the object itself changes the
// object each time it is set: no progress is detected. Hashing without that
// label converges with one write.
func TestSelfReferentialHashIsNoProgress(t *testing.T) {
	for _, tt := range []struct {
		name      string
		skip      []string
		wantOsc   bool
		maxWrites int64
	}{
		// Per detection: 10 writes, plus at most one already on its way.
		{name: "hash includes its own label", wantOsc: true, maxWrites: 3 * 11},
		{name: "hash leaves its label out", skip: []string{"hash"}, maxWrites: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, "App", nil)
				defer e.stop()
				e.create(t, "user", &app{Meta: store.Meta{Name: "a", Labels: map[string]string{"team": "x"}}, Spec: appSpec{Replicas: 1}})
				var writes atomic.Int64
				r := Func[string](func(ctx context.Context, key string) (Result, error) {
					cached, _ := e.cache.Get(key)
					h := labelHash(cached, tt.skip...)
					if cached.Meta.Labels["hash"] == h {
						return Result{}, nil
					}
					o := copyOf(cached)
					o.Meta.Labels["hash"] = h
					rev, err := e.st.As("hasher").Update(ctx, o)
					if err != nil {
						return Result{}, err
					}
					writes.Add(1)
					RecordWrite(ctx, rev)
					return Result{RequeueAfterWrite: true}, nil // re-observe before claiming convergence
				})
				m := NewMemMetrics()
				l := mustNew(t, r, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("hasher"), WithMetrics(m))...)
				stop := start(t, l)
				time.Sleep(time.Minute)
				synctest.Wait()
				require.LessOrEqual(t, writes.Load(), tt.maxWrites)
				if !tt.wantOsc {
					require.Equal(t, int64(1), writes.Load())
					require.Zero(t, m.Oscillations("test", oscillation.NoProgress))
					require.False(t, conditions.IsTrue(e.get(t, "a").Conditions, conditions.Stalled))
				} else {
					// 10 writes, held 10s; 10 writes, held 20s; 10 writes, held 40s.
					require.Equal(t, 3, m.Oscillations("test", oscillation.NoProgress))
					c, ok := conditions.Get(e.get(t, "a").Conditions, conditions.Stalled)
					require.True(t, ok)
					require.Equal(t, conditions.ReasonOscillating, c.Reason)
					require.Contains(t, c.Message, "no progress: 10 writes within 1m0s to .metadata.labels.hash")
				}
				require.NoError(t, stop())
			})
		})
	}
}

// Pattern 3: status computed from the spec, while another actor writes the
// spec. UpdateStatus(WithGeneration) rejects the status computed for a stale
// generation, and the next pass writes it once.
func TestStatusFromSpecConvergesWithIfGeneration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		var raced atomic.Bool
		var statusWrites, rejected atomic.Int64
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			cached, _ := e.cache.Get(key)
			if cached.Status.Replicas == cached.Spec.Replicas {
				return Result{}, nil
			}
			o := copyOf(cached)
			o.Status.Replicas = cached.Spec.Replicas
			if !raced.Swap(true) {
				// Another actor changes the spec between our read and our write.
				other := copyOf(e.get(t, key))
				other.Spec.Replicas = 5
				_, err := e.st.As("user").Update(ctx, other)
				require.NoError(t, err)
			}
			_, err := e.st.As("app").UpdateStatus(ctx, o, store.WithGeneration(cached.Meta.Generation))
			if errors.Is(err, store.ErrConflict) {
				rejected.Add(1)
			} else if err == nil {
				statusWrites.Add(1)
			}
			return Result{}, err
		})
		l := mustNew(t, r, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("app"))...)
		stop := start(t, l)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, int64(1), rejected.Load(), "the status for the stale generation was rejected")
		require.Equal(t, int64(1), statusWrites.Load(), "the next pass wrote it once")
		o := e.get(t, "a")
		require.Equal(t, 5, o.Status.Replicas)
		require.False(t, conditions.IsTrue(o.Conditions, conditions.Stalled))
		require.NoError(t, stop())
	})
}

// Pattern 1 with server-side apply: the second controller's apply of a field
// the first owns is a conflict error, reported and backed off, and the field
// never flips.
func TestApplyTurnsAFightIntoAConflict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		// No object yet: the first apply creates it, so "three" owns replicas.
		var writes atomic.Int64
		applier := func(manager string, replicas int) Reconciler[string] {
			return Func[string](func(ctx context.Context, key string) (Result, error) {
				res, err := e.st.As(manager).Apply(ctx, key, map[string]any{"replicas": replicas})
				if err == nil && res.Changed {
					writes.Add(1)
				}
				return Result{}, err
			})
		}
		ma, mb := NewMemMetrics(), NewMemMetrics()
		la := mustNew(t, applier("three", 3), Sources(FromStore(e.cache, e.st), keySet("a")), append(fixedBackoff(), WithFieldManager("three"), WithMetrics(ma))...)
		stopA := start(t, la)
		synctest.Wait()
		lb, err := New("b", applier("two", 2), FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("two"), WithMetrics(mb))...)
		require.NoError(t, err)
		stopB := start(t, lb)
		time.Sleep(time.Minute)
		synctest.Wait()

		require.Equal(t, int64(1), writes.Load(), "one apply landed; the field never flipped")
		require.Equal(t, 3, e.get(t, "a").Spec.Replicas)
		require.Zero(t, ma.Oscillations("test", oscillation.Fight)+mb.Oscillations("b", oscillation.Fight), "no fight: a conflict instead")
		info := lb.Inspect("a")
		var ce *ownership.ConflictError
		require.ErrorAs(t, info.Err, &ce, "the second controller gets the conflict")
		require.GreaterOrEqual(t, info.Failures, 5)
		c, ok := conditions.Get(e.get(t, "a").Conditions, conditions.Stalled)
		require.True(t, ok, "reported as Stalled after repeated failures")
		require.Equal(t, conditions.ReasonFailing, c.Reason)
		require.NoError(t, stopA())
		require.NoError(t, stopB())
	})
}

// A status that tracks an outside system changes on every pass: 15 status
// writes a minute, each driven by an outside hint, are reports, not a loop,
// and are not flagged as oscillation.NoProgress.
func TestStatusTrackingAnOutsideSystemIsNotNoProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 3}})
		var running, writes atomic.Int64 // the outside system, and our status writes
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			cached, _ := e.cache.Get(key)
			phase := strconv.FormatInt(running.Load()%3+1, 10) + "/3 running"
			if cached.Status.Phase == phase {
				return Result{}, nil
			}
			o := copyOf(cached)
			o.Status.Phase = phase
			rev, err := e.st.As("app").UpdateStatus(ctx, o)
			if err == nil {
				writes.Add(1)
				RecordWrite(ctx, rev)
			}
			return Result{}, err
		})
		ticks := make(chan string)
		m := NewMemMetrics()
		l := mustNew(t, r, Sources(FromStore(e.cache, e.st), FromChannel[string](ticks)), append(fixedBackoff(), WithFieldManager("app"), WithMetrics(m))...)
		stop := start(t, l)
		synctest.Wait()
		for range 15 {
			time.Sleep(3 * time.Second)
			running.Add(1) // the outside system moves
			ticks <- "a"
			synctest.Wait()
		}
		require.Equal(t, int64(16), writes.Load(), "one status write per outside change, plus the first")
		require.Zero(t, m.Oscillations("test", oscillation.NoProgress))
		require.False(t, conditions.IsTrue(e.get(t, "a").Conditions, conditions.Stalled))
		require.NoError(t, stop())
	})
}

// Pattern 3, first half: status computed from the spec and written with
// whole-object writes, while another actor (an autoscaler) keeps writing the
// spec. This store's Update writes Meta and Spec, so the whole-object writer
// keeps its computed status in a label, as a kind without a status
// subresource would. Each of its writes carries the spec it read, which the
// autoscaler changed meanwhile: it reverts the autoscaler's change and the
// two churn, until the Loop detects the fight on .spec.replicas and holds the
// key back. (The second half, UpdateStatus with WithGeneration, is
// TestStatusFromSpecConvergesWithIfGeneration.)
func TestStatusFromSpecWithWholeObjectWritesChurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		var reverts atomic.Int64
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			cached, _ := e.cache.Get(key)
			observed := strconv.Itoa(cached.Spec.Replicas)
			if cached.Meta.Labels["observed-replicas"] == observed {
				return Result{}, nil
			}
			time.Sleep(time.Second) // computing the status takes time
			fresh, err := e.st.Get(ctx, key)
			if err != nil {
				return Result{}, err
			}
			o := copyOf(cached) // the whole object as read, with its status
			o.Meta.Labels = map[string]string{"observed-replicas": observed}
			o.Meta.Revision = fresh.Meta.Revision // last write wins
			if _, err := e.st.As("app").Update(ctx, o); err != nil {
				return Result{}, ignoreConflict(err)
			}
			if fresh.Spec.Replicas != cached.Spec.Replicas {
				reverts.Add(1)
			}
			return Result{}, nil
		})
		m := NewMemMetrics()
		l := mustNew(t, r, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("app"), WithMetrics(m))...)
		stop := start(t, l)

		// The autoscaler moves the spec every 400ms for half a minute.
		ctx, cancel := context.WithCancel(context.Background())
		var scaler sync.WaitGroup
		scaler.Go(func() {
			for i := range 75 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(400 * time.Millisecond):
				}
				o := copyOf(e.get(t, "a"))
				o.Spec.Replicas = 2 + i%5
				_, _ = e.st.As("autoscaler").Update(ctx, o)
			}
		})
		time.Sleep(29 * time.Second) // while the autoscaler still writes
		synctest.Wait()
		t.Logf("%d reverts, %d fights reported", reverts.Load(), m.Oscillations("test", oscillation.Fight))
		require.GreaterOrEqual(t, reverts.Load(), int64(3), "whole-object writes revert the other writer's spec")
		require.GreaterOrEqual(t, m.Oscillations("test", oscillation.Fight), 1, "the churn is detected")
		c, ok := conditions.Get(e.get(t, "a").Conditions, conditions.Stalled)
		require.True(t, ok)
		require.Equal(t, conditions.ReasonOscillating, c.Reason)
		require.Contains(t, c.Message, "fight: re-set .spec.replicas ")
		cancel()
		scaler.Wait()
		require.NoError(t, stop())
	})
}
