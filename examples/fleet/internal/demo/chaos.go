package demo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

// chaos schedules the faults that are not the fleet's own: other writers
// interfering with the groups and the fleet, and the end of the faults.
type chaos struct {
	groups *store.Store[GroupSpec, GroupStatus]
	fleet  *Fleet
	rng    *rand.Rand
	length time.Duration // how long faults last
	note   func(format string, args ...any)

	done      chan struct{} // closed when the faults stop
	stoppedAt time.Time     // when they stopped; set before done is closed

	imageChanges, statusOverwrites atomic.Int64
}

// Run interferes once, 40% into the chaos, and stops the faults at its end.
func (c *chaos) Run(ctx context.Context) error {
	defer close(c.done)
	timer := time.NewTimer(c.length * 4 / 10)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return nil
	case <-timer.C:
	}
	if err := c.interfere(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	timer.Reset(c.length * 6 / 10)
	select {
	case <-ctx.Done():
		return nil
	case <-timer.C:
	}
	c.fleet.StopFaults()
	c.stoppedAt = time.Now()
	c.note("faults stopped: from now on nothing interferes, and the fleet behaves")
	return nil
}

// interfere plays the other actors, each on about a tenth of the groups:
// "ops" changes the image of some groups (new desired state, which the
// controller must roll out), a "dashboard" overwrites the status of others
// with a false Ready (a write to a field the controller owns, which it must
// undo from observation), and someone starts stray instances or stops
// instances by hand on the fleet.
func (c *chaos) interfere(ctx context.Context) error {
	list, err := c.groups.List(ctx, store.ListOptions{})
	if err != nil {
		return err
	}
	n := max(1, len(list.Items)/10)
	pick := func() []*Group {
		idx := c.rng.Perm(len(list.Items))[:n]
		out := make([]*Group, n)
		for i, j := range idx {
			out[i] = list.Items[j]
		}
		return out
	}
	var names []string
	for _, g := range pick() {
		if err := c.changeImage(ctx, g.Meta.Name); err != nil {
			return err
		}
		c.imageChanges.Add(1)
		names = append(names, g.Meta.Name)
	}
	c.note("ops changed .spec.image of %s", someNames(names))
	names = names[:0]
	for _, g := range pick() {
		if err := c.overwriteStatus(ctx, g.Meta.Name); err != nil {
			return err
		}
		c.statusOverwrites.Add(1)
		names = append(names, g.Meta.Name)
	}
	c.note("a dashboard overwrote the status of %s with Ready=True", someNames(names))
	strays, stops := pick(), pick()
	for i := range n {
		c.fleet.Interfere(strays[i].Meta.Name, strays[i].Spec.Image, true)
		c.fleet.Interfere(stops[i].Meta.Name, "", false)
	}
	c.note("someone started %d stray instances and stopped %d by hand", n, n)
	return nil
}

// changeImage bumps the version of a group's image, as manager "ops".
func (c *chaos) changeImage(ctx context.Context, name string) error {
	for {
		g, err := c.groups.Get(ctx, name)
		if err != nil {
			return err
		}
		base, _, _ := strings.Cut(g.Spec.Image, ":")
		g.Spec.Image = base + ":v2"
		_, err = c.groups.As("ops").Update(ctx, g)
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
}

// overwriteStatus claims the group is Ready with a made-up count, as
// manager "dashboard".
func (c *chaos) overwriteStatus(ctx context.Context, name string) error {
	for {
		g, err := c.groups.Get(ctx, name)
		if err != nil {
			return err
		}
		g.Status.Running = 99
		if _, err := conditions.Set(&g.Conditions, store.Condition{Type: conditions.Ready, Status: store.ConditionTrue,
			Reason: "LooksFine", Message: fmt.Sprintf("99/%d running (says the dashboard)", g.Spec.Replicas),
			ObservedGeneration: g.Meta.Generation}, time.Now()); err != nil {
			return err
		}
		_, err = c.groups.As("dashboard").UpdateStatus(ctx, g)
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
}

// someNames names a few groups, and counts the rest.
func someNames(names []string) string {
	const show = 5
	if len(names) <= show {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:show], ", "), len(names)-show)
}
