//go:build linux

package main

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// setManager is the manager the set controller writes as.
const setManager = "processsets"

// setController keeps a ProcessSet's Instances: name-0 … name-(N-1), each
// controlled by the set. It creates the missing ones, deletes those beyond
// N, and reports how many run. It never deletes Instances of a set that is
// gone: that is the garbage collector's job.
type setController struct {
	sets   *cache.Cache[ProcessSetSpec, ProcessSetStatus]
	setSt  *store.Store[ProcessSetSpec, ProcessSetStatus]
	insts  *cache.Cache[InstanceSpec, InstanceStatus]
	instSt *store.Store[InstanceSpec, InstanceStatus]
	log    func(string, ...any)
}

func (c *setController) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	set, ok := c.sets.Get(name)
	if !ok || set.Meta.DeletionRequested {
		return reconcile.Result{}, nil // the GC deletes its Instances
	}
	if err := set.Spec.validate(); err != nil {
		return reconcile.Result{}, reconcile.Terminal(err)
	}
	w := c.instSt.As(setManager)

	// The Instances this set controls, by UID: an Instance left over from
	// an earlier set of the same name is not ours (the GC removes it).
	have := map[string]*Instance{}
	for _, in := range c.insts.ByIndex(cache.IndexOwnerUID, set.Meta.UID) {
		for _, ref := range in.Meta.Owners {
			if ref.Controller && ref.UID == set.Meta.UID {
				have[in.Meta.Name] = in
			}
		}
	}

	running := 0
	for i := range set.Spec.Replicas {
		n := instanceName(name, i)
		if in, ok := have[n]; ok {
			if in.Status.PID > 0 && !in.Meta.DeletionRequested {
				running++
			}
			if !slices.Equal(in.Spec.Command, set.Spec.Command) {
				if err := c.setCommand(ctx, in, set.Spec.Command); err != nil {
					return reconcile.Result{}, err
				}
			}
			continue
		}
		in := &Instance{
			Meta: store.Meta{Name: n, Finalizers: []string{stopFinalizer},
				Owners: []store.OwnerRef{{Kind: setKind, Name: name, UID: set.Meta.UID, Controller: true}}},
			Spec: InstanceSpec{Set: name, Index: i, Command: set.Spec.Command},
		}
		rev, err := w.Create(ctx, in)
		if err := store.IgnoreAlreadyExists(err); err != nil {
			return reconcile.Result{}, err
		}
		if err == nil {
			reconcile.RecordWrite(ctx, rev)
			c.log("sets: %s wants %d: create Instance %s", name, set.Spec.Replicas, n)
		}
	}
	for n, in := range have {
		if in.Meta.DeletionRequested || wanted(name, n, set.Spec.Replicas) {
			continue
		}
		rev, err := w.Delete(ctx, n, store.WithUID(in.Meta.UID))
		if err := store.IgnoreNotFound(err); err != nil {
			return reconcile.Result{}, err
		}
		reconcile.RecordWrite(ctx, rev)
		c.log("sets: %s wants %d: delete Instance %s", name, set.Spec.Replicas, n)
	}

	if set.Status.Running != running {
		fresh, err := c.setSt.Get(ctx, name)
		if err != nil {
			return reconcile.Result{}, store.IgnoreNotFound(err)
		}
		fresh.Status.Running = running
		rev, err := c.setSt.As(setManager).UpdateStatus(ctx, fresh, store.WithObserved(set.Meta))
		if err != nil {
			return reconcile.Result{}, store.IgnoreNotFound(err)
		}
		reconcile.RecordWrite(ctx, rev)
	}
	return reconcile.Result{}, nil
}

// setCommand moves an Instance to the set's current command; the instance
// controller then replaces its process.
func (c *setController) setCommand(ctx context.Context, in *Instance, cmd []string) error {
	fresh, err := c.instSt.Get(ctx, in.Meta.Name)
	if err != nil {
		return store.IgnoreNotFound(err)
	}
	fresh.Spec.Command = cmd
	rev, err := c.instSt.As(setManager).Update(ctx, fresh)
	if err != nil {
		return err
	}
	reconcile.RecordWrite(ctx, rev)
	c.log("sets: Instance %s: command is now %q", in.Meta.Name, cmd)
	return nil
}

// wanted reports whether instance n is one of set's first replicas.
func wanted(set, n string, replicas int) bool {
	idx, ok := strings.CutPrefix(n, set+"-")
	if !ok {
		return false
	}
	i, err := strconv.Atoi(idx)
	return err == nil && i >= 0 && i < replicas && instanceName(set, i) == n
}
