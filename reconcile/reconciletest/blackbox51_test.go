package reconciletest_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/gc"
	"github.com/steady-go/steady/reconcile/reconciletest"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
)

func bb51Schedules(n int) int {
	if raceEnabled {
		return 3
	}
	return n
}

// readyEcho echoes the spec into the status and sets Ready at the
// generation it read, with conditions.Set, in one UpdateStatus: the
// default Converged (ReadyConverged) judges it.
type readyEcho struct {
	cache *cache.Cache[greetingSpec, greetingStatus]
	w     *store.Writer[greetingSpec, greetingStatus]
}

func (e readyEcho) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	g, ok := e.cache.Get(name)
	if !ok {
		return reconcile.Result{}, nil
	}
	cp := *g
	cp.Status.Echo = g.Spec.Text
	changed, err := conditions.Set(&cp.Conditions, store.Condition{Type: conditions.Ready, Status: store.ConditionTrue,
		Reason: "Echoed", ObservedGeneration: g.Meta.Generation}, time.Now())
	if err != nil {
		return reconcile.Result{}, err
	}
	if !changed && g.Status.Echo == g.Spec.Text {
		return reconcile.Result{}, nil
	}
	rev, err := e.w.UpdateStatus(ctx, &cp)
	reconcile.RecordWrite(ctx, rev)
	return reconcile.Result{}, err
}

// A pool and its members, as a user writes them from the package
// documentation: members named for the pool and its UID, each with the pool
// as its controller owner, collected by a GC run with Env.Go under the
// harness Loop's term; a finalizer that deletes the members (read afresh
// from the store) before the pool goes; Ready at the generation read, once
// the members the cache shows are the ones the spec asks for.
type poolSpec struct {
	Size int `json:"size"`
}

type poolStatus struct {
	Members int `json:"members"`
}

type memberSpec struct {
	Index int `json:"index"`
}

type (
	pool   = store.Object[poolSpec, poolStatus]
	member = store.Object[memberSpec, struct{}]
)

const poolFinalizer = "pools.bb51.test/members"

type pools struct {
	bug     bb51Bugs // none for the correct controller
	pools   *store.Store[poolSpec, poolStatus]
	poolc   *cache.Cache[poolSpec, poolStatus]
	members *store.Store[memberSpec, struct{}]
	memberc *cache.Cache[memberSpec, struct{}]
	manager string
}

func memberName(p *pool, i int) string { return fmt.Sprintf("%s-%s-%d", p.Meta.Name, p.Meta.UID, i) }

func (r *pools) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	p, ok := r.poolc.Get(name)
	if !ok {
		return reconcile.Result{}, nil // its members point at its UID: the GC collects them
	}
	pw, mw := r.pools.As(r.manager), r.members.As(r.manager)
	if p.Meta.DeletionRequested && !r.bug["no finalizer"] {
		if !slices.Contains(p.Meta.Finalizers, poolFinalizer) {
			return reconcile.Result{}, nil
		}
		// The members as stored, not as cached: a member the cache has yet
		// to show must not outlive the finalizer.
		l, err := r.members.List(ctx, store.ListOptions{NamePrefix: p.Meta.Name + "-" + p.Meta.UID + "-"})
		if err != nil {
			return reconcile.Result{}, err
		}
		for _, m := range l.Items {
			if _, err := mw.Delete(ctx, m.Meta.Name); store.IgnoreNotFound(err) != nil {
				return reconcile.Result{}, err
			}
		}
		cp := *p
		cp.Meta.Finalizers = slices.DeleteFunc(slices.Clone(p.Meta.Finalizers), func(f string) bool { return f == poolFinalizer })
		_, err = pw.Update(ctx, &cp)
		return reconcile.Result{}, store.IgnoreNotFound(err)
	}
	if !slices.Contains(p.Meta.Finalizers, poolFinalizer) && !r.bug["no finalizer"] {
		cp := *p
		cp.Meta.Finalizers = append(slices.Clone(p.Meta.Finalizers), poolFinalizer)
		_, err := pw.Update(ctx, &cp)
		return reconcile.Result{RequeueAfterWrite: err == nil}, err
	}
	have := map[string]bool{}
	for _, m := range r.memberc.ByIndex(cache.IndexOwnerUID, p.Meta.UID) {
		have[m.Meta.Name] = true
	}
	wrote := false
	for i := range p.Spec.Size {
		n := memberName(p, i)
		if have[n] {
			delete(have, n)
			continue
		}
		m := &member{Meta: store.Meta{Name: n, Owners: []store.OwnerRef{{Kind: "Pool", Name: p.Meta.Name, UID: p.Meta.UID, Controller: true}}},
			Spec: memberSpec{Index: i}}
		if _, err := mw.Create(ctx, m); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
			return reconcile.Result{}, err
		}
		wrote = true
	}
	for n := range have { // beyond the size
		if _, err := mw.Delete(ctx, n); store.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, err
		}
		wrote = true
	}
	if wrote {
		return reconcile.Result{RequeueAfterWrite: true}, nil // observe them before claiming Ready
	}
	cp := *p
	cp.Status.Members = p.Spec.Size
	gen := p.Meta.Generation
	if r.bug["no observedGeneration"] {
		gen = 0
	}
	changed, err := conditions.Set(&cp.Conditions, store.Condition{Type: conditions.Ready, Status: store.ConditionTrue,
		Reason: "MembersReady", ObservedGeneration: gen}, time.Now())
	if r.bug["status every pass"] {
		cp.Status.Members = p.Status.Members + 1
		changed = true
	}
	if err != nil || (!changed && p.Status.Members == p.Spec.Size) {
		return reconcile.Result{}, err
	}
	_, err = pw.UpdateStatus(ctx, &cp)
	return reconcile.Result{}, err
}

// bb51Bugs are the bugs planted in pools, by name.
type bb51Bugs map[string]bool

func poolsConfig() reconciletest.Config[poolSpec, poolStatus] { return buggyPools() }

// buggyPools is poolsConfig with the named bugs planted: "no GC" (no
// collector), "no finalizer", "no observedGeneration" (Ready at generation
// 0), "status every pass" (a status field bumped by every pass).
func buggyPools(bugs ...string) reconciletest.Config[poolSpec, poolStatus] {
	bug := bb51Bugs{}
	for _, b := range bugs {
		bug[b] = true
	}
	return reconciletest.Config[poolSpec, poolStatus]{
		Kind:    "Pool",
		Objects: 4,
		Object: func(i int, rng *rand.Rand) *pool {
			return &pool{Meta: store.Meta{Name: fmt.Sprintf("pool%d", i)}, Spec: poolSpec{Size: 1 + rng.IntN(3)}}
		},
		Setup: func(env *reconciletest.Env[poolSpec, poolStatus]) (reconcile.Reconciler[string], error) {
			members, err := reconciletest.NewStore[memberSpec, struct{}](env.Process, "Member")
			if err != nil {
				return nil, err
			}
			memberc := reconciletest.NewCache(env.Process, members)
			env.Watch(reconcile.FromOwned(memberc, "Pool"))
			collector, err := gc.New("gc", memberc, members, []gc.Owner{gc.OwnerKind(env.Cache, env.Store)},
				reconcile.WithElector(env.Elector()), reconcile.WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				return nil, err
			}
			if !bug["no GC"] {
				env.Go(collector.Run)
			}
			return &pools{bug: bug, pools: env.Store, poolc: env.Cache, members: members, memberc: memberc, manager: env.Manager}, nil
		},
		// Another manager resizes pools.
		Compete: func(ctx context.Context, b kv.Backend, w *store.Writer[poolSpec, poolStatus], name string, rng *rand.Rand) error {
			st, err := store.New[poolSpec, poolStatus](b, "Pool")
			if err != nil {
				return err
			}
			p, err := st.Get(ctx, name)
			if err != nil {
				return err
			}
			p.Spec.Size = rng.IntN(4)
			_, err = w.Update(ctx, p)
			return err
		},
		Faults: reconciletest.AllFaults(),
	}
}

// Correct controllers a user writes from the package documentation, each
// in a setting the corpus does not hold, must pass every schedule: echo
// with four workers over twelve objects, echo that sets Ready with
// conditions.Set (judged by the default Converged), echo under every fault
// at far more than AllFaults, echo over a single object, and pools (owner
// references, a GC under the Loop's term, a finalizer, Ready at the
// generation read, a competitor resizing pools).
func TestBlackbox51CorrectControllersPass(t *testing.T) {
	for name, mk := range map[string]func() reconciletest.Config[greetingSpec, greetingStatus]{
		"echo, 4 workers, 12 objects": func() reconciletest.Config[greetingSpec, greetingStatus] {
			cfg := echoConfig()
			cfg.Workers, cfg.Objects = 4, 12
			return cfg
		},
		"echo, Ready by conditions.Set, default Converged": func() reconciletest.Config[greetingSpec, greetingStatus] {
			cfg := echoConfig()
			cfg.Converged = nil
			cfg.Setup = func(env *reconciletest.Env[greetingSpec, greetingStatus]) (reconcile.Reconciler[string], error) {
				return readyEcho{cache: env.Cache, w: env.Store.As(env.Manager)}, nil
			}
			return cfg
		},
		"echo, every fault at its most": func() reconciletest.Config[greetingSpec, greetingStatus] {
			cfg := echoConfig()
			f := reconciletest.AllFaults()
			f.DropEvents, f.DuplicateEvents, f.ExpireWatches = 0.5, 0.5, 0.5
			f.ConflictWrites, f.UnavailableWrites, f.TimeoutWrites = 0.3, 0.3, 0.3
			f.TimeTravel, f.Crashes, f.LeadershipLosses, f.Deletes, f.StaleReads = 1, 6, 3, 6, 10
			f.CompetingWrites = 0.2
			cfg.Faults = f
			return cfg
		},
		"echo, one object": func() reconciletest.Config[greetingSpec, greetingStatus] {
			cfg := echoConfig()
			cfg.Objects = 1
			return cfg
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := mk()
			cfg.Schedules = bb51Schedules(20)
			reconciletest.Run(t, cfg)
		})
	}
	t.Run("pools: owners, GC, finalizer", func(t *testing.T) {
		cfg := poolsConfig()
		cfg.Schedules = bb51Schedules(40)
		reconciletest.Run(t, cfg)
	})
}

// Broken variants of pools are caught, and the failure names the harm and
// says what is wrong. The controller with no cleanup at all (no finalizer,
// no GC) leaks the members of every deleted pool in the fault-free run
// too: the end-state check excused a leak both runs shared, and it passed
// 19 of the first 20 schedules (seeds 0 to 4 but 3).
func TestBlackbox51BrokenControllersAreNamed(t *testing.T) {
	for _, tc := range []struct {
		bugs []string
		harm reconciletest.Harm
		says string
	}{
		{[]string{"no observedGeneration"}, reconciletest.HarmNotConverged, "Ready observed generation 0, object is at"},
		{[]string{"status every pass"}, reconciletest.HarmStorm, "writes after it converged"},
		{[]string{"no GC", "no finalizer"}, reconciletest.HarmEndState, "is left at the end, its owner gone: nothing deleted it"},
	} {
		t.Run(strings.Join(tc.bugs, ", "), func(t *testing.T) {
			for seed := range uint64(5) { // each bug shows in every schedule
				r := reconciletest.Simulate(t, buggyPools(tc.bugs...), seed)
				require.True(t, r.Failed(), "seed %d passed", seed)
				require.Equal(t, tc.harm, r.Harms[0], "%s", r.Violations[0])
				require.True(t, strings.HasPrefix(r.Violations[0], string(tc.harm)+": "), r.Violations[0])
				require.Contains(t, r.Violations[0], tc.says)
			}
		})
	}
}

// Durations so long that the schedule, or its convergence bound, would
// overflow a time.Duration are a Config error. Validate took them, and the
// bound wrapped to a negative: every object of the correct echo "has not
// converged within the bound (0s after faults stopped)".
func TestBlackbox51ValidateRefusesDurationsThatOverflow(t *testing.T) {
	for name, set := range map[string]func(*reconciletest.Config[greetingSpec, greetingStatus]){
		"Resync":     func(c *reconciletest.Config[greetingSpec, greetingStatus]) { c.Resync = math.MaxInt64 },
		"BackoffCap": func(c *reconciletest.Config[greetingSpec, greetingStatus]) { c.BackoffCap = math.MaxInt64 / 4 },
		"Faults.Duration": func(c *reconciletest.Config[greetingSpec, greetingStatus]) {
			c.Faults.Duration = math.MaxInt64 - time.Minute
		},
		"ReconcileTime": func(c *reconciletest.Config[greetingSpec, greetingStatus]) { c.ReconcileTime = math.MaxInt64 / 8 },
	} {
		cfg := echoConfig()
		set(&cfg)
		err := reconciletest.Validate(cfg)
		require.ErrorIs(t, err, reconciletest.ErrConfig, name)
		require.ErrorContains(t, err, "durations too long", name)
	}
	cfg := echoConfig()
	cfg.Resync, cfg.Faults.Duration = 100*24*time.Hour, 24*time.Hour // long, and fine
	require.NoError(t, reconciletest.Validate(cfg))
}
