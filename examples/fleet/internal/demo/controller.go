package demo

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// The desired side: a Group says how many instances of which image to run.
type (
	GroupSpec struct {
		Replicas int    `json:"replicas"`
		Image    string `json:"image"`
	}
	GroupStatus struct {
		// Running counts the group's instances that run the wanted image.
		Running int `json:"running"`
	}
	Group = store.Object[GroupSpec, GroupStatus]
)

// ControllerName is the Loop's name and the manager its writes carry.
const ControllerName = "fleet-controller"

// progressingRecheck is how often a group that is not Ready yet is looked at
// again; once Ready, the controller relies on fleet events, and resync
// repairs the ones the fleet dropped.
const progressingRecheck = 250 * time.Millisecond

// wantInstances returns the instances a group should have. Names derive from
// the group (web-03-0, web-03-1, ...), so an interrupted create is found and
// finished by the next pass instead of being duplicated.
func wantInstances(g *Group) []Instance {
	out := make([]Instance, g.Spec.Replicas)
	for i := range out {
		out[i] = Instance{Name: g.Meta.Name + "-" + strconv.Itoa(i), Group: g.Meta.Name, Image: g.Spec.Image, State: Running}
	}
	return out
}

// groupDiff says how what the fleet runs differs from what a group should
// have, field by field; it is empty exactly when instancesMatch is true.
// The demo uses it to explain a group that has not converged.
func groupDiff(g *Group, observed []Instance) diff.Changes {
	return diff.Diff(wantInstances(g), observed, diff.ListKeys(diff.MustParsePath("."), "name"), diff.EquateEmpty())
}

// instancesMatch reports whether the fleet runs exactly the instances a
// group should have: the controller's test for Ready and the demo's test
// for convergence. It is groupDiff(g, observed).Empty() without building
// the description, which at 100,000 groups is most of a check's cost, and
// without building wantInstances: each observed instance must be a
// distinct one of them, running the group's image.
func instancesMatch(g *Group, observed []Instance) bool {
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
func oneOfWanted(g *Group, in *Instance, seen *uint64) bool {
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

// controller reconciles one Group: it observes the group's instances,
// creates the missing ones, replaces the failed or outdated ones, removes
// the ones that should not exist, and reports Ready from what it observed.
type controller struct {
	groups *store.Store[GroupSpec, GroupStatus]
	cache  *cache.Cache[GroupSpec, GroupStatus] // this lifetime's cache
	fleet  *Fleet
	count  *counters
}

// counters are shared by every lifetime of the controller: they are the
// demo's bookkeeping, not the controller's memory.
type counters struct {
	fleetWrites  atomic.Int64
	statusWrites atomic.Int64
	// afterWrite is called after every write the controller makes, with
	// what it did (the crash injector counts them).
	afterWrite func(what string)
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
	have := make(map[string]Instance, len(observed))
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
func (c *controller) create(ctx context.Context, in Instance) error {
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
func (c *controller) writeStatus(ctx context.Context, g *Group, observed []Instance, ready bool) error {
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
