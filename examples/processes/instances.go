//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// instanceManager is the manager the instance controller writes as.
const instanceManager = "instances"

// confirmAfter is how soon a pass that killed something looks again, to see
// the process gone (a SIGKILL is not instantaneous).
const confirmAfter = 50 * time.Millisecond

// instanceController makes every Instance a running OS process, and stops
// every process of the fleet that no live Instance wants. It is keyed by
// instance name; the keys come from the Instance cache and from /proc (so a
// process whose Instance is gone, or never existed, is still a key).
//
// It remembers nothing about processes: each pass scans /proc and compares.
// seen only feeds the timeline ("adopted").
type instanceController struct {
	cache *cache.Cache[InstanceSpec, InstanceStatus]
	st    *store.Store[InstanceSpec, InstanceStatus]
	os    *osProcs
	log   func(string, ...any)

	mu      sync.Mutex
	seen    map[string]int // instance → PID this incarnation has observed or started
	adopted int            // processes found running, not started by this incarnation
}

func (c *instanceController) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	all, err := c.os.scan()
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("scan /proc: %w", err)
	}
	var mine []proc
	for _, p := range all {
		if p.Name == name {
			mine = append(mine, p)
		}
	}
	obj, exists := c.cache.Get(name)
	want := exists && !obj.Meta.DeletionRequested

	// Keep at most one process: started for this very Instance (UID) with
	// its current command. Stop every other.
	keep := -1
	if want {
		hash := commandHash(obj.Spec.Command)
		keep = slices.IndexFunc(mine, func(p proc) bool { return p.UID == obj.Meta.UID && p.Hash == hash })
	}
	for i, p := range mine {
		if i == keep {
			continue
		}
		c.log("instances: stop %s pid %d: %s", name, p.PID, whyStop(obj, exists, p))
		if err := c.os.kill(p.PID); err != nil {
			return reconcile.Result{}, fmt.Errorf("kill pid %d: %w", p.PID, err)
		}
	}
	killed := len(mine) > 0 && (keep < 0 || len(mine) > 1)

	switch {
	case !exists:
		c.forget(name)
		if killed {
			return reconcile.Result{RequeueAfter: confirmAfter}, nil
		}
		return reconcile.Result{}, nil
	case obj.Meta.DeletionRequested:
		if len(mine) > 0 {
			return reconcile.Result{RequeueAfter: confirmAfter}, nil
		}
		return reconcile.Result{}, c.release(ctx, name)
	}

	var pid int
	if keep >= 0 {
		pid = mine[keep].PID
		if c.observe(name, pid) {
			c.mu.Lock()
			c.adopted++
			c.mu.Unlock()
			c.log("instances: adopt %s pid %d (running before this controller started)", name, pid)
		}
	} else {
		pid, err = c.os.start(name, obj.Meta.UID, obj.Spec.Command)
		if err != nil {
			return reconcile.Result{}, reconcile.Blocked("StartFailed", fmt.Errorf("start %q: %w", obj.Spec.Command, err))
		}
		c.observe(name, pid)
	}
	if obj.Status.PID != pid {
		if err := c.writePID(ctx, obj, pid); err != nil {
			return reconcile.Result{}, err
		}
	}
	if killed {
		return reconcile.Result{RequeueAfter: confirmAfter}, nil
	}
	return reconcile.Result{}, nil
}

// whyStop says why process p of an instance is stopped.
func whyStop(obj *Instance, exists bool, p proc) string {
	switch {
	case !exists:
		return "no such Instance"
	case obj.Meta.DeletionRequested:
		return "Instance is being deleted"
	case p.UID != obj.Meta.UID:
		return "started for an earlier Instance of that name"
	case p.Hash != commandHash(obj.Spec.Command):
		return "command changed"
	default:
		return "duplicate"
	}
}

// writePID records the observed PID in the status, for the generation the
// pass compared against.
func (c *instanceController) writePID(ctx context.Context, obj *Instance, pid int) error {
	fresh, err := c.st.Get(ctx, obj.Meta.Name)
	if err != nil {
		return store.IgnoreNotFound(err)
	}
	fresh.Status.PID = pid
	rev, err := c.st.As(instanceManager).UpdateStatus(ctx, fresh, store.WithObserved(obj.Meta))
	if err != nil {
		return store.IgnoreNotFound(err)
	}
	reconcile.RecordWrite(ctx, rev)
	return nil
}

// release removes the stop finalizer of an Instance whose process is gone,
// which lets its deletion complete.
func (c *instanceController) release(ctx context.Context, name string) error {
	fresh, err := c.st.Get(ctx, name)
	if err != nil {
		return store.IgnoreNotFound(err)
	}
	if !slices.Contains(fresh.Meta.Finalizers, stopFinalizer) {
		return nil
	}
	fresh.Meta.Finalizers = slices.DeleteFunc(slices.Clone(fresh.Meta.Finalizers), func(f string) bool { return f == stopFinalizer })
	if _, err := c.st.As(instanceManager).Update(ctx, fresh); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err // a conflict: the retry reads again
	}
	c.forget(name)
	c.log("instances: %s has no process left: finalizer removed", name)
	return nil
}

// observe records pid for name and reports whether this incarnation had not
// seen that process before.
func (c *instanceController) observe(name string, pid int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[name] == pid {
		return false
	}
	c.seen[name] = pid
	return true
}

func (c *instanceController) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.seen, name)
}

// processKeys lists the instance names of every process of the fleet, so
// resync and each new term reach processes that have no Instance.
func (c *instanceController) processKeys() iter.Seq[string] {
	return func(yield func(string) bool) {
		procs, err := c.os.scan()
		if err != nil {
			return // the next resync scans again
		}
		for _, p := range procs {
			if !yield(p.Name) {
				return
			}
		}
	}
}
