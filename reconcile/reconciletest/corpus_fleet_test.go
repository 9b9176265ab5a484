package reconciletest_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/reconciletest"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
)

// examples/fleet: a Group wants N instances of an image; the controller
// observes the group's instances in the fleet (the fleet is the truth,
// not the store), creates the missing ones, replaces the failed or
// outdated ones, removes the ones that should not exist, and reports
// Ready from what it observed; at every resync it also lists the groups
// only the fleet still knows (orphans). Its functions below are the example's
// (TestFleetControllerIsTheExample), the example's Instance named
// fleetInstance here. The fleet is a fake: its instances are kept in the
// store (kind FleetInstance, each owned by its group's name), reached
// through the process's faulty view, so a create or a delete can fail or
// lose its reply; they run as soon as they are created, and the
// competing writer plays the fleet's faults (an instance fails or
// vanishes) and strays.

type (
	GroupSpec struct {
		Replicas int    `json:"replicas"`
		Image    string `json:"image"`
	}
	GroupStatus struct {
		Running int `json:"running"`
	}
	Group = store.Object[GroupSpec, GroupStatus]
)

// State is an instance's lifecycle state.
type State string

const (
	Running State = "running"
	Failed  State = "failed"
)

// fleetInstance is one member of the fleet, as an observation returns it.
type fleetInstance struct {
	Name  string `json:"name"`
	Group string `json:"group"`
	Image string `json:"image"`
	State State  `json:"state"`
}

const (
	ControllerName     = "fleet-controller"
	progressingRecheck = 250 * time.Millisecond
	fleetKind          = "FleetInstance"
)

var (
	errExists = errors.New("fleet: instance already exists")
	errGone   = errors.New("fleet: no such instance")
)

// fleetSpec is an instance as the fake fleet stores it.
type fleetSpec struct {
	Group string `json:"group"`
	Image string `json:"image"`
	State State  `json:"state"`
}

// Fleet is the fake fleet over the store.
type Fleet struct {
	st *store.Store[fleetSpec, struct{}]
}

func fleetOver(b kv.Backend) (*Fleet, error) {
	st, err := store.New[fleetSpec, struct{}](b, fleetKind)
	return &Fleet{st: st}, err
}

// List observes the instances of group, in name order. Like the
// example's, it cannot fail: a listing the process cannot make (it is
// dead) observes nothing.
func (f *Fleet) List(group string) []fleetInstance {
	l, err := f.st.List(context.Background(), store.ListOptions{})
	if err != nil {
		return nil
	}
	var out []fleetInstance
	for _, o := range l.Items {
		if o.Spec.Group == group {
			out = append(out, fleetInstance{Name: o.Meta.Name, Group: o.Spec.Group, Image: o.Spec.Image, State: o.Spec.State})
		}
	}
	slices.SortFunc(out, func(a, b fleetInstance) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Groups returns the groups that have instances, in name order. A
// listing the process cannot make (it is dead) returns none; the next
// resync lists again.
func (f *Fleet) Groups() []string {
	l, err := f.st.List(context.Background(), store.ListOptions{})
	if err != nil {
		return nil
	}
	var names []string
	for _, o := range l.Items {
		names = append(names, o.Spec.Group)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Create starts an instance; it runs at once. A name that exists gives
// errExists, whatever its image.
func (f *Fleet) Create(ctx context.Context, in fleetInstance) error {
	_, err := f.st.As("fleet").Create(ctx, &store.Object[fleetSpec, struct{}]{
		Meta: store.Meta{Name: in.Name, Owners: []store.OwnerRef{{Kind: "Group", Name: in.Group, Controller: true}}},
		Spec: fleetSpec{Group: in.Group, Image: in.Image, State: Running}})
	if errors.Is(err, store.ErrAlreadyExists) {
		return errExists
	}
	return err
}

// Delete stops an instance; a missing one gives errGone.
func (f *Fleet) Delete(ctx context.Context, name string) error {
	_, err := f.st.As("fleet").Delete(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return errGone
	}
	return err
}

// controller is the example's, its fields included.
type controller struct {
	groups *store.Store[GroupSpec, GroupStatus]
	cache  *cache.Cache[GroupSpec, GroupStatus] // this lifetime's cache
	fleet  *Fleet
	count  *counters
}

// counters are the demo's bookkeeping, kept so the methods are the
// example's.
type counters struct {
	fleetWrites  atomic.Int64
	statusWrites atomic.Int64
	afterWrite   func(what string)
}

// wantInstances returns the instances a group should have. Names derive from
// the group (web-03-0, web-03-1, ...), so an interrupted create is found and
// finished by the next pass instead of being duplicated.
func wantInstances(g *Group) []fleetInstance {
	out := make([]fleetInstance, g.Spec.Replicas)
	for i := range out {
		out[i] = fleetInstance{Name: g.Meta.Name + "-" + strconv.Itoa(i), Group: g.Meta.Name, Image: g.Spec.Image, State: Running}
	}
	return out
}

// instancesMatch reports whether the fleet runs exactly the instances a
// group should have: the controller's test for Ready and the demo's test
// for convergence. It is groupDiff(g, observed).Empty() without building
// the description, which at 100,000 groups is most of a check's cost, and
// without building wantInstances: each observed instance must be a
// distinct one of them, running the group's image.
func instancesMatch(g *Group, observed []fleetInstance) bool {
	n := g.Spec.Replicas
	if len(observed) != n {
		return false
	}
	if n > 64 { // past the set below; the demo's groups have 1 to 5
		for _, w := range wantInstances(g) {
			if !slices.Contains(observed, w) {
				return false
			}
		}
		return true
	}
	var seen uint64
	for i := range observed {
		if !oneOfWanted(g, &observed[i], &seen) {
			return false
		}
	}
	return true
}

// oneOfWanted reports whether in is one of the instances g should have,
// running its image, and not one of those in seen, which it adds in to.
// g has at most 64 replicas.
func oneOfWanted(g *Group, in *fleetInstance, seen *uint64) bool {
	if in.Group != g.Meta.Name || in.Image != g.Spec.Image || in.State != Running {
		return false
	}
	rest, ok := strings.CutPrefix(in.Name, g.Meta.Name)
	rest, ok2 := strings.CutPrefix(rest, "-")
	i, ok := instanceIndex(rest, ok && ok2)
	if !ok || i >= g.Spec.Replicas || *seen&(1<<i) != 0 {
		return false
	}
	*seen |= 1 << i
	return true
}

// instanceIndex returns the index that suffix spells as wantInstances
// spells it (strconv.Itoa of a non-negative int), when ok.
func instanceIndex(suffix string, ok bool) (int, bool) {
	if !ok || suffix == "" || len(suffix) > 9 || len(suffix) > 1 && suffix[0] == '0' {
		return 0, false
	}
	i := 0
	for _, c := range []byte(suffix) {
		if c < '0' || c > '9' {
			return 0, false
		}
		i = i*10 + int(c-'0')
	}
	return i, true
}

func (c *controller) wrote(counter *atomic.Int64, what string) {
	counter.Add(1)
	if c.count.afterWrite != nil {
		c.count.afterWrite(what)
	}
}

func (c *controller) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	observed := c.fleet.List(name) // a fresh observation: the fleet is the truth
	g, ok := c.cache.Get(name)
	if !ok {
		// The group is gone: remove what is left of it.
		var errs []error
		for _, in := range observed {
			errs = append(errs, c.delete(ctx, in.Name))
		}
		return reconcile.Result{}, errors.Join(errs...)
	}

	want := wantInstances(g)
	have := make(map[string]fleetInstance, len(observed))
	for _, in := range observed {
		have[in.Name] = in
	}
	wanted := make(map[string]bool, len(want))
	var errs []error
	acted := false
	for _, w := range want {
		wanted[w.Name] = true
		cur, ok := have[w.Name]
		switch {
		case !ok:
		case cur.State == Failed || cur.Image != w.Image:
			if err := c.delete(ctx, cur.Name); err != nil {
				errs = append(errs, err)
				continue
			}
		default:
			continue // present, running or starting, right image
		}
		acted = true
		if err := c.create(ctx, w); err != nil {
			errs = append(errs, err)
		}
	}
	for _, in := range observed {
		if !wanted[in.Name] { // scaled down, or started by someone else
			acted = true
			if err := c.delete(ctx, in.Name); err != nil {
				errs = append(errs, err)
			}
		}
	}

	ready := !acted && len(errs) == 0 && instancesMatch(g, observed)
	if err := c.writeStatus(ctx, g, observed, ready); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return reconcile.Result{}, err
	}
	if !ready {
		return reconcile.Result{RequeueAfter: progressingRecheck}, nil
	}
	return reconcile.Result{}, nil
}

// orphans lists the groups that still have instances but are not in the
// cache: a group deleted before its cleanup finished (a crash between two
// deletes) is in no store and sends no more events, so only the fleet
// still knows it. The Loop lists these keys at every resync and new term
// (reconcile.Keys), and the reconcile of a group it finds gone removes
// what is left of it. Groups in the cache are left out: FromStore lists
// them already.
func (c *controller) orphans() iter.Seq[string] {
	var gone []string
	for _, name := range c.fleet.Groups() {
		if _, ok := c.cache.Get(name); !ok {
			gone = append(gone, name)
		}
	}
	return slices.Values(gone)
}

// create and delete are idempotent: an instance that already exists, or is
// already gone, is what the caller wanted.
func (c *controller) create(ctx context.Context, in fleetInstance) error {
	err := c.fleet.Create(ctx, in)
	if err == nil {
		c.wrote(&c.count.fleetWrites, "create of instance "+in.Name)
	}
	if errors.Is(err, errExists) {
		return nil
	}
	return err
}

func (c *controller) delete(ctx context.Context, name string) error {
	err := c.fleet.Delete(ctx, name)
	if err == nil {
		c.wrote(&c.count.fleetWrites, "delete of instance "+name)
	}
	if errors.Is(err, errGone) {
		return nil
	}
	return err
}

// writeStatus reports what was observed, with the status subresource, and
// writes nothing when nothing changed.
func (c *controller) writeStatus(ctx context.Context, g *Group, observed []fleetInstance, ready bool) error {
	running := 0
	for _, in := range observed {
		if in.State == Running && in.Image == g.Spec.Image {
			running++
		}
	}
	cond := store.Condition{Type: conditions.Ready, Status: store.ConditionTrue, Reason: "AllRunning",
		Message: fmt.Sprintf("%d/%d running %s", running, g.Spec.Replicas, g.Spec.Image), ObservedGeneration: g.Meta.Generation}
	if !ready {
		// The message carries the running count only: a status that
		// changed with every instance's step would be a write per step.
		cond.Status, cond.Reason = store.ConditionFalse, "Progressing"
	}
	next := *g // cached objects are shared: change a copy
	next.Status.Running = running
	changed, err := conditions.Set(&next.Conditions, cond, time.Now())
	if err != nil {
		return err
	}
	if !changed && next.Status == g.Status {
		return nil
	}
	if _, err := c.groups.As(ControllerName).UpdateStatus(ctx, &next, store.WithObserved(g.Meta)); err != nil {
		return err
	}
	c.wrote(&c.count.statusWrites, "status of "+g.Meta.Name)
	return nil
}

func fleetConfig() reconciletest.Config[GroupSpec, GroupStatus] {
	images := []string{"web:1", "web:2"}
	return reconciletest.Config[GroupSpec, GroupStatus]{
		Name: ControllerName,
		Kind: "Group",
		Object: func(i int, rng *rand.Rand) *Group {
			return &Group{Meta: store.Meta{Name: fmt.Sprintf("web-%02d", i)}, Spec: GroupSpec{Replicas: 1 + rng.IntN(3), Image: images[rng.IntN(len(images))]}}
		},
		Setup: func(env *reconciletest.Env[GroupSpec, GroupStatus]) (reconcile.Reconciler[string], error) {
			fleet, err := fleetOver(env.Backend)
			if err != nil {
				return nil, err
			}
			// The fleet's change events, a hint for the instance's group.
			env.Watch(reconcile.FromCacheMapped(reconciletest.NewCache(env.Process, fleet.st), func(o *store.Object[fleetSpec, struct{}]) []string {
				return []string{o.Spec.Group}
			}))
			// As the example's: at every resync and new term, the groups
			// only the fleet still knows are keys too.
			ctl := &controller{groups: env.Store, cache: env.Cache, fleet: fleet, count: &counters{}}
			env.Watch(reconcile.Keys(ctl.orphans))
			return ctl, nil
		},
		Converged: func(ctx context.Context, b kv.Backend, g *Group) error {
			if err := reconciletest.ReadyConverged(ctx, b, g); err != nil {
				return err
			}
			fleet, err := fleetOver(b)
			if err != nil {
				return err
			}
			if observed := fleet.List(g.Meta.Name); !instancesMatch(g, observed) {
				return fmt.Errorf("desired and observed differ: the fleet runs %v", observed)
			}
			return nil
		},
		// A user scales and upgrades groups; the fleet fails or loses an
		// instance, or someone starts a stray one.
		Compete: func(ctx context.Context, b kv.Backend, w *store.Writer[GroupSpec, GroupStatus], name string, rng *rand.Rand) error {
			fleet, err := fleetOver(b)
			if err != nil {
				return err
			}
			observed := fleet.List(name)
			switch n := rng.IntN(4); {
			case n == 0 && len(observed) > 0:
				in := observed[rng.IntN(len(observed))]
				o, err := fleet.st.Get(ctx, in.Name)
				if err != nil {
					return store.IgnoreNotFound(err)
				}
				o.Spec.State = Failed
				_, err = fleet.st.As("fleet").Update(ctx, o)
				return err
			case n == 1 && len(observed) > 0:
				return store.IgnoreNotFound(fleet.Delete(ctx, observed[rng.IntN(len(observed))].Name))
			case n == 2:
				err := fleet.Create(ctx, fleetInstance{Name: name + "-stray", Group: name, Image: images[0]})
				if errors.Is(err, errExists) {
					return nil
				}
				return err
			}
			groups, err := store.New[GroupSpec, GroupStatus](b, "Group")
			if err != nil {
				return err
			}
			g, err := groups.Get(ctx, name)
			if err != nil {
				return store.IgnoreNotFound(err)
			}
			g.Spec.Replicas = 1 + rng.IntN(3)
			g.Spec.Image = images[rng.IntN(len(images))]
			_, err = w.Update(ctx, g)
			return err
		},
		Faults: reconciletest.AllFaults(),
	}
}

// The schedules that once caught the example leaking the instances of a
// deleted group whose cleanup was cut short (seed 95: a crash after the
// first of three deletes, then the next process's term ends before its
// deletes land). A later process's cache never has the group, and fleet
// events come only when an instance changes, so nothing made a key of a
// group that only the fleet still knew. The example now lists, at every
// resync and new term, the groups that have instances (Fleet.Groups, a
// reconcile.Keys source), and the reconcile of such a group finds it gone
// and removes what is left of it.
func TestFleetControllerSweepsAGroupDeletedUnseen(t *testing.T) {
	cfg := fleetConfig()
	for _, seed := range []uint64{95, 156} {
		rep := reconciletest.Simulate(t, cfg, seed)
		require.False(t, rep.Failed(), "seed %d: %s", seed, rep)
	}
}

// TestFleetControllerIsTheExample keeps the corpus's copy of
// examples/fleet's controller honest (the root module cannot import the
// examples module): its functions are the example's, byte for byte, but
// for the name of the example's Instance (fleetInstance here).
func TestFleetControllerIsTheExample(t *testing.T) {
	ex, err := os.ReadFile("../../examples/fleet/internal/demo/controller.go")
	require.NoError(t, err)
	here, err := os.ReadFile("corpus_fleet_test.go")
	require.NoError(t, err)
	instance := regexp.MustCompile(`\bInstance\b`)
	for _, sig := range []string{"func wantInstances(", "func instancesMatch(", "func oneOfWanted(", "func instanceIndex(", "func (c *controller) wrote(",
		"func (c *controller) Reconcile(", "func (c *controller) orphans(", "func (c *controller) create(", "func (c *controller) delete(", "func (c *controller) writeStatus("} {
		assert.Equal(t, instance.ReplaceAllString(methodOf(t, string(ex), sig), "fleetInstance"), methodOf(t, string(here), sig),
			"%s differs from examples/fleet/internal/demo/controller.go", sig)
	}
}
