//go:build linux

package main

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/gc"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// resyncEvery is how often every key is compared again: what repairs a
// missed hint (a process killed while nobody watched its exit).
const resyncEvery = 500 * time.Millisecond

// controllers is one incarnation of the three Loops (sets, instances, gc)
// and their caches. Stopping it loses all of its memory; the store and the
// OS processes stay.
type controllers struct {
	inst   *instanceController
	cancel context.CancelFunc
	g      *errgroup.Group
}

// startControllers builds fresh caches and Loops over the stores and starts
// them. Stop them with stop.
func startControllers(ctx context.Context, sets *store.Store[ProcessSetSpec, ProcessSetStatus],
	insts *store.Store[InstanceSpec, InstanceStatus], procs *osProcs, log func(string, ...any)) (*controllers, error) {
	setCache := cache.New(sets)
	instCache := cache.New(insts)
	resync := reconcile.WithResync(resyncEvery, 0.1)

	sc := &setController{sets: setCache, setSt: sets, insts: instCache, instSt: insts, log: log}
	setLoop, err := reconcile.New("processsets", sc,
		reconcile.Sources(reconcile.FromStore(setCache, sets), reconcile.FromOwned(instCache, setKind)),
		reconcile.WithFieldManager(setManager), resync)
	if err != nil {
		return nil, err
	}
	ic := &instanceController{cache: instCache, st: insts, os: procs, log: log, seen: map[string]int{}}
	instLoop, err := reconcile.New("instances", ic,
		reconcile.Sources(reconcile.FromStore(instCache, insts),
			reconcile.Keys(ic.processKeys),      // processes without an Instance
			reconcile.FromChannel(procs.exits)), // a process exited
		reconcile.WithFieldManager(instanceManager), reconcile.WithWorkers(4), resync)
	if err != nil {
		return nil, err
	}
	gcLoop, err := gc.New("gc", instCache, insts, []gc.Owner{gc.OwnerKind(setCache, sets)}, resync)
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(ctx)
	for _, run := range []func(context.Context) error{setCache.Run, instCache.Run, setLoop.Run, instLoop.Run, gcLoop.Run} {
		g.Go(func() error { return run(gctx) })
	}
	return &controllers{inst: ic, cancel: cancel, g: g}, nil
}

// stop stops the Loops and caches and waits for them.
func (c *controllers) stop() error {
	c.cancel()
	err := c.g.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// adopted returns how many running processes this incarnation found and
// kept rather than started.
func (c *controllers) adopted() int {
	c.inst.mu.Lock()
	defer c.inst.mu.Unlock()
	return c.inst.adopted
}
