package reconciletest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// DiffConverged builds a Config.Converged predicate from the diff package:
// observe returns what the object asks for (want) and what is there (got),
// read from b, and the object has converged when diff.Diff(want, got,
// opts...) is empty. The error of a difference names its paths.
func DiffConverged[S, T any](observe func(ctx context.Context, b kv.Backend, obj *store.Object[S, T]) (want, got any, err error), opts ...diff.Option) func(context.Context, kv.Backend, *store.Object[S, T]) error {
	return func(ctx context.Context, b kv.Backend, obj *store.Object[S, T]) error {
		want, got, err := observe(ctx, b, obj)
		if err != nil {
			return err
		}
		if c := diff.Diff(want, got, opts...); !c.Empty() {
			return fmt.Errorf("desired and observed differ: %s", c.String())
		}
		return nil
	}
}

// ReadyConverged is the default convergence predicate: the object's Ready
// condition is True at its current generation.
func ReadyConverged[S, T any](_ context.Context, _ kv.Backend, obj *store.Object[S, T]) error {
	c, ok := conditions.Get(obj.Conditions, conditions.Ready)
	switch {
	case !ok:
		return errors.New("no Ready condition")
	case c.Status != store.ConditionTrue:
		return fmt.Errorf("Ready is %s (%s: %s)", c.Status, c.Reason, c.Message)
	case c.ObservedGeneration != obj.Meta.Generation:
		return fmt.Errorf("Ready observed generation %d, object is at %d", c.ObservedGeneration, obj.Meta.Generation)
	}
	return nil
}

// convergence checks the primary objects against Config.Converged and
// Config.Unreconcilable, reading the store without faults.
type convergence[S, T any] struct {
	cfg   Config[S, T]
	st    *store.Store[S, T]
	names []string
	w     *world
}

type unconverged struct {
	name string
	err  error
}

// unconverged lists the objects that have not converged; deleted objects
// and unreconcilable ones are not listed.
func (c *convergence[S, T]) unconverged(ctx context.Context) []unconverged {
	return c.check(ctx, c.names)
}

func (c *convergence[S, T]) check(ctx context.Context, names []string) []unconverged {
	pred := c.cfg.Converged
	if pred == nil {
		pred = ReadyConverged[S, T]
	}
	var out []unconverged
	for _, name := range names {
		obj, err := c.st.Get(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err == nil && c.cfg.Unreconcilable != nil && c.cfg.Unreconcilable(obj) {
			continue
		}
		if err == nil {
			err = pred(ctx, c.st.Backend(), obj)
		}
		if err == nil && conditions.IsTrue(obj.Conditions, conditions.Stalled) {
			s, _ := conditions.Get(obj.Conditions, conditions.Stalled)
			err = fmt.Errorf("converged but still Stalled (%s: %s)", s.Reason, s.Message)
		}
		if err != nil {
			out = append(out, unconverged{name, err})
		}
	}
	return out
}

// idleCheck reports whether every object has converged, looking again
// only at the objects written since it last looked (the check runs at every
// idle moment after the faults, and a user's predicate may be costly).
func (c *convergence[S, T]) idleCheck(ctx context.Context) bool {
	w := c.w
	w.mu.Lock()
	var look []string
	for _, name := range c.names {
		if n := w.counts(name); n.stale {
			n.stale = false
			look = append(look, name)
		}
	}
	w.mu.Unlock()
	bad := map[string]bool{}
	for _, u := range c.check(ctx, look) {
		bad[u.name] = true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	all := true
	for _, name := range c.names {
		n := w.counts(name)
		if slices.Contains(look, name) {
			n.ok = !bad[name]
		}
		all = all && n.ok
	}
	return all
}

// final checks convergence and Stalled, naming when the check is made. At
// the deadline it also marks the objects that converged, whose later
// writes the steady-state check counts.
func (c *convergence[S, T]) final(ctx context.Context, when string, deadline bool) {
	bad := map[string]bool{}
	for _, u := range c.unconverged(ctx) {
		bad[u.name] = true
		c.w.violateOn(HarmNotConverged, u.name, "object %s has not converged %s (%v after faults stopped): %v",
			u.name, when, time.Since(c.w.start)-c.w.rep.FaultsStopped, u.err)
	}
	if deadline {
		c.atDeadline(ctx, when, bad)
	}
	c.stalledChecks(ctx, when)
}

// atDeadline marks the objects that converged by the deadline (not in
// bad), and flags an object the test deleted that still exists.
func (c *convergence[S, T]) atDeadline(ctx context.Context, when string, bad map[string]bool) {
	c.w.mu.Lock()
	var gone []string
	for _, name := range c.names {
		c.w.counts(name).convergedAtBound = !bad[name]
		if c.w.gone[name] {
			gone = append(gone, name)
		}
	}
	c.w.mu.Unlock()
	for _, name := range gone {
		if obj, err := c.st.Get(ctx, name); err == nil {
			c.w.violateOn(HarmNotConverged, name, "object %s was deleted by the test but still exists %s (finalizers %v, deletion requested %v): a deletion must finish once faults stop",
				name, when, obj.Meta.Finalizers, obj.Meta.DeletionRequested)
		}
	}
}

// stalledChecks flags an object the config calls unreconcilable that is
// not Stalled, or is Stalled without a reason, message or time.
func (c *convergence[S, T]) stalledChecks(ctx context.Context, when string) {
	if c.cfg.Unreconcilable == nil {
		return
	}
	for _, name := range c.names {
		obj, err := c.st.Get(ctx, name)
		if err != nil || !c.cfg.Unreconcilable(obj) {
			continue
		}
		s, ok := conditions.Get(obj.Conditions, conditions.Stalled)
		switch {
		case !ok || s.Status != store.ConditionTrue:
			c.w.violateOn(HarmNotConverged, name, "object %s cannot be reconciled but is not Stalled %s", name, when)
		case s.Reason == "" || s.Message == "" || s.LastTransitionTime.IsZero():
			c.w.violateOn(HarmNotConverged, name, "object %s is Stalled without a reason, message or time: %+v", name, s)
		}
	}
}

// bounds checks the per-object counts: writes, none once an object has
// converged (past the bound), and at most WritesPerPass × (Passes +
// disturbances) over the schedule; and, after the bound, reconciles and
// errors (see reconcileBounds).
func (c *convergence[S, T]) bounds() {
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rep.WriteBound = map[string]int{}
	steady, retrying := c.cfg.reconcileBounds()
	w.rep.ReconcileBound = steady
	ctx := context.Background()
	for _, name := range c.names {
		n := w.objWrites[name]
		bound := c.cfg.WritesPerPass * (c.cfg.Passes + n.disturbed)
		w.rep.WriteBound[name] = bound
		if total := n.reconciler + n.loop; total > bound {
			w.violateLocked(HarmStorm, name, fmt.Sprintf(
				"object %s got %d writes (%d by the reconciler, %d by the Loop), more than its bound %d = %d per pass × (%d passes + %d disturbances)",
				name, total, n.reconciler, n.loop, bound, c.cfg.WritesPerPass, c.cfg.Passes, n.disturbed))
		}
		if n.goneReconciles > 0 {
			w.violateLocked(HarmStorm, name, fmt.Sprintf(
				"object %s was deleted by the test, and was still reconciled %d times after the bound (%d failed): a missing object must be done with, not retried (is not-found returned as an error?)",
				name, n.goneReconciles, n.afterErrors))
			continue
		}
		obj, err := c.st.Get(ctx, name)
		if err == nil && c.cfg.Unreconcilable != nil && c.cfg.Unreconcilable(obj) {
			if n.afterReconciles > retrying {
				w.violateLocked(HarmStorm, name, fmt.Sprintf(
					"object %s cannot be reconciled and was reconciled %d times after the bound, more than %d (backoff cap and resyncs allow): are its retries backed off?",
					name, n.afterReconciles, retrying))
			}
			continue // retries of an unreconcilable object may write and fail
		}
		if n.afterErrors > 0 {
			w.violateLocked(HarmStorm, name, fmt.Sprintf(
				"object %s failed %d of its %d reconciles after it converged: a converged object must reconcile cleanly",
				name, n.afterErrors, n.afterReconciles))
		} else if n.afterReconciles > steady {
			w.violateLocked(HarmStorm, name, fmt.Sprintf(
				"object %s was reconciled %d times after it converged, more than %d (a resync period each, with nothing to do): does it requeue itself forever?",
				name, n.afterReconciles, steady))
		}
		if n.afterBound > 0 {
			w.violateLocked(HarmStorm, name, fmt.Sprintf(
				"object %s got %d writes after it converged: a converged object must need none (does every pass rewrite something?)",
				name, n.afterBound))
		}
	}
}
