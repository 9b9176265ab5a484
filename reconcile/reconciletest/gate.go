package reconciletest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/steady-go/steady/store"
)

// errDead is what a crashed process gets from its backend.
var errDead = fmt.Errorf("%w: reconciletest: the process has crashed", store.ErrUnavailable)

// verdict is what the scheduler decided about a write it released.
type verdict uint8

const (
	pass        verdict = iota
	conflict            // rewrite the object first, so the precondition fails
	unavailable         // fail without writing
	lostReply           // write, then report ErrUnavailable
	crashAfter          // write, then the process crashes
)

// gate holds a goroutine of the controller until the scheduler lets it go:
// the start of a reconcile, or a write.
type gate struct {
	p       *Process
	write   bool
	list    bool   // a listing (a cache's first listing, or a relist)
	elect   bool   // a campaign for leadership: the start of a term
	key     string // the reconcile's key, the written backend key, or the listed prefix
	object  string // the primary object the write is attributed to
	faulty  bool   // a reconciler write, open to write faults
	canConf bool   // the write has a revision precondition a rewrite can fail
	nth     int    // a reconciler write: which write of its reconcile (from 1)
	release chan released
}

// released is what a gate is released with: a write's verdict, or how long
// a reconcile takes (ReconcileTime spread by ±10% from the seed, so no two
// things fall on one virtual instant by the roundness of the numbers).
type released struct {
	v verdict
	d time.Duration
}

func compareGates(a, b *gate) int {
	if c := cmp.Compare(a.p.Incarnation, b.p.Incarnation); c != 0 {
		return c
	}
	if c := cmp.Compare(a.rank(), b.rank()); c != 0 {
		return c
	}
	return cmp.Compare(a.key, b.key)
}

func (g *gate) rank() int {
	switch {
	case g.list, g.elect:
		return 0
	case g.write:
		return 2
	}
	return 1
}

// wait registers g and blocks until the scheduler releases it, the process
// dies, or ctx ends.
func (w *world) wait(ctx context.Context, g *gate) (released, error) {
	g.release = make(chan released, 1)
	w.mu.Lock()
	w.gates = append(w.gates, g)
	w.mu.Unlock()
	w.poke()
	select {
	case r := <-g.release:
		return r, nil
	case <-g.p.dead:
		w.dropGate(g)
		return released{}, errDead
	case <-ctx.Done():
		w.dropGate(g)
		return released{}, context.Cause(ctx)
	}
}

func (w *world) dropGate(g *gate) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, o := range w.gates {
		if o == g {
			w.gates = append(w.gates[:i], w.gates[i+1:]...)
			return
		}
	}
}

// release lets g go, deciding first, for a write, whether it fails.
func (w *world) release(g *gate) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, o := range w.gates {
		if o == g {
			w.gates = append(w.gates[:i], w.gates[i+1:]...)
			break
		}
	}
	switch {
	case g.list || g.elect:
		w.traceLocked("%s (process %d)", g.key, g.p.Incarnation)
		g.release <- released{}
	case !g.write:
		w.releaseReconcileLocked(g)
	default:
		w.releaseWriteLocked(g)
	}
}

// releaseReconcileLocked lets a reconcile of g.key start, drawing how long
// it takes: the reconcile time ±10%.
func (w *world) releaseReconcileLocked(g *gate) {
	w.rep.Reconciles++
	if w.pastBound {
		c := w.counts(g.key)
		c.afterReconciles++
		if w.gone[g.key] {
			c.goneReconciles++
		}
	}
	d := w.reconcileTime
	if d > 0 {
		d += time.Duration(w.rng.Int64N(int64(d)/5+1)) - d/10
	}
	w.traceLocked("reconcile %s (process %d)", g.key, g.p.Incarnation)
	g.release <- released{d: d}
}

// releaseWriteLocked lets the write at g go, with the fault it draws, or
// the armed crash after it.
func (w *world) releaseWriteLocked(g *gate) {
	v := pass
	if g.faulty {
		w.maxNth = max(w.maxNth, g.nth)
	}
	switch {
	case w.faultsOn && w.armK > 0 && g.faulty && g.nth >= w.armK:
		v = crashAfter
		w.armK = 0
		w.traceLocked("crash strikes after write %d of the reconcile of %s", g.nth, g.object)
	case w.faultsOn && g.faulty:
		v = w.f.writeFault(w.rng.Float64(), g.canConf)
	}
	if v != pass && v != crashAfter {
		name := [...]string{conflict: "conflict", unavailable: "unavailable", lostReply: "committed-but-timed-out"}[v]
		w.rep.Faults[name]++
		w.disturbLocked(g.object)
		w.traceLocked("fault %s: write %s", name, g.key)
	}
	w.traceLocked("write %s (process %d)", g.key, g.p.Incarnation)
	g.release <- released{v: v}
}

// writeFault is the fault of a write for the draw u in [0, 1): the
// probabilities of a conflict (only where one can happen), an unavailable
// store and a lost reply take consecutive slices of [0, 1).
func (f Faults) writeFault(u float64, canConf bool) verdict {
	conf, unav := f.ConflictWrites, f.ConflictWrites+f.UnavailableWrites
	switch {
	case canConf && u < conf:
		return conflict
	case u >= conf && u < unav:
		return unavailable
	case u >= unav && u < unav+f.TimeoutWrites:
		return lostReply
	}
	return pass
}

// errInjected marks errors the harness made up.
var errInjected = errors.New("reconciletest: injected")
