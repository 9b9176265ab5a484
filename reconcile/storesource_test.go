package reconcile

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

func TestCacheSourceHintsAndResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		e.create(t, "user", &app{Meta: store.Meta{Name: "b"}, Spec: appSpec{Replicas: 1}})
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, FromStore(e.cache, e.st), WithFieldManager("app"), WithResync(10*time.Minute, 0))
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"), "a new term reconciles every cached key")
		require.Equal(t, 1, s.count("b"))

		// Another actor's change is a hint.
		o := copyOf(e.get(t, "a"))
		o.Spec.Replicas = 2
		_, err := e.st.As("user").Update(context.Background(), o)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 2, s.count("a"))
		require.Equal(t, 1, s.count("b"))

		// A creation is a hint.
		e.create(t, "user", &app{Meta: store.Meta{Name: "c"}})
		synctest.Wait()
		require.Equal(t, 1, s.count("c"))

		// Resync: every cached key again, without any change.
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		require.Equal(t, 3, s.count("a"))
		require.Equal(t, 2, s.count("b"))
		require.Equal(t, 2, s.count("c"))
		require.NoError(t, stop())
	})
}

// crossplane#3455: a reconcile that writes status and fails must back off;
// its own status write is not a hint.
func TestOwnStatusWriteDoesNotDefeatBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		var r Func[string] = func(ctx context.Context, key string) (Result, error) {
			cached, _ := e.cache.Get(key)
			o := copyOf(cached)
			o.Status.Phase = "Failing " + time.Now().String()
			if _, err := e.st.As("app").UpdateStatus(ctx, o); err != nil {
				return Result{}, err
			}
			return Result{}, errBoom
		}
		s := scriptFunc(r)
		l := mustNew(t, s, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("app"), WithStallAfter(100))...)
		stop := start(t, l)
		time.Sleep(time.Second + 2*time.Second + 4*time.Second)
		synctest.Wait()
		require.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, s.gaps("a"),
			"own status writes did not cut the backoff short")

		// A change by another manager is a real hint and runs at once.
		o := copyOf(e.get(t, "a"))
		o.Meta.Labels = map[string]string{"team": "x"}
		_, err := e.st.As("user").Update(context.Background(), o)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 5, s.count("a"))
		require.NoError(t, stop())
	})
}

func TestStalledIsWrittenAsTheLoopsManagerAndIsNotAHint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Conditions: []store.Condition{{Type: conditions.Ready, Status: store.ConditionFalse, Reason: "Pending"}}})
		var fixed atomic.Bool
		s := newScript(func(string, int) (Result, error) {
			if !fixed.Load() {
				return Result{}, Blocked("SecretMissing", errors.New(`secret "db" not found`))
			}
			return Result{}, nil
		})
		l := mustNew(t, s, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("app"))...)
		stop := start(t, l)
		synctest.Wait()
		o := e.get(t, "a")
		require.Equal(t, store.LastWrite{Manager: "app-loop", Op: ownership.OpApplyStatus}, o.Meta.LastWrite)
		c, ok := conditions.Get(o.Conditions, conditions.Stalled)
		require.True(t, ok)
		require.Equal(t, store.ConditionTrue, c.Status)
		require.Equal(t, "SecretMissing", c.Reason)
		require.Equal(t, `test: secret "db" not found`, c.Message)
		require.True(t, time.Now().Equal(c.LastTransitionTime))
		require.True(t, conditions.IsTrue(o.Conditions, conditions.Stalled))
		r, _ := conditions.Get(o.Conditions, conditions.Ready)
		require.Equal(t, "Pending", r.Reason, "the user's Ready is left alone")
		require.Equal(t, 1, s.count("a"), "the Loop's own Stalled write is not a hint")
		info := l.Inspect("a")
		require.True(t, conditions.IsTrue(info.Conditions, conditions.Stalled))

		fixed.Store(true)
		time.Sleep(time.Second)
		synctest.Wait()
		c, _ = conditions.Get(e.get(t, "a").Conditions, conditions.Stalled)
		require.Equal(t, store.ConditionFalse, c.Status, "recovered")
		require.Equal(t, 2, s.count("a"))
		require.NoError(t, stop())
	})
}

// A Loop knows its Stalled condition by field ownership, not by its text: it
// leaves alone a Stalled whose message names it but that another manager
// owns, and clears one its own manager owns whatever the message says.
func TestLoopClearsOnlyTheStalledItsManagerOwns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}})
		stall := func(manager, message string) {
			t.Helper()
			c := store.Condition{Type: conditions.Stalled, Status: store.ConditionTrue, Reason: conditions.ReasonFailing, Message: message}
			_, err := e.st.As(manager).ApplyStatus(context.Background(), "a", nil, []store.Condition{c}, store.WithForce())
			require.NoError(t, err)
		}
		stall("other-loop", "test: 5 consecutive failures: boom") // names this Loop, owned by another
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("app"))...)
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"))
		require.True(t, conditions.IsTrue(e.get(t, "a").Conditions, conditions.Stalled), "another manager's Stalled stays")

		stall("app-loop", "other: 5 consecutive failures: boom") // this Loop's manager owns it now
		synctest.Wait()                                          // the cache has it
		require.Equal(t, 1, s.count("a"), "a change to Stalled alone is not a hint")
		l.Add("a")
		synctest.Wait()
		require.Equal(t, 2, s.count("a"))
		c, _ := conditions.Get(e.get(t, "a").Conditions, conditions.Stalled)
		require.Equal(t, store.ConditionFalse, c.Status, "the Loop clears the Stalled its manager owns")
		require.Equal(t, conditions.ReasonRecovered, c.Reason)
		require.NoError(t, stop())
	})
}

func TestChildChangeEnqueuesControllerOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parents := newEnv(t, "App", nil)
		defer parents.stop()
		children := newEnv(t, "Pod", parents.b)
		defer children.stop()
		p := &app{Meta: store.Meta{Name: "web"}}
		parents.create(t, "user", p)
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, Sources(FromStore(parents.cache, parents.st), FromOwned(children.cache, "App")), WithFieldManager("app"))
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, s.count("web"))

		children.create(t, "kubelet", &app{Meta: store.Meta{Name: "web-0",
			Owners: []store.OwnerRef{{Kind: "App", Name: "web", UID: p.Meta.UID, Controller: true}, {Kind: "Other", Name: "x", Controller: true}}}})
		synctest.Wait()
		require.Equal(t, 2, s.count("web"), "a child change enqueues its controller owner")
		require.Zero(t, s.count("x"), "owners of another kind are not this loop's")

		children.create(t, "kubelet", &app{Meta: store.Meta{Name: "stray",
			Owners: []store.OwnerRef{{Kind: "App", Name: "db", UID: "u"}}}})
		synctest.Wait()
		require.Zero(t, s.count("db"), "a non-controller owner is not enqueued")

		// The parent's own writes to its child are not hints.
		c := copyOf(children.get(t, "web-0"))
		c.Status.Phase = "Running"
		_, err := children.st.As("app").UpdateStatus(context.Background(), c)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 2, s.count("web"))
		// Deleting a child is a hint.
		_, err = children.st.As("kubelet").Delete(context.Background(), "web-0")
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 3, s.count("web"))
		require.NoError(t, stop())
	})
}

func TestRequeueReadsItsOwnWriteFromTheCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 3}})
		var seen []int
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			cached, _ := e.cache.Get(key)
			seen = append(seen, cached.Status.Replicas)
			if cached.Status.Replicas == cached.Spec.Replicas {
				return Result{}, nil
			}
			o := copyOf(cached)
			o.Status.Replicas++
			// The write is recorded through ctx: no RecordWrite needed.
			if _, err := e.st.As("app").UpdateStatus(ctx, o); err != nil {
				return Result{}, err
			}
			return Result{RequeueAfterWrite: true}, nil
		})
		l := mustNew(t, r, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("app"))...)
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, []int{0, 1, 2, 3}, seen, "every pass saw the previous pass's write")
		require.NoError(t, stop())
	})
}

func TestConvergenceMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		m := NewMemMetrics()
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			cached, _ := e.cache.Get(key)
			time.Sleep(3 * time.Second) // the work takes time
			o := copyOf(cached)
			if _, err := conditions.Set(&o.Conditions, store.Condition{Type: conditions.Ready, Status: store.ConditionTrue,
				Reason: "Available", ObservedGeneration: cached.Meta.Generation}, time.Now()); err != nil {
				return Result{}, err
			}
			_, err := e.st.As("app").UpdateStatus(ctx, o)
			return Result{}, err
		})
		l := mustNew(t, r, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("app"), WithMetrics(m))...)
		stop := start(t, l)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, []time.Duration{3 * time.Second}, m.ConvergeTimes("test"))
		require.Zero(t, m.UnconvergedNow("test"))

		o := copyOf(e.get(t, "a"))
		o.Spec.Replicas = 5
		_, err := e.st.As("user").Update(context.Background(), o)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 1, m.UnconvergedNow("test"), "a new generation is not converged")
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, []time.Duration{3 * time.Second, 3 * time.Second}, m.ConvergeTimes("test"))
		require.Zero(t, m.UnconvergedNow("test"))
		require.NoError(t, stop())
	})
}

// Own writes are judged by ownership, field by field, by default: a change
// written by this manager in which another actor's change arrived merged (as
// a relist delivers writes made while the cache was blind) still triggers.
func TestMergedChangeOfAnotherActorStillTriggers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A short history, so a cache that falls behind relists.
		e := newEnv(t, "App", memstore.New(memstore.WithHistorySize(4), memstore.WithWatchBuffer(1)))
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}})
		e.create(t, "user", &app{Meta: store.Meta{Name: "pad"}})
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("app"))...)
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"))

		// An own status write alone: not a hint.
		o := copyOf(e.get(t, "a"))
		o.Status.Phase = "Running"
		_, err := e.st.As("app").UpdateStatus(context.Background(), o)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"))

		// Blind the cache: its handlers stop at the next change of "pad".
		var gate atomic.Pointer[chan struct{}]
		release := make(chan struct{})
		gate.Store(&release)
		var merged []string // what changed in "a", as the cache delivers it
		e.cache.AddHandler(func(old, new *app) {
			if old != nil && new != nil && new.Meta.Name == "pad" {
				if ch := gate.Swap(nil); ch != nil {
					<-*ch
				}
			}
			if old != nil && new != nil && new.Meta.Name == "a" {
				owned, foreign := e.st.FieldChanges(old, new, "app")
				for _, p := range append(owned, foreign...) {
					merged = append(merged, p.String())
				}
			}
		})
		for i := range 10 {
			p := copyOf(e.get(t, "pad"))
			p.Spec.Replicas = i + 1
			_, err := e.st.As("user").Update(context.Background(), p)
			require.NoError(t, err)
			if i == 0 {
				synctest.Wait()
				require.Nil(t, gate.Load(), "the cache is blocked")
			}
		}
		// Another actor changes a label, then this manager writes the status:
		// the relist delivers both as one change, last written by "app".
		o = copyOf(e.get(t, "a"))
		o.Meta.Labels = map[string]string{"team": "x"}
		_, err = e.st.As("user").Update(context.Background(), o)
		require.NoError(t, err)
		o = copyOf(e.get(t, "a"))
		o.Status.Phase = "Degraded"
		_, err = e.st.As("app").UpdateStatus(context.Background(), o)
		require.NoError(t, err)
		close(release)
		time.Sleep(time.Minute) // the relist's backoff
		synctest.Wait()
		require.ElementsMatch(t, []string{".metadata.labels.team", ".status.phase"}, merged, "one merged change")
		require.Equal(t, "Degraded", e.get(t, "a").Status.Phase)
		require.Equal(t, 2, s.count("a"), "the merged label change is a hint")
		require.NoError(t, stop())
	})
}

// gatedSource is a syncer that syncs when the test says so.
type gatedSource struct {
	synced chan struct{}
}

func (g *gatedSource) Run(ctx context.Context, _ Sink[string]) error { <-ctx.Done(); return nil }

func (g *gatedSource) WaitForSync(ctx context.Context) error {
	select {
	case <-g.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// countingElector counts campaigns and always grants at once.
type countingElector struct{ n atomic.Int64 }

func (c *countingElector) Campaign(ctx context.Context) (context.Context, store.Fence, error) {
	c.n.Add(1)
	return ctx, store.Fence{}, nil
}

func TestCachesAreWarmBeforeTheLoopCampaigns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &gatedSource{synced: make(chan struct{})}
		el := &countingElector{}
		l := mustNew(t, newScript(func(string, int) (Result, error) { return Result{}, nil }), src, WithElector(el))
		stop := start(t, l)
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Zero(t, el.n.Load(), "no campaign before the caches are warm")
		require.False(t, l.Leading())
		close(src.synced)
		synctest.Wait()
		require.Equal(t, int64(1), el.n.Load())
		require.True(t, l.Leading())
		require.NoError(t, stop())
	})
}

// A dependency index over caches: a secret change enqueues every object
// that references it.
func TestCacheDependencyIndex(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		apps := newEnv(t, "App", nil)
		defer apps.stop()
		secrets := newEnv(t, "Secret", apps.b)
		defer secrets.stop()
		// An app references the secret named by its Spec.Image.
		require.NoError(t, apps.cache.AddIndex("secret", func(o *app) []string { return []string{o.Spec.Image} }))
		for name, secret := range map[string]string{"web": "db", "api": "db", "batch": "tls"} {
			apps.create(t, "user", &app{Meta: store.Meta{Name: name}, Spec: appSpec{Image: secret}})
		}
		secrets.create(t, "user", &app{Meta: store.Meta{Name: "db"}})
		bySecret := FromCacheMapped(secrets.cache, func(s *app) []string {
			var out []string
			for _, a := range apps.cache.ByIndex("secret", s.Meta.Name) {
				out = append(out, a.Meta.Name)
			}
			return out
		})
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, Sources(FromStore(apps.cache, apps.st), bySecret), WithFieldManager("app"))
		stop := start(t, l)
		synctest.Wait()
		base := map[string]int{"web": s.count("web"), "api": s.count("api"), "batch": s.count("batch")}

		o := copyOf(secrets.get(t, "db"))
		o.Spec.Replicas = 2 // the secret's content changes
		_, err := secrets.st.As("user").Update(context.Background(), o)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, base["web"]+1, s.count("web"))
		require.Equal(t, base["api"]+1, s.count("api"))
		require.Equal(t, base["batch"], s.count("batch"), "an app that does not reference it stays put")
		require.NoError(t, stop())
	})
}

// FromOwned's hints are owner names, keys of the Loop: New rejects an owner
// kind the Loop's FromStore source does not hold (the issue-16 mistake,
// "app" beside a store of kind "App", used to give no hints and no error),
// and an empty one. Without a FromStore source nothing says what the keys
// name, and any kind is accepted.
func TestFromOwnedRejectsAnOwnerKindTheLoopDoesNotReconcile(t *testing.T) {
	parents := newEnv(t, "App", nil)
	defer parents.stop()
	children := newEnv(t, "Pod", parents.b)
	defer children.stop()
	r := Func[string](func(context.Context, string) (Result, error) { return Result{}, nil })
	for _, tc := range []struct {
		name string
		src  Source[string]
		want string // "" accepted
	}{
		{"the reconciled kind", Sources(FromStore(parents.cache, parents.st), FromOwned(children.cache, "App")), ""},
		{"another spelling", Sources(FromStore(parents.cache, parents.st), FromOwned(children.cache, "app")),
			`FromOwned owner kind "app": the Loop reconciles App (its FromStore source)`},
		{"the child's own kind", Sources(FromOwned(children.cache, "Pod"), FromStore(parents.cache, parents.st)),
			`FromOwned owner kind "Pod"`},
		{"empty", Sources(FromStore(parents.cache, parents.st), FromOwned(children.cache, "")), "empty owner kind"},
		{"empty, without FromStore", FromOwned(children.cache, ""), "empty owner kind"},
		{"nested and wrapped", Sources(WithConditionWriter(Sources(FromOwned(children.cache, "Ap")), nil), FromStore(parents.cache, parents.st)),
			`FromOwned owner kind "Ap"`},
		{"no FromStore: cannot be known", Sources(FromOwned(children.cache, "Anything"), FromChannel(make(chan string))), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New("test", r, tc.src)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidOption)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
